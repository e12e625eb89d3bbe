"""Optimizer step time of every method relative to the baseline, side by side on the same model (both sweeps)."""

from neurips26.common.io import write_parquet
from neurips26.common.runtime import job_provenance, start_job
from neurips26.symm_optim.step_time import step_time_table

params = snakemake.params
log = start_job(snakemake, seed=0)
table = step_time_table(params.config, params.repeats)
for r in table.itertuples():
    log.info("%s %s %s: %.2f ms, %.2f x baseline", r.arch, r.method, r.part, 1e3 * r.median_s, r.ratio_to_baseline)
write_parquet(table, snakemake.output[0], job_provenance(snakemake, 0))
