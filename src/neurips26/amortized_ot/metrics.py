"""Metrics of predicted potentials and plans: a-/b-weighted RMSE of f and g after centering, marginal error,
relative cost error, and the warm- vs cold-start Sinkhorn iterations of Meta-OT (Amos et al. 2023)."""

from __future__ import annotations

import numpy as np
import torch

from neurips26.amortized_ot.sinkhorn import c_transform, center, marginal_error, plan


def weighted_rmse(pred: np.ndarray, true: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """sqrt(sum_j w_j (pred_j - true_j)^2) per pair."""
    return np.sqrt((weights * (pred - true) ** 2).sum(-1))


def potentials_from_f(f_hat: np.ndarray, a: np.ndarray, b: np.ndarray, cost: torch.Tensor, eps: float):
    """Complete a predicted f by the c-transform (exact nu-marginal) and center the pair."""
    a_t, b_t = torch.as_tensor(a, dtype=torch.float64), torch.as_tensor(b, dtype=torch.float64)
    f = torch.as_tensor(f_hat, dtype=torch.float64)
    g = c_transform(f, a_t, cost, eps)
    return center(f, g, a_t, b_t)


def potential_metrics(
    f_hat: np.ndarray,
    f_star: np.ndarray,
    g_star: np.ndarray,
    a: np.ndarray,
    b: np.ndarray,
    cost: torch.Tensor,
    eps: float,
) -> dict[str, np.ndarray]:
    """Per-pair RMSE of f and g, marginal error and relative transport-cost error of the recovered plan."""
    f, g = potentials_from_f(f_hat, a, b, cost, eps)
    a_t, b_t = torch.as_tensor(a), torch.as_tensor(b)
    pi = plan(f, g, a_t, b_t, cost, eps)
    pi_star = plan(torch.as_tensor(f_star), torch.as_tensor(g_star), a_t, b_t, cost, eps)
    return {
        "rmse_f": weighted_rmse(f.numpy(), f_star, a),
        "rmse_g": weighted_rmse(g.numpy(), g_star, b),
        "marginal_error": marginal_error(pi, a_t, b_t).numpy(),
        "cost_rel_error": relative_cost_error(pi.numpy(), pi_star.numpy(), cost.numpy()),
    }


def relative_cost_error(pi: np.ndarray, pi_star: np.ndarray, cost: np.ndarray) -> np.ndarray:
    """|<C, pi> - <C, pi*>| / <C, pi*> per pair."""
    ref = (pi_star * cost).sum((-1, -2))
    return np.abs((pi * cost).sum((-1, -2)) - ref) / ref


def plan_metrics(
    pi: np.ndarray, f_star: np.ndarray, g_star: np.ndarray, a: np.ndarray, b: np.ndarray, cost: torch.Tensor, eps: float
) -> dict[str, np.ndarray]:
    """Metrics of a method that outputs a plan but no potentials (RMSE is undefined there)."""
    a_t, b_t = torch.as_tensor(a), torch.as_tensor(b)
    pi_star = plan(torch.as_tensor(f_star), torch.as_tensor(g_star), a_t, b_t, cost, eps)
    pi_t = torch.as_tensor(pi)
    return {
        "marginal_error": marginal_error(pi_t, a_t, b_t).numpy(),
        "cost_rel_error": relative_cost_error(pi, pi_star.numpy(), cost.numpy()),
    }
