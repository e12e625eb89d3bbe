"""Metrics of every predictor and plan baseline of a task on its test groups."""

from neurips26.amortized_ot.evaluation import evaluate_task
from neurips26.common.io import load_npz, write_parquet
from neurips26.common.runtime import job_provenance, start_job

params, inp = snakemake.params, snakemake.input
log = start_job(snakemake, seed=params.seed)
table = evaluate_task(
    load_npz(inp.pairs),
    load_npz(inp.ground_truth),
    load_npz(inp.predictions),
    params.runs,
    dict(params.groups),
    snakemake.wildcards.task,
    params.eps,
    params.evaluation["warm_tol"],
    params.evaluation["max_iter"],
    params.projections,
    params.seed,
    log,
)
write_parquet(table, snakemake.output[0], job_provenance(snakemake, params.seed))
