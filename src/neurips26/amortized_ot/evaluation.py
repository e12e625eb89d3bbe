"""Evaluation of predictors and plan baselines on one group of test pairs."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import torch

from neurips26.amortized_ot.baselines import exact_plans, expected_sliced_plans, min_swgg_plans
from neurips26.amortized_ot.metrics import plan_metrics, potential_metrics
from neurips26.amortized_ot.sinkhorn import error_trajectory, first_below, iterations_to_tolerance
from neurips26.common.timing import timed


@dataclass(frozen=True)
class ColdStart:
    """Cold-start Sinkhorn on a test group, run once and shared by every predictor evaluated on it."""

    trajectory: np.ndarray  # (P, T + 1) marginal error after each iteration
    seconds_per_pair_iteration: float
    max_iter: int

    def iterations(self, tol) -> np.ndarray:
        return first_below(self.trajectory, tol, self.max_iter)


def cold_start(a: np.ndarray, b: np.ndarray, cost: torch.Tensor, eps: float, tol: float, max_iter: int) -> ColdStart:
    """Run Sinkhorn from f = 0 until every pair's marginal error is below `tol`, timing it."""
    a_t, b_t = torch.as_tensor(a), torch.as_tensor(b)
    (trajectory, work), seconds = timed(
        lambda: error_trajectory(torch.zeros_like(a_t), a_t, b_t, cost, eps, tol, max_iter), 1, False
    )
    return ColdStart(trajectory, seconds / work, max_iter)


def evaluate_potential(
    f_hat: np.ndarray,
    f_star: np.ndarray,
    g_star: np.ndarray,
    a: np.ndarray,
    b: np.ndarray,
    cost: torch.Tensor,
    eps: float,
    warm_tol: float,
    cold: ColdStart,
) -> tuple[dict[str, np.ndarray], float]:
    """Per-pair metrics of a predicted f, warm vs cold Sinkhorn iterations to `warm_tol`, and the time
    per instance cold Sinkhorn needs to reach the marginal error of the prediction (iterations read
    off the cold run's error trajectory, times its measured cost per iteration)."""
    per_pair = potential_metrics(f_hat, f_star, g_star, a, b, cost, eps)
    a_t, b_t = torch.as_tensor(a), torch.as_tensor(b)
    per_pair["warm_iters"] = iterations_to_tolerance(
        torch.as_tensor(f_hat), a_t, b_t, cost, eps, warm_tol, cold.max_iter
    )
    per_pair["cold_iters"] = cold.iterations(warm_tol)
    # a prediction more accurate than warm_tol is credited with the iterations to warm_tol (a lower bound)
    matched = cold.iterations(np.maximum(per_pair["marginal_error"], warm_tol))
    return per_pair, float(np.mean(matched) * cold.seconds_per_pair_iteration)


def plan_baselines(
    x: np.ndarray,
    a: np.ndarray,
    y: np.ndarray,
    b: np.ndarray,
    f_star: np.ndarray,
    g_star: np.ndarray,
    cost_fn: Callable[[], torch.Tensor],
    eps: float,
    theta: np.ndarray,
    warm_tol: float,
    cold: ColdStart,
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
    iters = cold.iterations(warm_tol)
    results["sinkhorn_cold"] = ({"cold_iters": iters}, float(np.mean(iters) * cold.seconds_per_pair_iteration))
    return results
