"""The reference values of every held-out black box for normalised regret: the best and the median of
`reference_samples` uniform random points (seeded per box); the tables take the minimum of this and of every value
any method evaluated on the box."""

import time

import pandas as pd

from neurips26.bbo_pile.blackboxes import random_reference
from neurips26.bbo_pile.catalog import specs_from_catalog
from neurips26.common.io import write_parquet
from neurips26.common.runtime import job_provenance, start_job

params = snakemake.params
log = start_job(snakemake, seed=params.seed)
start = time.perf_counter()
specs = specs_from_catalog(pd.read_parquet(snakemake.input.blackboxes), "eval")
table = random_reference(specs, params.reference_samples, params.seed)
log.info(
    "%d held-out boxes x %d random samples in %.1f s", len(table), params.reference_samples, time.perf_counter() - start
)
write_parquet(table, snakemake.output[0], job_provenance(snakemake, params.seed))
