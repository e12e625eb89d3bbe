r"""Mean-field dynamics of post-training in the skill-chain model (our reconstruction, notes 16.2).

Rates (per SFT demonstration ``tau_sft`` and per RL update ``tau_rl``; :mod:`.model` for the notation)::

    SFT:  du_i/dtau_sft = eta_s L q_i s_i (rho - pi_i)
    RL:   du_i/dtau_rl  = eta_r (1 - 2 eps_r) L q_i s_i pi_i (1 - pi_i) Pbar^(L-1)

SFT is the mean of the per-step cross-entropy gradient on demonstrations whose steps are correct with
probability ``rho`` (``L q_i`` steps of skill ``i`` per demonstration, ``dz_i/du_i = s_i``). RL is REINFORCE on the
outcome reward of one task (averaged over ``k`` rollouts, baseline independent of the rollout), flipped with
probability ``eps_r``: ``E[(R - b) d log p / dz_i] = (1 - 2 eps_r) L q_i pi_i (1 - pi_i) Pbar^(L-1)``.

Solutions
=========
- **SFT, closed form (implicit).** Skills decouple. In logits ``z = z0 + s u`` with ``b = eta_s L q s^2``,
  ``dz/dtau = b (rho - sigmoid(z))``; for ``0 < rho < 1``, with ``d = z - logit(rho)``,

      H(d) = d / rho - log|expm1(d)| / (rho (1 - rho)),     H(d(tau)) = H(d(0)) + b tau,

  ``H`` is monotone between ``d(0)`` and 0 and is inverted by bisection on ``log|d|`` (:func:`sft_logits`).
  At ``rho = 1``: ``z + e^z = const + b tau``, so ``z = log W(c)`` with Wright's omega ``W``; ``rho = 0`` is the
  mirror image (``z -> -z``). Fixed point ``pi_i = rho`` for every skill with ``q_i s_i > 0``, so
  ``P_SFT -> rho^L`` when every task skill was pretrained.
- **RL, ODE.** Skills couple through ``Pbar``: no closed form; ``scipy.integrate.solve_ivp`` (:func:`rl_path`).
  For ``L = 1`` they decouple and ``2 z + 2 sinh z = const + b tau`` with ``b = eta_r (1 - 2 eps_r) q s^2``
  (:func:`rl_single_step_logits`, the cross-check of the ODE solver).
- **Pipelines** (:data:`ORDERS`): ``sft_rl`` (SFT, then RL; the default), ``rl_sft``, and ``joint`` (both
  gradients summed over one normalised time ``t in [0, 1]``: ``du/dt = n_sft g_sft(u) + n_rl g_rl(u)``, the
  parallel-averaged variant; ODE). SFT-only and RL-only are allocations with one share at 1.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy.integrate import solve_ivp
from scipy.special import logit, wrightomega

from neurips26.common.validation import check_int

from .model import (
    Allocation,
    ModelParams,
    StagePlan,
    check_budget,
    initial_u,
    logits,
    mean_step_success,
    plasticity,
    rl_cost,
    sft_cost,
    skill_strength,
    stage_plan,
    step_success,
    task_distribution,
)

__all__ = [
    "ORDERS",
    "PipelineResult",
    "post_train",
    "rl_path",
    "rl_rate",
    "rl_single_step_logits",
    "rl_time_to_success",
    "run_pipeline",
    "pipeline_trajectory",
    "sft_limit",
    "sft_logits",
    "sft_path",
    "sft_rate",
]

ORDERS = ("sft_rl", "rl_sft", "joint")
RTOL, ATOL = 1e-8, 1e-10
_BISECTIONS = 90
_LOG_TINY = -745.0  # log of the smallest positive double: below it d is 0


def sft_rate(params: ModelParams, strength, u) -> np.ndarray:
    """Mean-field SFT drift ``du/dtau_sft = eta_s L q s (rho - pi)`` (per demonstration; ``s`` is the plasticity
    ``dz/du``, 1 in the null model without the pretraining gate)."""
    q = task_distribution(params)
    pi = step_success(params, strength, u)
    return params.sft_lr * params.chain_length * q * plasticity(params, strength) * (params.demo_quality - pi)


def rl_rate(params: ModelParams, strength, u) -> np.ndarray:
    """Mean-field RL drift ``du/dtau_rl = eta_r (1 - 2 eps_r) L q s pi (1 - pi) Pbar^(L-1)`` (per update; ``s`` is
    the plasticity ``dz/du``, 1 in the null model without the pretraining gate)."""
    q = task_distribution(params)
    pi = step_success(params, strength, u)
    pbar = pi @ q
    gain = params.rl_lr * (1.0 - 2.0 * params.reward_noise) * params.chain_length
    drift = gain * q * plasticity(params, strength) * pi * (1.0 - pi)
    return drift * np.asarray(pbar)[..., None] ** (params.chain_length - 1)


def _log_abs_expm1(d):
    """``log|e^d - 1|`` without overflow (``-inf`` at 0)."""
    with np.errstate(divide="ignore"):
        return np.where(d > 0, d + np.log(-np.expm1(-np.abs(d))), np.log(-np.expm1(-np.abs(d))))


def _log_wright_omega(c):
    """``log W(c)`` with ``W + log W = c``; ``W ~ e^c`` where ``wrightomega`` underflows."""
    c = np.asarray(c, dtype=float)
    with np.errstate(divide="ignore", over="ignore"):
        return np.where(c < -30.0, c - np.exp(np.minimum(c, 0.0)), np.log(wrightomega(np.maximum(c, -30.0))))


def sft_logits(rho: float, rate, z_init, tau) -> np.ndarray:
    """Exact solution ``z(tau)`` of ``dz/dtau = rate (rho - sigmoid(z))`` (module docstring), broadcasting `rate`,
    `z_init` and `tau` (``rate >= 0``, ``tau >= 0``)."""
    rate, z_init, tau = np.broadcast_arrays(*(np.asarray(a, dtype=float) for a in (rate, z_init, tau)))
    push = rate * tau
    if rho == 1.0:
        z = _log_wright_omega(z_init + np.exp(z_init) + push)
    elif rho == 0.0:
        z = -_log_wright_omega(-z_init + np.exp(-z_init) + push)
    else:
        z = logit(rho) + _sft_offset(rho, z_init - logit(rho), push)
    return np.where(push == 0, z_init, z)


def _sft_offset(rho: float, d0: np.ndarray, push: np.ndarray) -> np.ndarray:
    """``d(tau) = z(tau) - logit(rho)`` from ``H(d(tau)) = H(d0) + push`` for ``0 < rho < 1`` (module docstring)."""
    scale = rho * (1.0 - rho)
    sign = np.sign(d0)

    def h(log_abs_d):
        d = sign * np.exp(log_abs_d)
        return d / rho - _log_abs_expm1(d) / scale

    hi = np.log(np.abs(d0), where=d0 != 0, out=np.full(d0.shape, _LOG_TINY))
    target = h(hi) + push
    lo = np.full(d0.shape, _LOG_TINY)
    for _ in range(_BISECTIONS):  # h decreases in log|d|: find log|d| with h = target in [lo, hi]
        mid = 0.5 * (lo + hi)
        above = h(mid) > target
        lo = np.where(above, mid, lo)
        hi = np.where(above, hi, mid)
    d = np.where(d0 == 0, 0.0, sign * np.exp(0.5 * (lo + hi)))
    return np.where(h(np.full(d0.shape, _LOG_TINY)) <= target, 0.0, d)


def sft_path(params: ModelParams, strength, u_init, tau) -> np.ndarray:
    """``u`` after ``tau`` SFT demonstrations (closed form), shape ``np.shape(tau) + (M,)``."""
    strength = np.asarray(strength, dtype=float)
    tau = np.asarray(tau, dtype=float)[..., None]
    if np.any(tau < 0):
        raise ValueError(f"SFT time must be >= 0, got {tau.ravel()!r}")
    gate = plasticity(params, strength)
    rate = params.sft_lr * params.chain_length * task_distribution(params) * gate**2
    z_init = logits(params, strength, u_init)
    z = sft_logits(params.demo_quality, rate, z_init, tau)
    moved = gate > 0
    return np.where(moved, u_init + (z - z_init) / np.where(moved, gate, 1.0), u_init)


def sft_limit(params: ModelParams, strength) -> float:
    """``lim P`` under SFT alone: ``pi_i -> rho`` where ``q_i s_i > 0``, unchanged elsewhere (``rho^L`` when every
    task skill was pretrained)."""
    q = task_distribution(params)
    movable = (q > 0) & (plasticity(params, strength) > 0)
    frozen = step_success(params, strength, params.u0)
    pbar = np.sum(np.where(movable, params.demo_quality, frozen) * q)
    return float(pbar**params.chain_length)


def _solve(rhs, u_init, t_end: float, t_eval=None, events=None):
    return solve_ivp(rhs, (0.0, t_end), u_init, method="RK45", t_eval=t_eval, events=events, rtol=RTOL, atol=ATOL)


def rl_path(params: ModelParams, strength, u_init, tau) -> np.ndarray:
    """``u`` after RL updates at the (non-decreasing) times `tau`, by ``solve_ivp``; shape ``np.shape(tau) + (M,)``."""
    strength = np.asarray(strength, dtype=float)
    tau = np.asarray(tau, dtype=float)
    times = np.atleast_1d(tau)
    if np.any(times < 0) or np.any(np.diff(times) < 0):
        raise ValueError(f"RL times must be >= 0 and non-decreasing, got {times!r}")
    u_init = np.broadcast_to(np.asarray(u_init, dtype=float), strength.shape).copy()
    if times[-1] == 0:
        return np.broadcast_to(u_init, tau.shape + u_init.shape).copy()
    sol = _solve(lambda t, u: rl_rate(params, strength, u), u_init, float(times[-1]), t_eval=times)
    if not sol.success:
        raise RuntimeError(f"RL ODE failed: {sol.message}")
    return sol.y.T.reshape(tau.shape + u_init.shape)


def rl_single_step_logits(rate, z_init, tau) -> np.ndarray:
    """Exact ``z(tau)`` of ``dz/dtau = rate sigmoid(z) (1 - sigmoid(z))`` (RL with ``L = 1``): the root of
    ``2 z + 2 sinh z = 2 z_init + 2 sinh z_init + rate tau``, by bisection on ``[z_init, z_init + rate tau / 4]``
    (the left side grows at least 4 times as fast as ``z``)."""
    rate, z_init, tau = np.broadcast_arrays(*(np.asarray(a, dtype=float) for a in (rate, z_init, tau)))
    target = 2 * z_init + 2 * np.sinh(z_init) + rate * tau
    lo, hi = z_init.copy(), z_init + rate * tau / 4.0
    for _ in range(_BISECTIONS):
        mid = 0.5 * (lo + hi)
        below = 2 * mid + 2 * np.sinh(mid) < target
        lo = np.where(below, mid, lo)
        hi = np.where(below, hi, mid)
    return 0.5 * (lo + hi)


def rl_time_to_success(params: ModelParams, strength, u_init, level: float = 0.5, tau_max: float = 1e7) -> float:
    """First RL time at which ``P`` reaches `level` (``inf`` if not by `tau_max`): the plateau's length."""
    strength = np.asarray(strength, dtype=float)
    u_init = np.broadcast_to(np.asarray(u_init, dtype=float), strength.shape).copy()
    gap = lambda t, u: mean_step_success(params, strength, u) ** params.chain_length - level  # noqa: E731
    if gap(0.0, u_init) >= 0:
        return 0.0
    gap.terminal, gap.direction = True, 1.0
    sol = _solve(lambda t, u: rl_rate(params, strength, u), u_init, float(tau_max), events=gap)
    return float(sol.t_events[0][0]) if sol.t_events[0].size else float("inf")


