"""Plan-only baselines on the test pairs: min-SWGG, expected sliced, exact OT; cold Sinkhorn timing."""

import time

import numpy as np
import pandas as pd
import torch

from neurips26.amortized_ot.baselines import exact_plans, expected_sliced_plans, min_swgg_plans
from neurips26.amortized_ot.costs import cost_matrix
from neurips26.amortized_ot.data import TASK_COST
from neurips26.amortized_ot.metrics import plan_metrics
from neurips26.amortized_ot.sinkhorn import iterations_to_tolerance
from neurips26.amortized_ot.sliced import directions
from neurips26.common.io import load_npz, write_parquet
from neurips26.common.runtime import job_provenance, start_job
from neurips26.common.tables import long_form

params, wildcards = snakemake.params, snakemake.wildcards
log = start_job(snakemake, seed=params.seed)
pairs, truth = load_npz(snakemake.input.pairs), load_npz(snakemake.input.ground_truth)
keep = truth["converged"]
x, a, y, b = (pairs[k][keep] for k in "xayb")
eps, L = params.task["eps"], params.projections
theta = directions(L, x.shape[2], params.seed)
frames = []


def record(name, solve, projections):
    start = time.perf_counter()
    cost = cost_matrix(x, y, TASK_COST[wildcards.task])
    pi = solve(cost)
    seconds = (time.perf_counter() - start) / len(x)
    per_pair = plan_metrics(pi, truth["f"][keep], truth["g"][keep], a, b, cost, eps)
    log.info("%s: median cost error %.4g, %.3f ms per instance", name, np.median(per_pair["cost_rel_error"]), 1e3 * seconds)
    frames.append(long_form(
        per_pair, {"t_pred_ms": 1e3 * seconds}, task=wildcards.task, method=name, projections=projections,
        res=int(wildcards.res), n_atoms=x.shape[1], seed=params.seed,
    ))


record("min_swgg", lambda cost: min_swgg_plans(x, a, y, b, theta), L)
record("expected_sliced", lambda cost: expected_sliced_plans(x, a, y, b, theta), L)
record("exact_emd", lambda cost: exact_plans(a, b, cost.numpy()), 0)

cost = cost_matrix(x, y, TASK_COST[wildcards.task])
a_t, b_t = torch.as_tensor(a), torch.as_tensor(b)
start = time.perf_counter()
iters = iterations_to_tolerance(torch.zeros_like(a_t), a_t, b_t, cost, eps, params.evaluation["warm_tol"], params.evaluation["max_iter"])
seconds = (time.perf_counter() - start) / len(x)
frames.append(long_form(
    {"cold_iters": iters}, {"t_pred_ms": 1e3 * seconds}, task=wildcards.task, method="sinkhorn_cold", projections=0,
    res=int(wildcards.res), n_atoms=x.shape[1], seed=params.seed,
))
write_parquet(pd.concat(frames, ignore_index=True), snakemake.output[0], job_provenance(snakemake, params.seed))
