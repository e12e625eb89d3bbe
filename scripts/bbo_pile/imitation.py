"""Imitation (claim B2): the held-out boxes' trajectories of each true optimizer, re-encoded with each conditioning
token, scored by every model seed of the run named in `model_seeds` (mean NLL per trial value token): per
trajectory and seed, and pooled per (true, cond) over the seeds."""

import pandas as pd

from neurips26.bbo_pile.artifacts import load_decoder
from neurips26.bbo_pile.imitation import seed_imitation_tables
from neurips26.bbo_pile.vocabulary import Vocabulary
from neurips26.common.io import write_parquet
from neurips26.common.loop import job_device
from neurips26.common.runtime import job_provenance, start_job

params, inp = snakemake.params, snakemake.input
log = start_job(snakemake, seed=params.seed)
vocab = Vocabulary.from_json(open(inp.vocab).read())
# one checkpoint per model seed, in the order of params.model_seeds (a batched group's file holds every seed)
models = {k: load_decoder(path, job_device(), seed=k) for k, path in zip(params.model_seeds, inp.models, strict=True)}
boxes, trials = (
    pd.read_parquet(inp.blackboxes),
    pd.concat([pd.read_parquet(p) for p in inp.trajectories], ignore_index=True),
)
table, per_trajectory = seed_imitation_tables(models, vocab, boxes, trials, params.optimizers)
for row in table.itertuples():
    log.info("true %s, conditioned on %s: NLL %.4f over %d tokens", row.true_algo, row.cond_algo, row.nll, row.n_tokens)
prov = job_provenance(snakemake, params.seed)
write_parquet(table.assign(run=params.run), snakemake.output.pooled, prov)
write_parquet(per_trajectory.assign(run=params.run), snakemake.output.trajectories, prov)
