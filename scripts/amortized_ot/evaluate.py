"""Metrics of every predictor and plan baseline of a task on its test groups."""

import numpy as np
import pandas as pd

from neurips26.amortized_ot.costs import cost_matrix
from neurips26.amortized_ot.data import TASK_COST
from neurips26.amortized_ot.evaluation import cold_start, evaluate_potential, plan_baselines
from neurips26.amortized_ot.experiment import parse_name, unpack
from neurips26.amortized_ot.sliced import directions
from neurips26.common.io import load_npz, write_parquet
from neurips26.common.runtime import job_provenance, start_job
from neurips26.common.tables import long_form

params, task = snakemake.params, snakemake.wildcards.task
log = start_job(snakemake, seed=params.seed)
pairs, truth, preds = (
    load_npz(p) for p in (snakemake.input.pairs, snakemake.input.ground_truth, snakemake.input.predictions)
)
eps, evaluation = params.eps, params.evaluation
frames, cold = [], {}


def test_group(group):
    p, t = unpack(pairs, group), unpack(truth, group)
    keep = np.flatnonzero(t["converged"])
    x, a, y, b = (p[k][keep] for k in "xayb")
    return keep, x, a, y, b, t["f"][keep], t["g"][keep]


for name, group in params.runs:
    keep, x, a, y, b, f_star, g_star = test_group(group)
    pred = unpack(preds, f"{name}.{group}")
    cost = cost_matrix(x, y, TASK_COST[task])
    if group not in cold:  # one cold-start run per group, shared by every predictor
        cold[group] = cold_start(a, b, cost, eps, evaluation["warm_tol"], evaluation["max_iter"])
    per_pair, cold_match = evaluate_potential(
        pred["f_hat"][keep], f_star, g_star, a, b, cost, eps, evaluation["warm_tol"], cold[group]
    )
    method, L, fit_seed = parse_name(name, params.seed)
    log.info(
        "%s on %s: median rmse_f %.4g, warm %.0f vs cold %.0f iterations",
        name,
        group,
        np.median(per_pair["rmse_f"]),
        np.median(per_pair["warm_iters"]),
        np.median(per_pair["cold_iters"]),
    )
    frames.append(
        long_form(
            per_pair,
            {"t_pred_ms": 1e3 * float(pred["seconds_per_instance"]), "t_cold_match_ms": 1e3 * cold_match},
            item_index=keep,
            task=task,
            method=method,
            projections=L,
            res=params.groups[group],
            n_atoms=x.shape[1],
            seed=fit_seed,
        )
    )

keep, x, a, y, b, f_star, g_star = test_group("test")
theta = directions(params.projections, x.shape[2], params.seed)
baselines = plan_baselines(
    x,
    a,
    y,
    b,
    f_star,
    g_star,
    lambda: cost_matrix(x, y, TASK_COST[task]),
    eps,
    theta,
    evaluation["warm_tol"],
    cold["test"],
)
for name, (per_pair, seconds) in baselines.items():
    log.info("%s: %.3f ms per instance", name, 1e3 * seconds)
    frames.append(
        long_form(
            per_pair,
            {"t_pred_ms": 1e3 * seconds},
            item_index=keep,
            task=task,
            method=name,
            projections=params.projections if name in ("min_swgg", "expected_sliced") else 0,
            res=params.groups["test"],
            n_atoms=x.shape[1],
            seed=params.seed,
        )
    )
write_parquet(pd.concat(frames, ignore_index=True), snakemake.output[0], job_provenance(snakemake, params.seed))
