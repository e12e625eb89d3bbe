"""Runs of one sampling rule on every instance and delta: R independent runs advance together (vectorised over
runs), each reading its own seeded reward tape; the GLR stopping rule answers whether V >= theta."""

import pandas as pd

from neurips26.common.io import write_parquet
from neurips26.common.runtime import job_provenance, start_job
from neurips26.thresh_mcts.simulation import simulate_rule

params = snakemake.params
log = start_job(snakemake, seed=params.seed)
runs = simulate_rule(
    pd.read_parquet(snakemake.input.instances),
    snakemake.wildcards.algo,
    params.deltas,
    params.runs,
    params.t_max,
    params.seed,
    conservative=params.conservative,
    log=log,
)
write_parquet(runs, snakemake.output[0], job_provenance(snakemake, params.seed))
