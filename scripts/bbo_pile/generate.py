"""Trajectories of one optimizer on every black box of one family (all splits), one run per seed: the long table
(bb_id, family, dim, optimizer, seed, trial, x, y, valid) and the generation throughput. A black box that
returns NaN/inf is recorded (valid = False), not fatal."""

import pandas as pd

from neurips26.bbo_pile.catalog import specs_from_catalog
from neurips26.bbo_pile.optimizers import generate_trajectories
from neurips26.common.io import write_parquet
from neurips26.common.runtime import job_provenance, start_job

params, wc, out = snakemake.params, snakemake.wildcards, snakemake.output
log = start_job(snakemake, seed=params.seed)
specs = [s for s in specs_from_catalog(pd.read_parquet(snakemake.input.blackboxes)) if s.family == wc.family]
table, throughput = generate_trajectories(specs, wc.optimizer, params.seeds, params.budget, params.seed, log.info)
log.info(
    "%d trajectories, %d trials (%d with a non-finite value) in %.1f s",
    throughput["trajectories"],
    len(table),
    throughput["invalid"],
    throughput["seconds"],
)
prov = job_provenance(snakemake, params.seed)
write_parquet(table, out.trajectories, prov)
write_parquet(pd.DataFrame([{"family": wc.family, "optimizer": wc.optimizer, **throughput}]), out.throughput, prov)
