r"""Measurements of the abstract's four phenomena in the skill-chain model (our reconstruction, notes 16.2).

1. **SFT and RL complementary** (:func:`complementarity_table`): at equal budget, the best SFT->RL split against
   SFT alone and RL alone; ``gain = P(f*) - max(P_SFT, P_RL)``. The mechanism: SFT lifts ``Pbar`` at a rate that
   does not depend on ``Pbar`` but stops at ``rho``; RL has no data-quality ceiling but its rate carries
   ``Pbar^(L-1)``, a plateau that :func:`plateau_table` measures (time to ``P = 1/2``).
2. **Pretraining ceiling with power-law scaling** (:func:`pretraining_ceiling`): final step failure
   ``1 - Pbar`` at the optimal split of a fixed budget, against the pretraining compute ``C``, with a log-log fit.
   The exponent the model predicts (our derivation, :func:`predicted_ceiling_exponent`): a skill is learned in
   post-training when its logit rate ``∝ q_i s_i^2`` (``s_i`` enters through ``dz/du`` and the gradient)
   integrated over the budget passes a threshold; the factor ``pi (1 - pi) Pbar^(L-1)`` of RL is common to the
   unlearned skills (all near ``pi = sigmoid(z0)``). Beyond the pretraining frontier ``s_i ≈ C p_i / n0``, so the
   cut-off is ``q_i p_i^2 C^2 B ≈ const``, ``i* ∝ (C^2 B)^(1 / (alpha_task + 2 alpha))``, and the unlearned
   task skills carry ``1 - Pbar ∝ sum_{i > i*} q_i ∝ i*^-(alpha_task - 1)``::

       1 - Pbar  ∝  C^-2(alpha_task - 1)/(alpha_task + 2 alpha)  B^-(alpha_task - 1)/(alpha_task + 2 alpha)

   (2/9 in ``C`` at ``alpha = alpha_task = 3/2``; the notes' heuristic ``(alpha - 1)/alpha`` misses that ``s_i``
   enters squared and that ``q_i`` weights the rate). It holds between the pretraining frontier and ``M``. The
   ceiling is a finite-budget effect (every task skill has ``s_i > 0`` and is learned in the end):
   :func:`ceiling_sweep` sweeps the budget too, in the model and in the null model without the pretraining gate
   (``plasticity = "full"``), and :func:`budget_scaling` fits ``C^-a B^-b`` to it. The pretraining loss itself
   scales as ``C^-(alpha - 1)/alpha`` (:func:`pretraining_loss_scaling`).
3. **Optimal allocation shifts with data quality and pretraining** (:func:`allocation_shift`,
   :func:`monotone_violation`): the optimal SFT share ``f*`` per (``rho``, ``C``); the model predicts it rises with
   ``rho`` and falls with ``C``. The number of rollouts k only prices RL in the mean field, so it is swept too.
4. **RL amplifies task-relevant pretrained skills** (:func:`rl_amplification`, :func:`amplification_summary`):
   the change ``Delta u_i`` under RL per skill; it is exactly 0 off the task (``q_i = 0``) and, per task
   occurrence (``Delta u_i / q_i``), increases with the pretrained strength ``s_i`` (the rate's form); the same RL
   in the null model without the pretraining gate is set beside it.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy import stats

from neurips26.common.validation import check_number

from .dynamics import post_train, rl_time_to_success, sft_limit
from .model import (
    PLASTICITIES,
    Allocation,
    ModelParams,
    initial_u,
    logits,
    mean_step_success,
    pretraining_loss,
    skill_frequencies,
    skill_strength,
    step_success,
    task_distribution,
    task_mask,
)
from .sweeps import allocation_table, optimal_allocation, success

__all__ = [
    "CeilingScaling",
    "PowerLawFit",
    "allocation_shift",
    "amplification_summary",
    "bonferroni_quantile",
    "budget_scaling",
    "ceiling_sweep",
    "complementarity_table",
    "fit_power_law",
    "monotone_violation",
    "plateau_table",
    "predicted_ceiling_exponent",
    "pretraining_ceiling",
    "pretraining_loss_scaling",
    "rl_amplification",
    "share_spans",
]


@dataclass(frozen=True)
class PowerLawFit:
    """Least-squares line ``log y = intercept + slope log x`` over `n` points, with its R^2."""

    slope: float
    intercept: float
    r2: float
    n: int


def fit_power_law(x, y) -> PowerLawFit:
    """Fit ``y ∝ x^slope`` in log-log space (at least 3 points, all positive and finite, not all x equal)."""
    x, y = np.asarray(x, dtype=float).ravel(), np.asarray(y, dtype=float).ravel()
    if x.shape != y.shape or x.size < 3:
        raise ValueError(f"a power-law fit needs at least 3 (x, y) pairs of equal length, got {x.size} and {y.size}")
    if not (np.all(np.isfinite(x)) and np.all(np.isfinite(y)) and np.all(x > 0) and np.all(y > 0)):
        raise ValueError("a power-law fit needs finite, positive x and y")
    if np.ptp(x) == 0:
        raise ValueError("a power-law fit needs at least two distinct x")
    fit = stats.linregress(np.log(x), np.log(y))
    return PowerLawFit(float(fit.slope), float(fit.intercept), float(fit.rvalue**2), int(x.size))


def predicted_ceiling_exponent(params: ModelParams, wrt: str = "compute") -> float:
    """The model's ceiling exponent (module docstring): ``2 (alpha_task - 1) / (alpha_task + 2 alpha)`` in the
    pretraining compute, half of it in the post-training budget; needs ``alpha_task > 1``."""
    if params.alpha_task <= 1:
        raise ValueError(f"the ceiling's power law needs alpha_task > 1, got {params.alpha_task!r}")
    factors = {"compute": 2.0, "budget": 1.0}
    if wrt not in factors:
        raise ValueError(f"wrt must be one of {list(factors)}, got {wrt!r}")
    return factors[wrt] * (params.alpha_task - 1) / (params.alpha_task + 2 * params.alpha)


def pretraining_loss_scaling(params: ModelParams, computes) -> tuple[pd.DataFrame, PowerLawFit, float]:
    """Excess pretraining loss at each compute (table base_compute, loss), its log-log fit and the exponent
    ``(alpha - 1) / alpha`` it should recover (as a positive number; the fitted slope is its negative)."""
    computes = np.asarray(computes, dtype=float)
    loss = pretraining_loss(params, computes)
    table = pd.DataFrame({"base_compute": computes, "loss": loss})
    return table, fit_power_law(computes, loss), (params.alpha - 1) / params.alpha


def complementarity_table(
    params: ModelParams, budgets, base_computes, n_grid: int = 20, order: str = "sft_rl"
) -> pd.DataFrame:
    """Per (budget, base_compute): SFT alone, RL alone, the best split (its SFT share and success), the gain over the
    better single stage, the best split strictly inside (0, 1) (``interior_share``, ``interior``) and its `margin`
    over the better single stage, and the SFT-alone limit ``lim P_SFT`` (``rho^L`` when every task skill was
    pretrained). ``gain >= 0`` by construction (the grid holds f = 0 and f = 1); ``margin`` can be negative. The
    same single stages, interior split and margin in the null model without the pretraining gate
    (``plasticity = "full"``, C1's null) are set beside them: ``sft_only_null``, ``rl_only_null``,
    ``interior_share_null``, ``interior_null``, ``margin_null``."""

    def split(setting: ModelParams, budget, base) -> dict:
        sft_only = success(setting, budget, Allocation.post_training(1.0), base, order)
        rl_only = success(setting, budget, Allocation.post_training(0.0), base, order)
        best = optimal_allocation(setting, budget, base, order, n_grid)
        inside = (
            best
            if 0.0 < best.allocation.sft < 1.0
            else optimal_allocation(setting, budget, base, order, n_grid, interior=True)
        )
        single = max(sft_only, rl_only)
        return {
            "sft_only": sft_only,
            "rl_only": rl_only,
            "sft_share": best.allocation.sft,
            "mixed": best.success,
            "gain": best.success - single,
            "interior_share": inside.allocation.sft,
            "interior": inside.success,
            "margin": inside.success - single,
        }

    null_params = params.replace(plasticity="full")
    null_columns = ("sft_only", "rl_only", "interior_share", "interior", "margin")
    rows = []
    for budget in budgets:
        for base in base_computes:
            null = split(null_params, budget, base)
            rows.append(
                {
                    "budget": float(budget),
                    "base_compute": float(base),
                    **split(params, budget, base),
                    "sft_limit": sft_limit(params, skill_strength(params, base)),
                    **{f"{column}_null": null[column] for column in null_columns},
                }
            )
    return pd.DataFrame(rows)


def plateau_table(params: ModelParams, chain_lengths, base_compute, level: float = 0.5) -> pd.DataFrame:
    """RL alone from the pretrained model: updates to reach ``P = level`` per chain length, the initial step
    success and the notes' plateau scale ``1 / (eta_r L Pbar0^(L-1))``; and the same RL from the same pretrained
    model without the pretraining gate (``plasticity = "full"``, the null model; the same starting success):
    ``updates_to_level_null``."""
    check_number("level", level, 0.0, 1.0, low_open=True, high_open=True)
    rows = []
    for length in chain_lengths:
        setting = params.replace(chain_length=int(length))
        null = setting.replace(plasticity="full")
        strength = skill_strength(setting, base_compute)
        pbar0 = float(mean_step_success(setting, strength, initial_u(setting)))
        rows.append(
            {
                "chain_length": int(length),
                "initial_step_success": pbar0,
                "updates_to_level": rl_time_to_success(setting, strength, initial_u(setting), level),
                "plateau_scale": 1.0 / (setting.rl_lr * setting.chain_length * pbar0 ** (setting.chain_length - 1)),
                "updates_to_level_null": rl_time_to_success(null, strength, initial_u(null), level),
            }
        )
    return pd.DataFrame(rows)


@dataclass(frozen=True)
class CeilingScaling:
    """Final success against pretraining compute (`table`), the fit of the step failure over `window` rows and the
    exponent the model predicts."""

    table: pd.DataFrame
    fit: PowerLawFit
    predicted_exponent: float


def pretraining_ceiling(
    params: ModelParams, budget, base_computes, n_grid: int = 20, window=None, order: str = "sft_rl"
) -> CeilingScaling:
    """Final success at the optimal split of `budget` for each pretraining compute, and the log-log fit of the step
    failure ``1 - Pbar`` against ``C`` over the computes in `window` (``(low, high)``, inclusive; all by default)."""
    rows = []
    for base in base_computes:
        best = optimal_allocation(params, budget, base, order, n_grid)
        pbar = best.success ** (1.0 / params.chain_length)
        rows.append(
            {
                "base_compute": float(base),
                "sft_share": best.allocation.sft,
                "success": best.success,
                "step_failure": 1.0 - pbar,
                "task_failure": 1.0 - best.success,
            }
        )
    table = pd.DataFrame(rows)
    low, high = (-np.inf, np.inf) if window is None else window
    table["in_window"] = table["base_compute"].between(low, high)
    fitted = table[table["in_window"]]
    return CeilingScaling(
        table, fit_power_law(fitted["base_compute"], fitted["step_failure"]), predicted_ceiling_exponent(params)
    )


def ceiling_sweep(
    params: ModelParams, budget, budgets, base_computes, n_grid: int = 20, window=None, order: str = "sft_rl"
) -> pd.DataFrame:
    """The ceiling table (:func:`pretraining_ceiling` at `budget`, the ``main`` rows, with its fit repeated on every
    row) and the sweep of post-training budgets `budgets` over the computes inside `window`, in the model and in the
    null model without the pretraining gate (``plasticity = "full"``): rows (plasticity, budget, base_compute,
    sft_share, success, step_failure, task_failure, in_window, main, in_sweep, fitted_exponent, r2, fit_points,
    predicted_exponent, predicted_budget_exponent); ``in_sweep`` marks the sweep's rows (the main rows in the window
    belong to it when `budget` is one of `budgets`). The null model's ceiling at `budget` over every compute is set
    beside the main rows (``sft_share_null``, ``success_null``, ``step_failure_null``, NaN on the other rows), with
    its fit over the window on every row (``fitted_exponent_null``, ``r2_null``); the null's sweep at `budget`
    reuses those rows."""
    main = pretraining_ceiling(params, budget, base_computes, n_grid, window, order)
    # the same ceiling at `budget` in the null model (C3's null): columns of the main rows, its fit on every row
    null_plasticity = next(p for p in PLASTICITIES if p != params.plasticity)
    null = pretraining_ceiling(params.replace(plasticity=null_plasticity), budget, base_computes, n_grid, window, order)
    swept = float(budget) in {float(b) for b in budgets}
    nulls = null.table[["sft_share", "success", "step_failure"]].add_suffix("_null")
    rows = [main.table.join(nulls).assign(plasticity=params.plasticity, budget=float(budget), main=True,
                                          in_sweep=main.table["in_window"] & swept)]  # fmt: skip
    inside = main.table.loc[main.table["in_window"], "base_compute"].to_numpy()
    for plasticity in (params.plasticity, null_plasticity):
        setting = params.replace(plasticity=plasticity)
        for swept in budgets:
            if float(swept) == float(budget):
                if plasticity == params.plasticity:
                    continue
                found = null.table[null.table["in_window"]].assign(in_window=True)  # computed above
            else:
                found = pretraining_ceiling(setting, swept, inside, n_grid, None, order).table
            rows.append(found.assign(plasticity=plasticity, budget=float(swept), main=False, in_sweep=True))
    table = pd.concat(rows, ignore_index=True)
    return table.assign(fitted_exponent=-main.fit.slope, r2=main.fit.r2, fit_points=main.fit.n,
                        predicted_exponent=main.predicted_exponent,
                        predicted_budget_exponent=predicted_ceiling_exponent(params, "budget"),
                        fitted_exponent_null=-null.fit.slope, r2_null=null.fit.r2)  # fmt: skip


def budget_scaling(table: pd.DataFrame, plasticity: str = "pretrained") -> dict[str, float]:
    """The sweep of :func:`ceiling_sweep` for one plasticity (its ``in_sweep`` rows): the joint log-log fit of the
    step failure over the in-window computes and every budget, ``log(1 - Pbar) = c - a log C - b log B``
    (exponents a and b, R^2, points), and the compute exponent a_B fitted at each budget alone
    (``compute_exponent_<budget>``)."""
    rows = table[(table["plasticity"] == plasticity) & table["in_sweep"].astype(bool)]
    computes, budgets = rows["base_compute"].to_numpy(float), rows["budget"].to_numpy(float)
    failure = rows["step_failure"].to_numpy(float)
    if len(rows) < 4 or len(set(computes)) < 2 or len(set(budgets)) < 2:
        raise ValueError(f"a fit in compute and budget needs two of each, got {len(rows)} rows")
    if not (np.all(np.isfinite(failure)) and np.all(failure > 0) and np.all(computes > 0) and np.all(budgets > 0)):
        raise ValueError("a fit in compute and budget needs finite, positive failures, computes and budgets")
    design = np.column_stack([np.ones_like(computes), np.log(computes), np.log(budgets)])
    coef, *_ = np.linalg.lstsq(design, np.log(failure), rcond=None)
    residual = np.log(failure) - design @ coef
    spread = np.log(failure) - np.log(failure).mean()
    found = {"compute_exponent": float(-coef[1]), "budget_exponent": float(-coef[2]),
             "r2": float(1.0 - residual @ residual / (spread @ spread)), "points": len(rows)}  # fmt: skip
    for value, part in rows.groupby("budget"):
        if part["base_compute"].nunique() >= 3:
            found[f"compute_exponent_{value:g}"] = -fit_power_law(part["base_compute"], part["step_failure"]).slope
    return found


def allocation_shift(
    params: ModelParams, budget, base_computes, demo_qualities, reward_noises=None, n_grid: int = 20, rollouts=()
) -> pd.DataFrame:
    """The optimal SFT share per (demo quality, reward noise, pretraining compute) at one budget (the ``main`` rows,
    at the model's k rollouts per RL update), and per (k, demo quality, pretraining compute) at the first reward
    noise for each other k in `rollouts`: an RL update's mean-field drift does not depend on k, its cost k L does,
    so k sets RL's price (column ``rollouts``). Every row sets the null model without the pretraining gate
    (``plasticity = "full"``) beside the model, in the same setting: ``sft_share_null``, ``success_null``."""

    def both(setting: ModelParams, noises) -> pd.DataFrame:
        """The optimal allocation in the model and, in the same settings, in the null model (``_null`` columns)."""
        found = allocation_table(setting, [budget], base_computes, demo_qualities, noises, n_grid=n_grid)
        null = allocation_table(setting.replace(plasticity="full"), [budget], base_computes, demo_qualities, noises,
                                n_grid=n_grid)  # fmt: skip
        return found.join(null[["sft_share", "success"]].add_suffix("_null"))

    rows = [both(params, reward_noises).assign(rollouts=params.rollouts, main=True)]
    first_noise = [params.reward_noise if reward_noises is None else list(reward_noises)[0]]
    for k in dict.fromkeys(int(k) for k in rollouts):
        if k != params.rollouts:
            rows.append(both(params.replace(rollouts=k), first_noise).assign(rollouts=k, main=False))
    return pd.concat(rows, ignore_index=True)


def bonferroni_quantile(points: int, alpha: float = 0.05) -> float:
    """``z* = Phi^-1(1 - alpha / (2 points))``: the two-sided normal quantile that holds `points` intervals
    simultaneously at family-wise level `alpha` (Bonferroni)."""
    if points < 1:
        raise ValueError(f"a Bonferroni quantile needs at least one point, got {points}")
    check_number("alpha", alpha, 0.0, 1.0, low_open=True, high_open=True)
    return float(stats.norm.ppf(1.0 - alpha / (2 * points)))


def share_spans(table: pd.DataFrame, within) -> pd.Series:
    """The span (max - min) of the optimal SFT share within each group of the `within` columns."""
    return table.groupby(list(within))["sft_share"].agg(lambda s: s.max() - s.min())


def monotone_violation(
    table: pd.DataFrame, along: str, direction: int, value: str = "sft_share", within=("base_compute",)
) -> float:
    """The largest step of `value` against `direction` (+1: should not decrease, -1: should not increase) as
    `along` grows, within each group of the `within` columns: 0 when monotone, positive otherwise."""
    if direction not in (1, -1):
        raise ValueError(f"direction must be +1 or -1, got {direction!r}")
    worst = 0.0
    for _, group in table.groupby(list(within)) if within else [(None, table)]:
        steps = np.diff(group.sort_values(along)[value].to_numpy()) * direction
        worst = max(worst, float(-steps.min()) if steps.size else 0.0)
    return worst


def rl_amplification(params: ModelParams, base_compute, rl_updates, sft_demos=0.0) -> pd.DataFrame:
    """Per skill: RL's change of ``u`` (and of the step success) after optional SFT, from the pretrained model.

    Columns: rank, frequency ``p``, task_weight ``q``, task_relevant, strength ``s``, u_before, u_after, delta_u,
    success_before, success_after, delta_z (the logit's change), and the same RL in the null model without the
    pretraining gate (``plasticity = "full"``, ``dz/du = 1``; same pretrained start): success_before_null,
    success_after_null, delta_z_null."""
    strength = skill_strength(params, base_compute)
    before = post_train(params, strength, initial_u(params), sft_demos, 0.0)
    after = post_train(params, strength, before, 0.0, rl_updates)
    null = params.replace(plasticity="full")
    null_before = post_train(null, strength, initial_u(null), sft_demos, 0.0)
    null_after = post_train(null, strength, null_before, 0.0, rl_updates)
    return pd.DataFrame(
        {
            "rank": np.arange(1, params.n_skills + 1),
            "frequency": skill_frequencies(params),
            "task_weight": task_distribution(params),
            "task_relevant": task_mask(params),
            "strength": strength,
            "u_before": before,
            "u_after": after,
            "delta_u": after - before,
            "success_before": step_success(params, strength, before),
            "success_after": step_success(params, strength, after),
            "delta_z": logits(params, strength, after) - logits(params, strength, before),
            "success_before_null": step_success(null, strength, null_before),
            "success_after_null": step_success(null, strength, null_after),
            "delta_z_null": logits(null, strength, null_after) - logits(null, strength, null_before),
        }
    )


def amplification_summary(table: pd.DataFrame) -> dict[str, float]:
    """Largest ``|Delta u|`` off the task, and over task skills the Spearman correlation of the per-occurrence gain
    ``Delta u / q`` with the pretrained strength, and the mean step-success gain of the strongest and weakest
    quarter of task skills by strength. Where the table has the logit columns: the Spearman correlation of the
    per-occurrence logit change ``Delta z / q`` with the strength and the quarters' gains, in the model and in the
    null model without the pretraining gate (suffix ``_null``)."""
    task = table[table["task_relevant"]]
    off = table[~table["task_relevant"]]
    low, high = task["strength"].quantile([0.25, 0.75])

    def quarters(after: str, before: str) -> tuple[float, float]:
        gain = task[after] - task[before]
        return float(gain[task["strength"] >= high].mean()), float(gain[task["strength"] <= low].mean())

    def spearman(column: str) -> float:
        return float(stats.spearmanr(task[column] / task["task_weight"], task["strength"])[0])

    strong, weak = quarters("success_after", "success_before")
    found = {
        "off_task_max_abs_delta_u": float(off["delta_u"].abs().max()) if len(off) else 0.0,
        "spearman_gain_strength": spearman("delta_u"),
        "success_gain_strong": strong,
        "success_gain_weak": weak,
    }
    if {"delta_z", "delta_z_null", "success_before_null", "success_after_null"} <= set(table.columns):
        strong_null, weak_null = quarters("success_after_null", "success_before_null")
        found |= {
            "spearman_logit_strength": spearman("delta_z"),
            "spearman_logit_strength_null": spearman("delta_z_null"),
            "success_gain_strong_null": strong_null,
            "success_gain_weak_null": weak_null,
        }
    return found
