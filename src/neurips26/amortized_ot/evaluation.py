"""Evaluation of predictors and plan baselines on one group of test pairs."""

from __future__ import annotations

from typing import Callable

import numpy as np
import torch

from neurips26.amortized_ot.baselines import exact_plans, expected_sliced_plans, min_swgg_plans
from neurips26.amortized_ot.metrics import plan_metrics, potential_metrics
from neurips26.amortized_ot.sinkhorn import iterations_to_tolerance
from neurips26.common.timing import timed


def evaluate_potential(
    f_hat: np.ndarray, f_star: np.ndarray, g_star: np.ndarray, a: np.ndarray, b: np.ndarray,
    cost: torch.Tensor, eps: float, warm_tol: float, max_iter: int,
) -> tuple[dict[str, np.ndarray], float]:
    """Per-pair metrics of a predicted f, warm vs cold Sinkhorn iterations, and the time per instance
    cold Sinkhorn needs to reach the marginal error of the prediction (the amortization trade-off)."""
    per_pair = potential_metrics(f_hat, f_star, g_star, a, b, cost, eps)
    a_t, b_t = torch.as_tensor(a), torch.as_tensor(b)
    zeros = torch.zeros_like(a_t)
    per_pair["warm_iters"] = iterations_to_tolerance(torch.as_tensor(f_hat), a_t, b_t, cost, eps, warm_tol, max_iter)
    per_pair["cold_iters"] = iterations_to_tolerance(zeros, a_t, b_t, cost, eps, warm_tol, max_iter)
    matched = torch.as_tensor(per_pair["marginal_error"])
    _, seconds = timed(lambda: iterations_to_tolerance(zeros, a_t, b_t, cost, eps, matched, max_iter), 1, False)
    return per_pair, seconds / len(a)


def plan_baselines(
    x: np.ndarray, a: np.ndarray, y: np.ndarray, b: np.ndarray, f_star: np.ndarray, g_star: np.ndarray,
    cost_fn: Callable[[], torch.Tensor], eps: float, theta: np.ndarray, warm_tol: float, max_iter: int,
) -> dict[str, tuple[dict[str, np.ndarray], float]]:
    """min-SWGG, expected sliced and exact OT plans, and cold Sinkhorn: per-pair metrics, seconds per instance.

    Each timing includes building the cost matrix, as the predictors' timings do.
    """
    solvers = {
        "min_swgg": lambda cost: min_swgg_plans(x, a, y, b, theta),
        "expected_sliced": lambda cost: expected_sliced_plans(x, a, y, b, theta),
        "exact_emd": lambda cost: exact_plans(a, b, cost.numpy()),
    }
    results = {}
    for name, solve in solvers.items():
        pi, seconds = timed(lambda: solve(cost_fn()))
        results[name] = (plan_metrics(pi, f_star, g_star, a, b, cost_fn(), eps), seconds / len(x))
    a_t, b_t = torch.as_tensor(a), torch.as_tensor(b)
    iters, seconds = timed(
        lambda: iterations_to_tolerance(torch.zeros_like(a_t), a_t, b_t, cost_fn(), eps, warm_tol, max_iter), 1, False
    )
    results["sinkhorn_cold"] = ({"cold_iters": iters}, seconds / len(x))
    return results
