"""Fit RA-OT (least squares on Sinkhorn potentials) or OA-OT (entropic semi-dual) on training pairs."""

import time

import numpy as np

from neurips26.amortized_ot.data import TASK_COST
from neurips26.amortized_ot.experiment import unpack
from neurips26.amortized_ot.method import fit_model
from neurips26.common.io import load_npz, save_npz
from neurips26.common.runtime import start_job

params, wc = snakemake.params, snakemake.wildcards
log = start_job(snakemake, seed=params.seed)
pairs = unpack(load_npz(snakemake.input.pairs), "train")
truth = unpack(load_npz(snakemake.input.ground_truth), "train")
keep = truth["converged"]  # pairs whose ground truth did not converge are left out
x, a, y, b = (pairs[k][keep] for k in "xayb")

start = time.perf_counter()
oa = params.oa or {}
model, trace = fit_model(
    wc.fitted,
    x,
    a,
    y,
    b,
    truth["f"][keep],
    TASK_COST[wc.task],
    int(wc.L),
    params.n_basis,
    params.ridge,
    params.seed,
    params.eps,
    oa.get("max_iter"),
    log,
)
seconds = time.perf_counter() - start
log.info("fitted %d coefficients in %.2f s", model.coef.size, seconds)
save_npz(snakemake.output[0], **model.as_dict(), objective=trace, fit_seconds=np.array(seconds))
