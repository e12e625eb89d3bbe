"""Shapley's handling of redundancy: attributions with and without an exact copy of one feature, on every seed's
data set of the redundancy scenario."""

from neurips26.common.io import write_parquet
from neurips26.common.runtime import job_provenance, start_job
from neurips26.fairness_audit.artifacts import load_audit_data
from neurips26.fairness_audit.measure_validation import redundancy_table

params = snakemake.params
seed = params.seed
log = start_job(snakemake, seed=seed)
datasets = (load_audit_data(d, m)[0] for d, m in zip(snakemake.input.data, snakemake.input.meta))
table = redundancy_table(datasets, params.player, params.measures, params.estimator, seed, log)
write_parquet(table, snakemake.output[0], job_provenance(snakemake, seed))
