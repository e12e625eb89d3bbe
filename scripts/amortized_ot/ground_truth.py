"""Entropic OT ground truth (log-domain Sinkhorn) for every pair of every group of a task."""

import time

import numpy as np

from neurips26.amortized_ot.data import TASK_COST
from neurips26.amortized_ot.experiment import group_names, pack, unpack
from neurips26.amortized_ot.sinkhorn import solve_ground_truth_blocks
from neurips26.common.io import load_npz, save_npz
from neurips26.common.runtime import start_job

log = start_job(snakemake)
task, eps, solver = snakemake.wildcards.task, snakemake.params.eps, snakemake.params.solver
pairs = load_npz(snakemake.input.pairs)
groups = {}
for group in group_names(pairs):
    p = unpack(pairs, group)
    start = time.perf_counter()
    solution = solve_ground_truth_blocks(
        p["x"], p["y"], p["a"], p["b"], TASK_COST[task], eps, solver["tol"], solver["max_iter"]
    )
    seconds = time.perf_counter() - start
    bad = int((~solution.converged).sum())
    if bad:
        log.warning(
            "%s: %d of %d pairs did not converge; they are flagged and left out of fits and metrics",
            group,
            bad,
            len(solution.f),
        )
    log.info(
        "%s: %d pairs, %d iterations, %.2f s, max marginal error %.2e",
        group,
        len(solution.f),
        solution.n_iter,
        seconds,
        solution.marginal_error.max(),
    )
    groups[group] = dict(
        f=solution.f,
        g=solution.g,
        marginal_error=solution.marginal_error,
        converged=solution.converged,
        n_iter=np.array(solution.n_iter),
        seconds=np.array(seconds),
    )
save_npz(snakemake.output[0], **pack(groups))