def post_train(params: ModelParams, strength, u_init, sft_demos: float, rl_updates: float, order: str = "sft_rl"):
    """``u`` after `sft_demos` SFT demonstrations and `rl_updates` RL updates in the given order (:data:`ORDERS`)."""
    if order not in ORDERS:
        raise ValueError(f"order must be one of {list(ORDERS)}, got {order!r}")
    sft_demos, rl_updates = check_budget("sft_demos", sft_demos), check_budget("rl_updates", rl_updates)
    strength = np.asarray(strength, dtype=float)
    u = np.broadcast_to(np.asarray(u_init, dtype=float), strength.shape).copy()
    if order == "sft_rl":
        return rl_path(params, strength, sft_path(params, strength, u, sft_demos), rl_updates)
    if order == "rl_sft":
        return sft_path(params, strength, rl_path(params, strength, u, rl_updates), sft_demos)
    if sft_demos == 0 and rl_updates == 0:
        return u

    def joint(t, v):
        return sft_demos * sft_rate(params, strength, v) + rl_updates * rl_rate(params, strength, v)

    sol = _solve(joint, u, 1.0)
    if not sol.success:
        raise RuntimeError(f"joint ODE failed: {sol.message}")
    return sol.y[:, -1]


@dataclass(frozen=True)
class PipelineResult:
    """One pipeline run: the plan, pretrained strengths, final ``u``, task and mean step success."""

    plan: StagePlan
    strength: np.ndarray
    u: np.ndarray
    success: float
    step_success: float


