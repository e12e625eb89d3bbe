"""Fit RA-OT (least squares on Sinkhorn potentials) or OA-OT (entropic semi-dual) on training pairs."""

import time

import numpy as np

from neurips26.amortized_ot import method
from neurips26.amortized_ot.costs import cost_matrix
from neurips26.amortized_ot.data import TASK_COST
from neurips26.amortized_ot.experiment import unpack
from neurips26.amortized_ot.sliced import directions
from neurips26.common.io import load_npz, save_npz
from neurips26.common.runtime import start_job

params = snakemake.params
log = start_job(snakemake, seed=params.seed)
kind, n_proj = snakemake.wildcards.fitted, int(snakemake.wildcards.L)
pairs = unpack(load_npz(snakemake.input.pairs), "train")
truth = unpack(load_npz(snakemake.input.ground_truth), "train")
keep = truth["converged"]
x, a, y, b = (pairs[k][keep] for k in "xayb")

start = time.perf_counter()
theta = directions(n_proj, x.shape[2], params.seed)
centres, bandwidth = method.rbf_centres(x, params.n_basis, params.seed)
design = method.functional_design(x, a, y, b, theta, centres, bandwidth)
log.info("%s: %d pairs, design %s", kind, len(x), design.shape)
if kind == "ra":
    coef = method.fit_regression(design, truth["f"][keep], a, params.ridge)
    trace = np.array([])
else:
    cost = cost_matrix(x, y, TASK_COST[snakemake.wildcards.task])
    coef, trace = method.fit_dual(design, a, b, cost, params.eps, params.ridge, params.oa["max_iter"])
    log.info("OA-OT semi-dual: %.6f -> %.6f in %d evaluations", trace[0], trace[-1], len(trace))
seconds = time.perf_counter() - start
log.info("fitted %d coefficients in %.2f s", coef.size, seconds)
model = method.FittedModel(theta, centres, bandwidth, coef)
save_npz(snakemake.output[0], **model.as_dict(), objective=np.asarray(trace), fit_seconds=np.array(seconds))
