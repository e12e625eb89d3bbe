"""Entropic OT ground truth (log-domain Sinkhorn) for every pair of a file."""

import time

import numpy as np

from neurips26.amortized_ot.costs import cost_matrix
from neurips26.amortized_ot.data import TASK_COST
from neurips26.amortized_ot.sinkhorn import solve_ground_truth
from neurips26.common.io import load_npz, save_npz
from neurips26.common.runtime import start_job

log = start_job(snakemake)
pairs = load_npz(snakemake.input[0])
eps, solver = snakemake.params.task["eps"], snakemake.params.solver
cost = cost_matrix(pairs["x"], pairs["y"], TASK_COST[snakemake.wildcards.task])
start = time.perf_counter()
solution = solve_ground_truth(pairs["a"], pairs["b"], cost, eps, solver["tol"], solver["max_iter"])
seconds = time.perf_counter() - start
bad = int((~solution.converged).sum())
if bad:
    log.warning("%d of %d pairs did not converge (marginal error > tolerance); they are flagged and left out of fits and metrics", bad, len(solution.converged))
log.info("%d pairs, %d iterations, %.2f s, max marginal error %.2e", len(solution.f), solution.n_iter, seconds, solution.marginal_error.max())
save_npz(
    snakemake.output[0], f=solution.f, g=solution.g, marginal_error=solution.marginal_error,
    converged=solution.converged, n_iter=np.array(solution.n_iter), seconds=np.array(seconds),
)