def run_pipeline(
    params: ModelParams, budget, allocation: Allocation, base_compute=0.0, order: str = "sft_rl"
) -> PipelineResult:
    """Pretrain, then post-train with `budget` tokens split by `allocation` (mean-field solution)."""
    plan = stage_plan(params, budget, allocation, base_compute)
    strength = skill_strength(params, plan.pretrain_compute)
    u = post_train(params, strength, initial_u(params), plan.sft_demos, plan.rl_updates, order)
    pbar = float(mean_step_success(params, strength, u))
    return PipelineResult(plan, strength, u, pbar**params.chain_length, pbar)


def pipeline_trajectory(
    params: ModelParams, budget, allocation: Allocation, base_compute=0.0, order: str = "sft_rl", n_points: int = 50
) -> pd.DataFrame:
    """Task success along post-training of a sequential pipeline: rows (stage, compute, success, step_success), with
    compute the post-training tokens spent so far (`n_points` per stage, both ends included)."""
    if order not in ("sft_rl", "rl_sft"):
        raise ValueError(f"trajectories are for sequential orders ('sft_rl', 'rl_sft'), got {order!r}")
    check_int("n_points", n_points, 2)
    plan = stage_plan(params, budget, allocation, base_compute)
    strength = skill_strength(params, plan.pretrain_compute)
    stages = [("sft", plan.sft_demos, sft_path, sft_cost(params)), ("rl", plan.rl_updates, rl_path, rl_cost(params))]
    if order == "rl_sft":
        stages.reverse()
    u, spent, rows = initial_u(params), 0.0, []
    for stage, steps, path, cost in stages:
        tau = np.linspace(0.0, steps, n_points)
        us = path(params, strength, u, tau)
        pbar = mean_step_success(params, strength, us)
        table = {"stage": stage, "compute": spent + tau * cost, "success": pbar**params.chain_length}
        rows.append(pd.DataFrame(table | {"step_success": pbar}))
        u, spent = us[-1], spent + steps * cost
    return pd.concat(rows, ignore_index=True)
