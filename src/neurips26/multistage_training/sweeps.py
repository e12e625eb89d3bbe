r"""Sweeps of the mean-field pipeline and the optimal compute allocation per setting (our reconstruction, 16.2).

A *setting* is the model's parameters, a post-training budget ``B`` (tokens) and a pretraining level (the base
model's compute ``C``). Data quality is ``rho`` (SFT demonstrations) and ``eps_r`` (RL rewards); the chain length
``L`` sets the task's difficulty. The allocation is the SFT share ``f`` of ``B`` (the rest to RL), or, with
``include_pretrain``, a point of the simplex (pretraining, SFT, RL) of one total budget on top of ``C``.

:func:`optimal_allocation` maximises the final task success: a grid (``n_grid`` shares, or the simplex grid of
step ``1 / n_grid``), then a bounded local refinement around the best grid point (``minimize_scalar`` on the
share; Nelder-Mead on the simplex coordinates ``(a, f)``, ``allocation = (a, (1 - a) f, (1 - a)(1 - f))``). The
refinement is kept only if it improves on the grid, so the result is never worse than the grid's best.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy import optimize

from neurips26.common.validation import check_int

from .dynamics import ORDERS, run_pipeline
from .model import Allocation, ModelParams, check_budget

__all__ = ["OptimalAllocation", "allocation_table", "optimal_allocation", "simplex_grid", "success", "sweep"]

SWEPT = ("demo_quality", "reward_noise", "chain_length")


def success(params: ModelParams, budget, allocation: Allocation, base_compute=0.0, order: str = "sft_rl") -> float:
    """Final task success ``P`` of the mean-field pipeline (:func:`.dynamics.run_pipeline`)."""
    return run_pipeline(params, budget, allocation, base_compute, order).success


def _settings(params: ModelParams, demo_qualities, reward_noises, chain_lengths):
    """Every combination of the swept data-quality and difficulty values (the params' own value where None)."""
    values = [
        [getattr(params, name)] if given is None else list(given)
        for name, given in zip(SWEPT, (demo_qualities, reward_noises, chain_lengths))
    ]
    for combo in itertools.product(*values):
        yield dict(zip(SWEPT, combo)), params.replace(**dict(zip(SWEPT, combo)))


def sweep(
    params: ModelParams,
    budgets,
    sft_shares,
    base_computes,
    demo_qualities=None,
    reward_noises=None,
    chain_lengths=None,
    order: str = "sft_rl",
) -> pd.DataFrame:
    """Final success over the grid budget x SFT share x pretraining level x data quality x chain length: one row per
    point (budget, base_compute, demo_quality, reward_noise, chain_length, sft_share, success)."""
    if order not in ORDERS:
        raise ValueError(f"order must be one of {list(ORDERS)}, got {order!r}")
    budgets = [check_budget("budget", b) for b in budgets]
    base_computes = [check_budget("base_compute", c) for c in base_computes]
    allocations = [Allocation.post_training(f) for f in sft_shares]
    rows = []
    for values, setting in _settings(params, demo_qualities, reward_noises, chain_lengths):
        for budget, base in itertools.product(budgets, base_computes):
            for allocation in allocations:
                point = {"budget": budget, "base_compute": base, "sft_share": allocation.sft}
                rows.append(values | point | {"success": success(setting, budget, allocation, base, order)})
    columns = ["budget", "base_compute", *SWEPT, "sft_share", "success"]
    return pd.DataFrame(rows, columns=columns)


@dataclass(frozen=True)
class OptimalAllocation:
    """The best allocation found and its success; `grid_success` is the grid's best (before refinement)."""

    allocation: Allocation
    success: float
    grid_success: float


def simplex_grid(n_grid: int) -> np.ndarray:
    """Every (pretrain, sft, rl) with coordinates multiple of ``1 / n_grid`` summing to 1: array (n, 3)."""
    check_int("n_grid", n_grid, 1)
    points = [(i, j, n_grid - i - j) for i in range(n_grid + 1) for j in range(n_grid + 1 - i)]
    return np.array(points, dtype=float) / n_grid


def _from_simplex(point) -> Allocation:
    pretrain, sft = float(point[0]), float(point[1])
    return Allocation(pretrain, sft, max(0.0, 1.0 - pretrain - sft))


def optimal_allocation(
    params: ModelParams,
    budget,
    base_compute=0.0,
    order: str = "sft_rl",
    n_grid: int = 20,
    include_pretrain: bool = False,
    refine: bool = True,
    interior: bool = False,
) -> OptimalAllocation:
    """The allocation of `budget` maximising final success (module docstring): the SFT share of post-training,
    or with `include_pretrain` a point of the (pretraining, SFT, RL) simplex. With `interior` the SFT share stays
    strictly inside (0, 1): the grid leaves out both single stages (f = 0 and f = 1) and the refinement stays within
    [1/(2 n_grid), 1 - 1/(2 n_grid)], so that the result says what mixing the two stages gains over either alone."""
    check_int("n_grid", n_grid, 1)
    if interior and (include_pretrain or n_grid < 2):
        raise ValueError(f"interior needs the post-training split (no include_pretrain) and n_grid >= 2, got {n_grid}")
    if include_pretrain:
        points = simplex_grid(n_grid)
    else:
        shares = np.linspace(0.0, 1.0, n_grid + 1)[1:-1] if interior else np.linspace(0.0, 1.0, n_grid + 1)
        points = np.column_stack([np.zeros_like(shares), shares, 1.0 - shares])
    values = np.array([success(params, budget, _from_simplex(x), base_compute, order) for x in points])
    best = int(np.argmax(values))
    allocation, value = _from_simplex(points[best]), float(values[best])
    if refine and budget > 0:
        margin = 0.5 / n_grid if interior else 0.0
        candidate = _refine(params, budget, base_compute, order, points[best], 1.0 / n_grid, include_pretrain, margin)
        candidate_value = success(params, budget, candidate, base_compute, order)
        if candidate_value > value:
            allocation, value = candidate, candidate_value
    return OptimalAllocation(allocation, value, float(values[best]))


def _refine(params, budget, base_compute, order, start, step, include_pretrain, margin=0.0) -> Allocation:
    """Local maximisation around the grid's best point, within one grid step (and `margin` away from f = 0, 1)."""
    if not include_pretrain:
        lo, hi = max(margin, start[1] - step), min(1.0 - margin, start[1] + step)
        found = optimize.minimize_scalar(
            lambda f: -success(params, budget, Allocation.post_training(f), base_compute, order),
            bounds=(lo, hi),
            method="bounded",
            options={"xatol": 1e-4},
        )
        return Allocation.post_training(float(np.clip(found.x, 0.0, 1.0)))

    def to_allocation(v):
        a, f = np.clip(v, 0.0, 1.0)
        return Allocation(float(a), float((1 - a) * f), float((1 - a) * (1 - f)))

    a0 = start[0]
    f0 = start[1] / (1 - a0) if a0 < 1 else 0.5
    found = optimize.minimize(
        lambda v: -success(params, budget, to_allocation(v), base_compute, order),
        x0=np.array([a0, f0]),
        method="Nelder-Mead",
        bounds=[(max(0.0, a0 - step), min(1.0, a0 + step)), (0.0, 1.0)],
        options={"xatol": 1e-4, "fatol": 1e-9},
    )
    return to_allocation(found.x)


def allocation_table(
    params: ModelParams,
    budgets,
    base_computes,
    demo_qualities=None,
    reward_noises=None,
    chain_lengths=None,
    order: str = "sft_rl",
    n_grid: int = 20,
    include_pretrain: bool = False,
) -> pd.DataFrame:
    """The optimal allocation per setting: rows (budget, base_compute, demo_quality, reward_noise, chain_length,
    pretrain_share, sft_share, rl_share, success, grid_success)."""
    rows = []
    for values, setting in _settings(params, demo_qualities, reward_noises, chain_lengths):
        for budget, base in itertools.product(budgets, base_computes):
            best = optimal_allocation(setting, budget, base, order, n_grid, include_pretrain)
            alloc = best.allocation
            rows.append(
                values
                | {"budget": float(budget), "base_compute": float(base)}
                | {"pretrain_share": alloc.pretrain, "sft_share": alloc.sft, "rl_share": alloc.rl}
                | {"success": best.success, "grid_success": best.grid_success}
            )
    columns = ["budget", "base_compute", *SWEPT, "pretrain_share", "sft_share", "rl_share", "success", "grid_success"]
    return pd.DataFrame(rows, columns=columns)
