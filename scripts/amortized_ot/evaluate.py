"""Metrics of one predictor on the test pairs: RMSE, marginal and cost errors, warm-start Sinkhorn."""

import re
import time

import numpy as np
import torch

from neurips26.amortized_ot.costs import cost_matrix
from neurips26.amortized_ot.data import TASK_COST
from neurips26.amortized_ot.metrics import potential_metrics
from neurips26.amortized_ot.sinkhorn import iterations_to_tolerance
from neurips26.common.io import load_npz, write_parquet
from neurips26.common.runtime import job_provenance, start_job
from neurips26.common.tables import long_form

params, wildcards = snakemake.params, snakemake.wildcards
log = start_job(snakemake, seed=params.seed)
pairs, truth, pred = (load_npz(p) for p in (snakemake.input.pairs, snakemake.input.ground_truth, snakemake.input.prediction))
keep = truth["converged"]
x, a, y, b = (pairs[k][keep] for k in "xayb")
eps, evaluation = params.task["eps"], params.evaluation
cost = cost_matrix(x, y, TASK_COST[wildcards.task])
per_pair = potential_metrics(pred["f_hat"][keep], truth["f"][keep], truth["g"][keep], a, b, cost, eps)

a_t, b_t, iters = torch.as_tensor(a), torch.as_tensor(b), evaluation["max_iter"]
per_pair["warm_iters"] = iterations_to_tolerance(torch.as_tensor(pred["f_hat"][keep]), a_t, b_t, cost, eps, evaluation["warm_tol"], iters)
per_pair["cold_iters"] = iterations_to_tolerance(torch.zeros_like(a_t), a_t, b_t, cost, eps, evaluation["warm_tol"], iters)
# how long cold Sinkhorn needs to reach the marginal error the prediction has
start = time.perf_counter()
iterations_to_tolerance(torch.zeros_like(a_t), a_t, b_t, cost, eps, torch.as_tensor(per_pair["marginal_error"]), iters)
cold_match = (time.perf_counter() - start) / len(x)

name = re.match(r"(ra|oa|sliced_mean|metaot)(?:_L(\d+))?", wildcards.predictor)
frame = long_form(
    per_pair,
    {"t_pred_ms": 1e3 * float(pred["seconds_per_instance"]), "t_cold_match_ms": 1e3 * cold_match},
    task=wildcards.task, method=name.group(1), projections=int(name.group(2) or 0), res=int(wildcards.res),
    n_atoms=x.shape[1], seed=params.seed,
)
log.info("median rmse_f %.4g, warm %.0f vs cold %.0f iterations", np.median(per_pair["rmse_f"]), np.median(per_pair["warm_iters"]), np.median(per_pair["cold_iters"]))
write_parquet(frame, snakemake.output[0], job_provenance(snakemake, params.seed))
