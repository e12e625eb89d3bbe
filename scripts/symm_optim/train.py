"""Train one run of a sweep ({arch}/{method}_lr{i}_s{seed}): per-step losses, the spectra of the vocabulary-indexed
matrices and router, and a one-row summary (final validation loss, divergence, spikes, optimizer time)."""

import numpy as np
import pandas as pd

from neurips26.common.io import write_parquet
from neurips26.common.runtime import job_provenance, start_job
from neurips26.common.token_files import read_tokens
from neurips26.symm_optim import experiment, summary
from neurips26.symm_optim.model import LM, n_parameters
from neurips26.symm_optim.training import train_lm

cfg, w = snakemake.params.config, snakemake.wildcards
seed = int(w.seed)
log = start_job(snakemake, seed=seed)
run = next(r for r in experiment.runs(cfg, w.arch) if r["method"] == w.method and r["lr_index"] == int(w.lr_index)
           and r["seed"] == seed)
train = np.concatenate([read_tokens(p) for p in snakemake.input.train])
val = np.concatenate([read_tokens(p) for p in snakemake.input.val])
assignment = experiment.assignment(cfg, w.arch, w.method, int(w.lr_index))
model = LM(experiment.model_config(cfg, w.arch, seed))
log.info("%s: %d training / %d validation tokens; parameters %s; optimizers %s", run["name"], len(train), len(val),
         n_parameters(model), assignment)
result = train_lm(model, assignment, train, val, experiment.train_settings(cfg, seed),
                  spectrum_steps=tuple(cfg["spectrum_steps"]), log=log.info)
counts = n_parameters(model)
row = {**summary.run_row(run, result, assignment), "parameters": counts["total"],
       "parameters_vocab": counts["embedding"] + counts["lm_head"]}
log.info("%s: final validation loss %.4f, diverged %s (step %s, %s), %d spikes, %.1f s of %.1f s in optimizer steps",
         run["name"], result.final_val_loss, result.diverged, result.diverged_step, result.diverged_kind,
         row["spikes"], result.optimizer_seconds, result.train_seconds)
keys = {k: run[k] for k in ("arch", "method", "lr_index", "seed")}
prov = job_provenance(snakemake, seed)
write_parquet(pd.DataFrame(result.steps).assign(**keys), snakemake.output.steps, prov)
spectra = pd.DataFrame(result.spectra, columns=["step", "kind", "matrix", "index", "sigma"])
write_parquet(spectra.assign(**keys), snakemake.output.spectra, prov)
write_parquet(pd.DataFrame([row]), snakemake.output.summary, prov)
