"""Predict the source potential f of every test pair, for every predictor of a task, timed per instance beside
cold Sinkhorn to the same marginal error."""

from pathlib import Path

from neurips26.amortized_ot.experiment import pack
from neurips26.amortized_ot.prediction import predict_runs
from neurips26.common.io import load_npz, save_npz
from neurips26.common.runtime import start_job

params, task = snakemake.params, snakemake.wildcards.task
log = start_job(snakemake, seed=params.seed)
models = {Path(path).stem: path for path in snakemake.input.models}
out = predict_runs(
    load_npz(snakemake.input.pairs),
    params.runs,
    models,
    task,
    params.eps,
    params.seed,
    params.evaluation["warm_tol"],
    params.evaluation["max_iter"],
    log,
)
save_npz(snakemake.output[0], **pack(out))
