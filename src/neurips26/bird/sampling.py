"""Deterministic DDIM reverse process driven by any noise predictor (the authors'
`ScheduledScoreMachine` and `scripts/k_cal_vs_k_mem_sweep.py`).

With alpha = 1 - beta (beta the cumulative noise variance of the legacy cosine schedule), one step
from time t to the earlier time t' is

    x <- sqrt(alpha_t' / alpha_t) x
         + (sqrt(beta_t') - sqrt(alpha_t' / alpha_t) sqrt(beta_t)) eps(x, t),

the update of the authors' `ScheduledScoreMachine` and `k_cal_vs_k_mem_sweep.py`. With an exact eps
it maps a_t x0_hat + b_t eps to a_t' x0_hat + b_t' eps; the last step lands on t' = 0, where
beta = 0, so the output is the final x0_hat.

Time grid. Steps i = n, n-1, ..., 1 evaluate eps at t_i = i / n and move to t_{i-1} = (i - 1) / n,
as the authors' k_cal sweep does (n evaluations, starting from pure noise at t = 1). Since
`schedule.check_times` admits denoiser times strictly inside (0, 1), the first evaluation time is
clipped to T_MAX = 1 - 1e-4: beta differs from beta(1) by ~4e-6, and x_T ~ N(0, I) is the forward
marginal there up to a = 0.0126. The last target time t = 0 is kept exactly; no denoiser is
evaluated there. (`ScheduledScoreMachine` instead skips t = 1 and starts from noise at
t = (n - 1) / n.)
"""

from __future__ import annotations

import numbers
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from neurips26.bird import schedule

T_MAX = 1.0 - 1e-4  # the first evaluation time t = 1 clipped into (0, 1) (module docstring)
MAX_STEPS = 10_000  # beyond this (n - 1) / n would reach T_MAX and two steps would share a time


@dataclass(frozen=True)
class DDIMTrajectory:
    """The states a DDIM run fed to its noise predictor (for calibration along trajectories).

    t: (S,) evaluation times, decreasing; x: (S, *shape) the state at each time; eps: (S, *shape)
    the noise prediction used for the step from that state.
    """

    t: np.ndarray
    x: np.ndarray
    eps: np.ndarray


def ddim_times(n_steps: int) -> tuple[np.ndarray, np.ndarray]:
    """Evaluation times and target times of the DDIM steps, both (n_steps,) float64, decreasing.

    Evaluation times are t_i = i / n for i = n..1, the first clipped to T_MAX; targets (i - 1) / n.
    """
    if isinstance(n_steps, bool) or not isinstance(n_steps, numbers.Integral):
        raise ValueError(f"n_steps must be an int, got {n_steps!r}")
    n = int(n_steps)
    if not 1 <= n <= MAX_STEPS:
        raise ValueError(f"n_steps must be in [1, {MAX_STEPS}], got {n}")
    i = np.arange(n, 0, -1, dtype=np.float64)
    t_eval = np.minimum(i / n, T_MAX)
    t_next = (i - 1.0) / n
    schedule.check_times(t_eval)
    return t_eval, t_next


def ddim_step(x: np.ndarray, eps: np.ndarray, t: float, t_next: float) -> np.ndarray:
    """One deterministic DDIM step from time t to the earlier time t_next (module docstring)."""
    beta_t = float(schedule.beta(t))
    beta_next = float(schedule.beta(t_next))
    ratio = np.sqrt((1.0 - beta_next) / (1.0 - beta_t))
    return ratio * x + (np.sqrt(beta_next) - ratio * np.sqrt(beta_t)) * eps


def ddim_sample(
    eps_fn: Callable[[np.ndarray, float], np.ndarray],
    x_T,
    n_steps: int,
    return_trajectory: bool = False,
):
    """Run the DDIM reverse process from x_T (the state at t ~ 1) down to t = 0.

    eps_fn(x, t) -> eps, same shape as x, for a float t in (0, 1). Returns the final state
    (float64), or the tuple (final state, DDIMTrajectory) with return_trajectory=True.
    """
    if not callable(eps_fn):
        raise ValueError(f"eps_fn must be callable as eps_fn(x, t), got {eps_fn!r}")
    x = np.array(x_T, dtype=np.float64)  # a copy: the caller's array is never modified
    if x.size == 0:
        raise ValueError(f"x_T must be non-empty, got shape {x.shape}")
    if not np.isfinite(x).all():
        raise ValueError(f"x_T contains {int((~np.isfinite(x)).sum())} NaN or infinite values")
    t_eval, t_next = ddim_times(n_steps)
    states, epses = [], []
    for t, t_prev in zip(t_eval, t_next):
        eps = np.asarray(eps_fn(x, float(t)), dtype=np.float64)
        if eps.shape != x.shape:
            raise ValueError(f"eps_fn returned shape {eps.shape} at t={t:.4g}, expected {x.shape}")
        if not np.isfinite(eps).all():
            raise ValueError(f"eps_fn returned NaN or infinite values at t={t:.4g}")
        if return_trajectory:
            states.append(x)
            epses.append(eps)
        x = ddim_step(x, eps, float(t), float(t_prev))
    if return_trajectory:
        return x, DDIMTrajectory(t=t_eval, x=np.stack(states), eps=np.stack(epses))
    return x
