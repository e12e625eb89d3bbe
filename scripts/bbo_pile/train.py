"""Train one run's decoders (a size x token-budget run) on the packed training rows, evaluating the validation loss
on the held-out boxes' trajectories: the scale's seed (a scaling run), or a group of model seeds trained together
as a batched ensemble (claim B3's run at smoke and quick scale; one seed per job at paper scale). Writes the models
(one file; each seed's weights) and one row per evaluation and seed (`model_seed`, tokens, FLOPs = 6 N D, loss).
Training runs in the common loop on the job's device, checkpointing beside the model so that a killed or
preempted job resumes where it stopped."""

import numpy as np
import pandas as pd

from neurips26.bbo_pile import experiment
from neurips26.bbo_pile.artifacts import save_decoders
from neurips26.bbo_pile.model import n_parameters
from neurips26.bbo_pile.training import train_decoders
from neurips26.bbo_pile.vocabulary import Vocabulary
from neurips26.common import loop
from neurips26.common.checkpoint import fingerprint
from neurips26.common.io import write_parquet
from neurips26.common.runtime import job_provenance, start_job

params, inp, out, run = snakemake.params, snakemake.input, snakemake.output, snakemake.wildcards.run
seeds = [int(k) for k in params.seeds]
log = start_job(snakemake, seed=seeds[0])
vocab = Vocabulary.from_json(open(inp.vocab).read())
configs = [experiment.decoder_config(params.model, params.context, k, vocab.size) for k in seeds]
settings = [experiment.train_settings(params.training, params.run["tokens"], k) for k in seeds]
device = loop.job_device()  # a GPU at paper scale (profiles/slurm)
train, valid = np.load(inp.train), np.load(inp.valid)
log.info(
    "%s seeds %s: %s, %d training rows, %d validation rows, %s", run, seeds, configs[0], len(train), len(valid), device
)
loop_settings = loop.LoopSettings(
    checkpoint=loop.checkpoint_path(out.model),
    fingerprint=fingerprint(dict(snakemake.params), list(snakemake.input)),
    name=f"train {run} seeds {seeds}",
)
models, member_rows = train_decoders(
    train, valid, configs, settings, pad=vocab.pad, log=log.info, device=device, loop_settings=loop_settings
)
n = n_parameters(models[0])
for k, rows in zip(seeds, member_rows):
    log.info("%s seed %d: %d non-embedding parameters, final validation loss %.4f", run, k, n, rows[-1]["val_loss"])
save_decoders(out.model, models, configs)
table = pd.concat([pd.DataFrame(rows).assign(model_seed=k) for k, rows in zip(seeds, member_rows)], ignore_index=True)
write_parquet(
    table.assign(run=run, model=params.run["model"], parameters=n, seeds_in_job=len(seeds)),
    out.log_table,
    job_provenance(snakemake, seeds[0] if len(seeds) == 1 else None),
)
loop.finish(loop_settings)
