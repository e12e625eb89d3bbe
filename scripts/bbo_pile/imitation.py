"""Imitation: the held-out boxes' trajectories of each true optimizer, re-encoded with each conditioning token,
scored by the evaluation model (mean NLL per trial value token): per trajectory, and pooled per (true, cond)."""

import pandas as pd

from neurips26.bbo_pile.artifacts import load_decoder
from neurips26.bbo_pile.imitation import imitation_tables
from neurips26.bbo_pile.vocabulary import Vocabulary
from neurips26.common.io import write_parquet
from neurips26.common.loop import job_device
from neurips26.common.runtime import job_provenance, start_job

params, inp = snakemake.params, snakemake.input
log = start_job(snakemake, seed=params.seed)
vocab = Vocabulary.from_json(open(inp.vocab).read())
model = load_decoder(inp.model, job_device(), seed=params.seed)  # a GPU at paper scale (profiles/slurm)
boxes, trials = (
    pd.read_parquet(inp.blackboxes),
    pd.concat([pd.read_parquet(p) for p in inp.trajectories], ignore_index=True),
)
table, per_trajectory = imitation_tables(model, vocab, boxes, trials, params.optimizers)
for row in table.itertuples():
    log.info("true %s, conditioned on %s: NLL %.4f over %d tokens", row.true_algo, row.cond_algo, row.nll, row.n_tokens)
prov = job_provenance(snakemake, params.seed)
write_parquet(table.assign(run=params.run), snakemake.output.pooled, prov)
write_parquet(per_trajectory.assign(run=params.run), snakemake.output.trajectories, prov)
