"""Optimizer step time of every method relative to the baseline, side by side on the same model (both sweeps), on
the job's device (a GPU where the job was given one, the device the training jobs step on)."""

from neurips26.common.io import write_parquet
from neurips26.common.loop import job_device
from neurips26.common.runtime import job_provenance, start_job
from neurips26.symm_optim.step_time import step_time_table

params = snakemake.params
log = start_job(snakemake, seed=0)
device = job_device()
log.info("timing on %s", device)
table = step_time_table(params.config, params.repeats, device, params.warmup)
for r in table.itertuples():
    log.info("%s %s %s: %.2f ms, %.2f x baseline", r.arch, r.method, r.part, 1e3 * r.median_s, r.ratio_to_baseline)
write_parquet(table, snakemake.output[0], job_provenance(snakemake, 0))
