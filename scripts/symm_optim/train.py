"""Train one run of a sweep ({arch}/{method}_lr{i}_s{seed}): per-step losses, the spectra of the vocabulary-indexed
matrices and router, and a one-row summary (final validation loss, divergence, spikes, optimizer time). Training
runs in the common loop on the job's device (a GPU at paper scale), checkpointing beside the summary so that a
killed or preempted job resumes where it stopped."""

import numpy as np
import pandas as pd

from neurips26.common import loop
from neurips26.common.checkpoint import fingerprint
from neurips26.common.io import write_parquet
from neurips26.common.runtime import job_provenance, start_job
from neurips26.common.token_files import read_tokens
from neurips26.symm_optim import summary
from neurips26.symm_optim.model import LM, LMConfig, n_parameters
from neurips26.symm_optim.training import TrainSettings, train_lm

p = snakemake.params.run
run, assignment, seed = p["run"], p["assignment"], p["run"]["seed"]
log = start_job(snakemake, seed=seed)
train = np.concatenate([read_tokens(path) for path in snakemake.input.train])
val = np.concatenate([read_tokens(path) for path in snakemake.input.val])
model = LM(LMConfig(**p["model"]))
log.info(
    "%s: %d training / %d validation tokens; parameters %s; optimizers %s",
    run["name"],
    len(train),
    len(val),
    n_parameters(model),
    assignment,
)
loop_settings = loop.LoopSettings(
    checkpoint=loop.checkpoint_path(snakemake.output.summary),
    fingerprint=fingerprint(dict(snakemake.params), list(snakemake.input)),
    name=f"train {run['name']}",
)
result = train_lm(
    model,
    assignment,
    train,
    val,
    TrainSettings(**p["train"]),
    spectrum_steps=tuple(p["spectrum_steps"]),
    log=log.info,
    loop_settings=loop_settings,
    device=loop.job_device(),
)
counts = n_parameters(model)
row = {
    **summary.run_row(run, result, assignment),
    "parameters": counts["total"],
    "parameters_vocab": counts["embedding"] + counts["lm_head"],
}
log.info(
    "%s: final validation loss %.4f, diverged %s (step %s, %s), %d spikes, %.1f s of %.1f s in optimizer steps",
    run["name"],
    result.final_val_loss,
    result.diverged,
    result.diverged_step,
    result.diverged_kind,
    row["spikes"],
    result.optimizer_seconds,
    result.train_seconds,
)
keys = {k: run[k] for k in ("arch", "method", "lr_index", "seed")}
prov = job_provenance(snakemake, seed)
write_parquet(pd.DataFrame(result.steps).assign(**keys), snakemake.output.steps, prov)
spectra = pd.DataFrame(result.spectra, columns=["step", "kind", "matrix", "index", "sigma"])
write_parquet(spectra.assign(**keys), snakemake.output.spectra, prov)
write_parquet(pd.DataFrame([row]), snakemake.output.summary, prov)
loop.finish(loop_settings)
