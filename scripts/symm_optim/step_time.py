"""Optimizer step time of every method relative to the baseline, side by side on the same model (both sweeps)."""

import pandas as pd

from neurips26.common.io import write_parquet
from neurips26.common.runtime import job_provenance, start_job
from neurips26.symm_optim import experiment
from neurips26.symm_optim.step_time import step_times

params = snakemake.params
log = start_job(snakemake, seed=0)
rows = []
for arch in experiment.ARCHS:
    rows += step_times(params.config, arch, params.repeats)
table = pd.DataFrame(rows)
for r in table.itertuples():
    log.info("%s %s %s: %.2f ms, %.2f x baseline", r.arch, r.method, r.part, 1e3 * r.median_s, r.ratio_to_baseline)
write_parquet(table, snakemake.output[0], job_provenance(snakemake, 0))
