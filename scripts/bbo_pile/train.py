"""Train one decoder (a size x token-budget run) on the packed training rows, evaluating the validation loss on
the held-out boxes' trajectories; writes the model and one row per evaluation (tokens, FLOPs = 6 N D, loss).
Training runs in the common loop on the job's device, checkpointing beside the model so that a killed or
preempted job resumes where it stopped."""

import numpy as np
import pandas as pd

from neurips26.bbo_pile import experiment
from neurips26.bbo_pile.artifacts import save_decoder
from neurips26.bbo_pile.model import n_parameters
from neurips26.bbo_pile.training import train_decoder
from neurips26.bbo_pile.vocabulary import Vocabulary
from neurips26.common import loop
from neurips26.common.checkpoint import fingerprint
from neurips26.common.io import write_parquet
from neurips26.common.runtime import job_provenance, start_job

params, inp, out, run = snakemake.params, snakemake.input, snakemake.output, snakemake.wildcards.run
log = start_job(snakemake, seed=params.seed)
vocab = Vocabulary.from_json(open(inp.vocab).read())
config = experiment.decoder_config(params.model, params.context, params.seed, vocab.size)
settings = experiment.train_settings(params.training, params.run["tokens"], params.seed)
device = loop.job_device()  # a GPU at paper scale (profiles/slurm)
train, valid = np.load(inp.train), np.load(inp.valid)
log.info("%s: %s, %d training rows, %d validation rows, %s", run, config, len(train), len(valid), device)
loop_settings = loop.LoopSettings(
    checkpoint=loop.checkpoint_path(out.model),
    fingerprint=fingerprint(dict(snakemake.params), list(snakemake.input)),
    name=f"train {run}",
)
model, rows = train_decoder(
    train, valid, config, settings, pad=vocab.pad, log=log.info, device=device, loop_settings=loop_settings
)
n = n_parameters(model)
log.info("%s: %d non-embedding parameters, final validation loss %.4f", run, n, rows[-1]["val_loss"])
save_decoder(out.model, model, config)
write_parquet(
    pd.DataFrame(rows).assign(run=run, model=params.run["model"], parameters=n),
    out.log_table,
    job_provenance(snakemake, params.seed),
)
loop.finish(loop_settings)
