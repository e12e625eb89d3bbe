"""Paper 16's measured values for the claims and checks of ``config/claims/multistage_training.yaml``.

The paper was not found: the model is our reconstruction (the skill-chain model of :mod:`.model`), so the claims
are the abstract's four phenomena (and what the research notes and our derivation add) measured in that model, and
the checks are properties the model has by construction (the SFT fixed point, RL's zero rate off the task, the RL
rate's ranking by pretrained strength) or what the stochastic simulation verifies (the mean-field solution, an
equivalence test in the simulation's standard errors). Our derivation's exponents against our model's output are
info (K4: the compute exponent at every budget of the sweep, which can miss: a derivation is not a guarantee of
the code) or a claim (C10). Everything but the simulation is deterministic: a value
rests on the cells of a table (``runs`` counts them), not on seeds. Every hard and soft claim is measured beside
its null, the same measurement in the model without the pretraining gate (``plasticity = "full"``): C1, C2, C3,
C4, C5, C7 and C10 (and C6, info); a claim whose
null passes too, or whose null is missing, is not a holds (:class:`neurips26.common.claims.Measured`).

Evidence must be complete: a missing table or column, an empty table, a NaN or infinite cell that a value reads,
a repeated cell or a grid too small for the comparison leaves the claim inconclusive with the reason in the note
(:class:`Incomplete`), never a comparison of the rest.

``measure_claims(tables, comp)`` reads the tables ``complementarity``, ``plateau``, ``ceiling``, ``allocation``,
``amplification``, ``pretraining`` (as :func:`.experiment.phenomenon_table` writes them) and ``simulation`` (the
concatenation of :func:`.experiment.simulation_table` with columns ``config`` and ``seed``), and from ``comp`` (the
config's ``comparisons`` block) only the model's ``demo_quality`` and ``chain_length``. The thresholds are the
claims file's; :func:`threshold_mismatches` says where they differ from the ``comparisons`` block.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

import numpy as np
import pandas as pd

from neurips26.common.claims import Measured

from .evaluation import amplification_summary, bonferroni_quantile, budget_scaling, monotone_violation, share_spans
from .thresholds import THRESHOLD_KEYS, threshold_mismatches

__all__ = ["OFF_TASK_TOLERANCE", "SUCCESS_TOLERANCE", "THRESHOLD_KEYS", "measure_claims", "threshold_mismatches"]

SUCCESS_TOLERANCE = 1e-9  # C3: a fall of the final success larger than this (float64 noise of the optimiser) fails
OFF_TASK_TOLERANCE = 1e-9  # K3's threshold, for the note
PLATEAU_LENGTHS = (4, 8)  # C7: the research notes' pair, used when both were run


class Incomplete(ValueError):
    """The evidence of a claim is missing, non-finite or too thin to decide it."""


# --- reading the tables ------------------------------------------------------------------------------------------


def _table(tables: dict, name: str, columns: Sequence[str]) -> pd.DataFrame:
    table = tables.get(name)
    if table is None:
        raise Incomplete(f"no {name} table")
    if len(table) == 0:
        raise Incomplete(f"the {name} table is empty")
    missing = [c for c in columns if c not in table.columns]
    if missing:
        raise Incomplete(f"the {name} table lacks column(s) {missing}")
    return table


def _finite(table: pd.DataFrame, columns: Sequence[str], what: str) -> None:
    """Raise naming the first non-finite cells of `columns` (NaN, inf, or not a number at all)."""
    bad = []
    for column in columns:
        values = pd.to_numeric(table[column], errors="coerce").to_numpy(dtype=float)
        rows = np.flatnonzero(~np.isfinite(values))
        if rows.size:
            raw = table[column].iloc[rows[0]]
            text = str(values[rows[0]]) if pd.api.types.is_number(raw) else repr(raw)
            bad.append(f"{column} in {rows.size} row(s), e.g. {text} in row {table.index[rows[0]]}")
    if bad:
        raise Incomplete(f"{what}: non-finite values ({'; '.join(bad)})")


def _constant(table: pd.DataFrame, column: str, what: str) -> float:
    """The one value of a column the table repeats on every row (a fit's exponent, the grid size)."""
    _finite(table, [column], what)
    values = table[column].unique()
    if len(values) != 1:
        raise Incomplete(f"{what}: {column} takes {len(values)} values {sorted(values)[:4]}, expected one")
    return float(values[0])


def _unique_cells(table: pd.DataFrame, keys: Sequence[str], what: str) -> None:
    repeated = table.duplicated(list(keys), keep=False)
    if repeated.any():
        cell = table.loc[repeated, list(keys)].iloc[0].to_dict()
        raise Incomplete(f"{what}: {int(repeated.sum())} rows repeat a cell, e.g. {cell}")


def _guard(claim_id: str, measure: Callable[..., Measured], *args) -> Measured:
    try:
        return measure(*args)
    except Incomplete as error:
        return Measured(claim_id, math.nan, 0, note=str(error))


# --- the claims --------------------------------------------------------------------------------------------------


C1_NULL_COLUMNS = ["margin_null", "interior_share_null", "sft_only_null", "rl_only_null"]


def _fixed_cell(table: pd.DataFrame) -> pd.Series:
    """C1's cell fixed by the grid alone, not by its margins: the middle budget and the middle pretraining compute
    (the lower of the two middles of an even count); (budget 1e4, compute 1e3) at smoke, quick and paper scale."""
    budgets, computes = sorted(table["budget"].unique()), sorted(table["base_compute"].unique())
    budget, compute = budgets[(len(budgets) - 1) // 2], computes[(len(computes) - 1) // 2]
    cell = table[(table["budget"] == budget) & (table["base_compute"] == compute)]
    if len(cell) != 1:
        where = f"budget {budget:g}, compute {compute:g}"
        raise Incomplete(f"complementarity: {len(cell)} row(s) at the fixed cell ({where})")
    return cell.iloc[0]


def _complementarity(tables: dict) -> Measured:
    """C1: the largest margin of the best split strictly inside (0, 1) over the better single stage, over (budget,
    compute). The gain of the best split over the whole grid is >= 0 by construction (it holds f = 0 and f = 1);
    the margin is what mixing adds and can be negative. Its null is the same largest margin in the model without
    the pretraining gate (``margin_null``; NaN, so not a holds, where the table lacks it); the margins at the cell
    fixed by the grid (:func:`_fixed_cell`) are set beside the maxima in the note."""
    columns = ["budget", "base_compute", "sft_only", "rl_only", "interior_share", "interior", "margin"]
    table = _table(tables, "complementarity", columns)
    _finite(table, columns, "complementarity")
    _unique_cells(table, ["budget", "base_compute"], "complementarity")
    best = table.loc[table["margin"].idxmax()]
    positive = int((table["margin"] > 0).sum())
    fixed = _fixed_cell(table)
    note = (
        f"largest margin at budget {best['budget']:g}, pretraining compute {best['base_compute']:g}: best interior "
        f"split (SFT share {best['interior_share']:.3g}) {best['interior']:.4g} against SFT alone "
        f"{best['sft_only']:.4g} and RL alone {best['rl_only']:.4g}; an interior split beats both in {positive} of "
        f"{len(table)} setting(s); at the fixed cell (budget {fixed['budget']:g}, compute {fixed['base_compute']:g}) "
        f"the margin is {fixed['margin']:.4g}"
    )
    null = math.nan
    missing = [c for c in C1_NULL_COLUMNS if c not in table.columns]
    if missing:
        note += f"; no null measured (the complementarity table lacks {missing})"
    else:
        _finite(table, C1_NULL_COLUMNS, "complementarity (null)")
        worst = table.loc[table["margin_null"].idxmax()]
        null = float(worst["margin_null"])
        note += (
            f"; the null without the pretraining gate: largest margin {null:.4g} at budget {worst['budget']:g}, "
            f"compute {worst['base_compute']:g} (SFT share {worst['interior_share_null']:.3g}, SFT alone "
            f"{worst['sft_only_null']:.4g}, RL alone {worst['rl_only_null']:.4g}), positive in "
            f"{int((table['margin_null'] > 0).sum())} of {len(table)}; at the fixed cell {fixed['margin_null']:.4g}"
        )
    return Measured("C1", float(best["margin"]), len(table), note=note, null=null)


def _main_rows(tables: dict, name: str, columns: Sequence[str]) -> pd.DataFrame:
    """The rows of a table flagged ``main`` (the ceiling at its budget in the model, the allocation at the model's
    k); every row where the table has no such column."""
    table = _table(tables, name, columns)
    if "main" not in table.columns:
        return table
    if table["main"].isna().any():
        raise Incomplete(f"{name}: the column main has missing values")
    main = table[table["main"].astype(bool)]
    if main.empty:
        raise Incomplete(f"the {name} table has no main rows")
    return main


def _fitted_exponent(claim_id: str, tables: dict, name: str, what: str) -> Measured:
    """K4, C8: |fitted / predicted - 1| of a table's log-log fit (columns repeated on every main row)."""
    table = _main_rows(tables, name, ["base_compute", "fitted_exponent", "predicted_exponent", "fit_points"])
    points = _constant(table, "fit_points", name)
    if points < 3:
        raise Incomplete(f"{name}: the fit rests on {points:g} point(s); a power law needs 3")
    if "in_window" in table.columns and int(table["in_window"].astype(bool).sum()) != points:
        raise Incomplete(f"{name}: {int(table['in_window'].sum())} row(s) in the fit window but fit_points {points:g}")
    fitted = _constant(table, "fitted_exponent", name)
    predicted = _constant(table, "predicted_exponent", name)
    if predicted <= 0:
        raise Incomplete(f"{name}: the predicted exponent is {predicted:g}, not positive")
    rows = table[table["in_window"].astype(bool)] if "in_window" in table.columns else table
    _finite(rows, ["base_compute"], name)
    note = (
        f"{what}: fitted exponent {fitted:.4g} over {points:g} computes in "
        f"[{rows['base_compute'].min():g}, {rows['base_compute'].max():g}] against the predicted {predicted:.4g}"
    )
    if "r2" in table.columns:
        note += f" (fit R^2 {table['r2'].iloc[0]:.4g})"
    return Measured(claim_id, abs(fitted / predicted - 1.0), int(points), note=note)


def _notes_ceiling(tables: dict) -> Measured:
    """C9: the ceiling's fitted exponent against the research notes' heuristic (alpha - 1) / alpha (the pretraining
    table's predicted exponent) instead of the model's derived one."""
    notes = _constant(_table(tables, "pretraining", ["predicted_exponent"]), "predicted_exponent", "pretraining")
    ceiling = _main_rows(tables, "ceiling", ["predicted_exponent"]).assign(predicted_exponent=notes)
    what = "step failure against pretraining compute, against the notes' heuristic (alpha - 1) / alpha"
    return _fitted_exponent("C9", {"ceiling": ceiling}, "ceiling", what)


def _power_law_r2(table: pd.DataFrame, success: str, r2: float) -> tuple[float, str]:
    """C3's value for one model: the fit's R^2, or 0 when the final success (column `success`) falls by more than
    :data:`SUCCESS_TOLERANCE` anywhere as the pretraining compute grows; with a description of the trend."""
    ordered = table.sort_values("base_compute")
    computes, values = ordered["base_compute"].to_numpy(), ordered[success].to_numpy()
    fall = monotone_violation(table, "base_compute", +1, value=success, within=())
    trend = (
        f"final success {values[0]:.4g} at compute {computes[0]:g} to {values[-1]:.4g} at {computes[-1]:g} "
        f"({len(table)} computes)"
    )
    if fall > SUCCESS_TOLERANCE:
        k = int(np.argmin(np.diff(values)))
        return 0.0, (
            f"value set to 0: the final success falls by {fall:.3g} from compute {computes[k]:g} to "
            f"{computes[k + 1]:g}; fit R^2 {r2:.4g}; {trend}"
        )
    return r2, f"{trend}, never falling"


C3_NULL_COLUMNS = ["success_null", "r2_null"]


def _ceiling_power_law(tables: dict) -> Measured:
    """C3: the fit's R^2, or 0 when the final success falls anywhere as the pretraining compute grows; its null is
    the same measurement of the null model without the pretraining gate at the same budget and computes (NaN, so
    that a holds is inconclusive, where the table lacks it)."""
    table = _main_rows(tables, "ceiling", ["base_compute", "success", "r2", "fit_points"])
    points = _constant(table, "fit_points", "ceiling")
    if points < 3:
        raise Incomplete(f"ceiling: the fit rests on {points:g} point(s); a power law needs 3")
    r2 = _constant(table, "r2", "ceiling")
    _finite(table, ["base_compute", "success"], "ceiling")
    _unique_cells(table, ["base_compute"], "ceiling")
    value, trend = _power_law_r2(table, "success", r2)
    note = f"R^2 of the log-log fit of the step failure over {points:g} computes; {trend}"
    null = math.nan
    if set(C3_NULL_COLUMNS) <= set(table.columns):
        _finite(table, C3_NULL_COLUMNS, "ceiling (null)")
        null, null_trend = _power_law_r2(table, "success_null", _constant(table, "r2_null", "ceiling (null)"))
        note += f"; the null without the pretraining gate: R^2 {null:.4g} ({null_trend})"
    else:
        note += f"; no null measured (the ceiling table lacks {C3_NULL_COLUMNS})"
    return Measured("C3", value, int(points), note=note, null=null)


SWEEP_COLUMNS = ["plasticity", "budget", "base_compute", "step_failure", "in_sweep", "predicted_budget_exponent"]
SWEEP_COMPUTES = 3  # computes a per-budget power law needs at every budget of the sweep


def _sweep(tables: dict, plasticity: str) -> dict:
    """The budget sweep's fit for one plasticity (:func:`.evaluation.budget_scaling`) from complete evidence, with
    its budgets and, per budget, the step failure at the smallest and the largest compute (``failures``)."""
    table = _table(tables, "ceiling", SWEEP_COLUMNS)
    rows = table[table["plasticity"] == plasticity]
    if rows.empty:
        raise Incomplete(f"ceiling: no rows of the {'null ' if plasticity == 'full' else ''}model ({plasticity})")
    rows = rows[rows["in_sweep"].astype(bool)]
    _finite(rows, ["budget", "base_compute", "step_failure"], f"ceiling ({plasticity})")
    _unique_cells(rows, ["budget", "base_compute"], f"ceiling ({plasticity})")
    per_budget = rows.groupby("budget")["base_compute"].nunique()
    if len(per_budget) < 2 or per_budget.min() < SWEEP_COMPUTES:
        counts = ", ".join(f"{n} at B = {b:g}" for b, n in per_budget.items())
        raise Incomplete(
            f"ceiling ({plasticity}): {len(per_budget)} budget(s), computes in the window {counts or 'none'}; the "
            f"sweep needs 2 budgets and {SWEEP_COMPUTES} computes at each"
        )
    if (rows["step_failure"] <= 0).any():
        raise Incomplete(f"ceiling ({plasticity}): a step failure <= 0, no log-log fit")
    found = budget_scaling(rows, plasticity)
    found["budgets"] = sorted(rows["budget"].unique())
    found["failures"] = {
        budget: tuple(part.sort_values("base_compute")["step_failure"].iloc[[0, -1]])
        for budget, part in rows.groupby("budget")
    }
    found["computes"] = (rows["base_compute"].min(), rows["base_compute"].max())
    return found


def _exponent(found: dict, budget: float) -> float:
    """The compute exponent fitted at one budget of the sweep (every budget has one: :func:`_sweep` checks)."""
    return found[f"compute_exponent_{budget:g}"]


def _persistence(found: dict) -> tuple[float, float, float]:
    """(compute exponent at the smallest budget, at the largest, their ratio; 0 unless the first is positive)."""
    first, last = (_exponent(found, b) for b in (found["budgets"][0], found["budgets"][-1]))
    return first, last, (last / first if first > 0 else 0.0)


def _failure_gaps(found: dict) -> str:
    """Per budget: the step failure at the smallest compute, at the largest, and their difference."""
    low, high = found["computes"]
    gaps = [
        f"B = {b:g}: {first:.3g} - {last:.3g} = {first - last:.3g}" for b, (first, last) in found["failures"].items()
    ]
    return f"{', '.join(gaps)} (C = {low:g} and {high:g})"


def _ceiling_across_budgets(tables: dict) -> Measured:
    """C2: the compute exponent of the step failure at the largest budget of the sweep over that at the smallest,
    in the model; its null is the same ratio in the model without the pretraining gate. The absolute gaps of the
    failure between the smallest and the largest compute at each budget are in the note."""
    model, null = _sweep(tables, "pretrained"), _sweep(tables, "full")
    first, last, ratio = _persistence(model)
    null_first, null_last, null_ratio = _persistence(null)
    low, high = model["budgets"][0], model["budgets"][-1]
    every = ", ".join(f"{_exponent(model, b):.3g}" for b in model["budgets"])
    note = (
        f"compute exponent of the step failure {first:.4g} at budget {low:g} and {last:.4g} at {high:g} "
        f"(at each budget: {every}); the null without the pretraining gate: {null_first:.4g} and {null_last:.4g} "
        f"(ratio {null_ratio:.3g}); the failure between the smallest and the largest compute, model: "
        f"{_failure_gaps(model)}; null: {_failure_gaps(null)}"
    )
    return Measured("C2", ratio, len(model["budgets"]), note=note, null=null_ratio)


def _predicted(tables: dict, column: str, what: str) -> float:
    value = _constant(_table(tables, "ceiling", [column]), column, "ceiling")
    if value <= 0:
        raise Incomplete(f"ceiling: the predicted {what} exponent is {value:g}, not positive")
    return value


def _derivation_at_every_budget(tables: dict) -> Measured:
    """K4 (info): the largest |a_B / a_predicted - 1| over the budgets of the sweep, a_B the compute exponent of the
    step failure fitted at budget B alone (our derivation's exponent 2 (alpha_t - 1) / (alpha_t + 2 alpha)): how
    far our derivation is from our model's output, which it can miss (it does at quick scale's smallest budget)."""
    predicted = _predicted(tables, "predicted_exponent", "compute")
    model = _sweep(tables, "pretrained")
    errors = {b: abs(_exponent(model, b) / predicted - 1.0) for b in model["budgets"]}
    worst = max(errors, key=errors.get)
    every = ", ".join(f"B = {b:g}: {_exponent(model, b):.3g} ({100 * errors[b]:.0f}% off)" for b in model["budgets"])
    note = (
        f"compute exponent of the step failure fitted at each budget of the sweep against the predicted "
        f"{predicted:.4g}: {every}; the largest deviation at B = {worst:g}"
    )
    return Measured("K4", errors[worst], len(errors), note=note)


def _budget_exponent(tables: dict) -> Measured:
    """C10: |b / b_predicted - 1| of the joint fit ``1 - Pbar ~ C^-a B^-b`` over the sweep, in the model (the
    prediction that the ceiling scales with C^2 B, tested on our model's output); the null is the same error of the
    model without the pretraining gate."""
    predicted = _predicted(tables, "predicted_budget_exponent", "budget")
    model, null = _sweep(tables, "pretrained"), _sweep(tables, "full")
    error = abs(model["budget_exponent"] / predicted - 1.0)
    note = (
        f"joint fit over {model['points']} (compute, budget) cells: budget exponent {model['budget_exponent']:.4g} "
        f"against the predicted {predicted:.4g}, compute exponent {model['compute_exponent']:.4g} (C^2 B predicts "
        f"twice the budget's: ratio {model['compute_exponent'] / model['budget_exponent']:.3g}), R^2 "
        f"{model['r2']:.4g}; the null without the pretraining gate: budget exponent {null['budget_exponent']:.4g}, "
        f"compute exponent {null['compute_exponent']:.4g}"
    )
    null_error = abs(null["budget_exponent"] / predicted - 1.0)
    return Measured("C10", error, int(model["points"]), note=note, null=null_error)


ALLOCATION_COLUMNS = ["base_compute", "demo_quality", "reward_noise", "rollouts", "sft_share"]


def _allocation_rows(tables: dict) -> tuple[pd.DataFrame, list[str]]:
    """Every row of the allocation table (the model's k and each swept k) from complete evidence, with the extra
    columns (budget, chain length) that split its settings further."""
    table = _table(tables, "allocation", ALLOCATION_COLUMNS)
    extra = [c for c in ("budget", "chain_length") if c in table.columns]
    _finite(table, [*ALLOCATION_COLUMNS, *extra], "allocation")
    _unique_cells(table, ["rollouts", "reward_noise", "demo_quality", "base_compute", *extra], "allocation")
    short = [axis for axis in ("demo_quality", "base_compute") if table[axis].nunique() < 2]
    if short:
        raise Incomplete(f"allocation: a single value of {short}, no direction or span along it")
    return table, extra


def _where(spans: pd.Series) -> str:
    cell = dict(zip(spans.index.names, spans.idxmin() if spans.index.nlevels > 1 else (spans.idxmin(),)))
    return ", ".join(f"{k} {v:g}" for k, v in cell.items())


def _null_shares(table: pd.DataFrame) -> pd.DataFrame | None:
    """The allocation table with the null model's optimal share as ``sft_share`` (None where the table lacks it)."""
    if "sft_share_null" not in table.columns:
        return None
    _finite(table, ["sft_share_null"], "allocation (null)")
    return table.assign(sft_share=table["sft_share_null"])


def _smallest_span(table: pd.DataFrame, extra: list[str]) -> tuple[pd.Series, pd.Series]:
    """The spans of the optimal SFT share along rho and along the pretraining compute, per setting."""
    along_rho = share_spans(table, ["rollouts", "reward_noise", "base_compute", *extra])
    along_compute = share_spans(table, ["rollouts", "reward_noise", "demo_quality", *extra])
    return along_rho, along_compute


def _allocation_span(tables: dict) -> Measured:
    """C4: the smallest span of the optimal SFT share along rho (over the settings of k, reward noise and compute)
    and along the pretraining compute (over the settings of k, reward noise and rho): the span must hold in every
    setting, every swept number of rollouts k included, not in the best one. The smallest spans per k and the
    reward noise's own span in the note. The null is the same smallest span of the null model's optimal share
    (without the pretraining gate) in the same settings."""
    table, extra = _allocation_rows(tables)
    along_rho, along_compute = _smallest_span(table, extra)
    per_k = "; ".join(
        f"k = {k:g}: {along_rho.xs(k, level='rollouts').min():.3g} along rho, "
        f"{along_compute.xs(k, level='rollouts').min():.3g} along the compute"
        for k in sorted(table["rollouts"].unique())
    )
    by_noise = share_spans(table, ["rollouts", "base_compute", "demo_quality", *extra])
    note = (
        f"smallest span of the optimal SFT share along rho {along_rho.min():.3g} (at {_where(along_rho)}; largest "
        f"{along_rho.max():.3g}), along the pretraining compute {along_compute.min():.3g} (at "
        f"{_where(along_compute)}; largest {along_compute.max():.3g}); smallest per k: {per_k}; along the reward "
        f"noise at most {by_noise.max():.3g} (not claimed); {len(table)} settings"
    )
    null, nulls = math.nan, _null_shares(table)
    if nulls is None:
        note += "; no null measured (the allocation table lacks sft_share_null)"
    else:
        null_rho, null_compute = _smallest_span(nulls, extra)
        null = float(min(null_rho.min(), null_compute.min()))
        note += (
            f"; the null without the pretraining gate: smallest span along rho {null_rho.min():.3g}, along the "
            f"compute {null_compute.min():.3g} (largest {null_compute.max():.3g})"
        )
    return Measured("C4", float(min(along_rho.min(), along_compute.min())), len(table), note=note, null=null)


def _violations(table: pd.DataFrame, extra: list[str]) -> tuple[float, list[str]]:
    """The largest step of the optimal SFT share against the predicted directions over every k, and the steps per k."""
    parts, worst = [], 0.0
    for k, part in table.groupby("rollouts"):
        by_rho = monotone_violation(part, "demo_quality", +1, within=("base_compute", "reward_noise", *extra))
        by_compute = monotone_violation(part, "base_compute", -1, within=("demo_quality", "reward_noise", *extra))
        worst = max(worst, by_rho, by_compute)
        parts.append(f"k = {k:g}: {by_rho:.3g} along rho, {by_compute:.3g} along the compute")
    return worst, parts


def _allocation_direction(tables: dict) -> Measured:
    """C5: the largest step of the optimal SFT share against the predicted direction (down as rho grows, up as
    the compute grows) in any setting, every swept number of rollouts k included, minus one grid step 1 / n_grid;
    the steps per k in the note. The null is the same of the null model's optimal share (without the pretraining
    gate) in the same settings."""
    table, extra = _allocation_rows(tables)
    n_grid = _constant(_table(tables, "allocation", ["n_grid"]), "n_grid", "allocation")
    if n_grid < 1 or n_grid != int(n_grid):
        raise Incomplete(f"allocation: n_grid {n_grid:g} is not a positive integer")
    worst, parts = _violations(table, extra)
    step = 1.0 / n_grid
    note = (
        f"largest step against the predicted direction (a fall of the optimal SFT share as rho grows, a rise as "
        f"the compute grows) {worst:.3g}, tolerance one grid step 1/{n_grid:g} = {step:.3g}; per k: "
        f"{'; '.join(parts)}; {table['demo_quality'].nunique()} rho x {table['base_compute'].nunique()} computes x "
        f"{table['reward_noise'].nunique()} reward noise(s) x {table['rollouts'].nunique()} k"
    )
    null, nulls = math.nan, _null_shares(table)
    if nulls is None:
        note += "; no null measured (the allocation table lacks sft_share_null)"
    else:
        null_worst, null_parts = _violations(nulls, extra)
        null = null_worst - step
        note += f"; the null without the pretraining gate: largest step {null_worst:.3g} ({'; '.join(null_parts)})"
    return Measured("C5", worst - step, len(table), note=note, null=null)


def _task_skills(tables: dict) -> tuple[pd.DataFrame, pd.Series]:
    columns = ["task_relevant", "task_weight", "strength", "delta_u", "success_before", "success_after"]
    table = _table(tables, "amplification", columns)
    if table["task_relevant"].isna().any():
        raise Incomplete("amplification: task_relevant has missing values")
    return table, table["task_relevant"].astype(bool)


def _amplification(tables: dict) -> Measured:
    """K5: Spearman of Delta u / q with the strength over task skills, or -1 when the strongest quarter of task
    skills does not gain more step success than the weakest quarter (the RL rate's form)."""
    table, relevant = _task_skills(tables)
    task = table[relevant]
    if len(task) < 3:
        raise Incomplete(f"amplification: {len(task)} task skill(s); a rank correlation needs 3")
    _finite(task, ["task_weight", "strength", "delta_u", "success_before", "success_after"], "amplification (task)")
    if (task["task_weight"] <= 0).any():
        raise Incomplete(f"amplification: {int((task['task_weight'] <= 0).sum())} task skill(s) with task_weight <= 0")
    if task["strength"].nunique() < 2 or (task["delta_u"] / task["task_weight"]).nunique() < 2:
        raise Incomplete("amplification: the strength or Delta u / q is constant over the task skills: no rank order")
    summary = amplification_summary(table.assign(task_relevant=relevant))
    rho, strong, weak = (summary[k] for k in ("spearman_gain_strength", "success_gain_strong", "success_gain_weak"))
    if not np.isfinite(rho):
        raise Incomplete("amplification: the Spearman correlation is undefined (strength or Delta u / q constant)")
    gains = f"step-success gain of the strongest quarter {strong:.4g}, of the weakest {weak:.4g}"
    if not strong > weak:
        note = f"value set to -1 (fails): the {gains}, the strongest not above; Spearman {rho:.4g}"
        return Measured("K5", -1.0, len(task), note=note)
    note = f"Spearman of Delta u / q with the strength over {len(task)} task skills; {gains}"
    return Measured("K5", float(rho), len(task), note=note)


def _selective_amplification(tables: dict) -> Measured:
    """C6 (info): Spearman of the per-occurrence logit change Delta z / q with the strength over task skills (or -1
    unless the strongest quarter gains more step success than the weakest), in the model, beside the same
    measurement in the model without the pretraining gate. Neither side can fail in this model: ``Delta z = s Delta
    u`` (K5), and without the gate the starting logits ``z0 + s u0`` (``z0 = -u0``) put every start in
    ``[sigmoid(z0), 1/2]``, where REINFORCE's ``pi (1 - pi)`` rises with ``s``."""
    table, relevant = _task_skills(tables)
    columns = ["delta_z", "delta_z_null", "success_before_null", "success_after_null"]
    missing = [c for c in columns if c not in table.columns]
    if missing:
        raise Incomplete(f"the amplification table lacks column(s) {missing} (the null model)")
    task = table[relevant]
    if len(task) < 3:
        raise Incomplete(f"amplification: {len(task)} task skill(s); a rank correlation needs 3")
    _finite(task, ["task_weight", "strength", "success_before", "success_after", *columns], "amplification (task)")
    if (task["task_weight"] <= 0).any() or task["strength"].nunique() < 2:
        raise Incomplete("amplification: a task weight <= 0 or a constant strength: no rank order")
    found = amplification_summary(table.assign(task_relevant=relevant))
    values = []
    for suffix in ("", "_null"):
        rho = found[f"spearman_logit_strength{suffix}"]
        if not np.isfinite(rho):
            raise Incomplete(f"amplification: the Spearman correlation{suffix} is undefined (Delta z / q constant)")
        values.append(rho if found[f"success_gain_strong{suffix}"] > found[f"success_gain_weak{suffix}"] else -1.0)
    note = (
        f"Spearman of Delta z / q with the strength over {len(task)} task skills {found['spearman_logit_strength']:.4g}"
        f" (strongest quarter's step-success gain {found['success_gain_strong']:.4g}, weakest "
        f"{found['success_gain_weak']:.4g}); the null without the pretraining gate "
        f"{found['spearman_logit_strength_null']:.4g} (gains {found['success_gain_strong_null']:.4g} and "
        f"{found['success_gain_weak_null']:.4g}); a value of -1 means the strongest quarter did not gain more; "
        "RL without the pretraining gate amplifies selectively too when the null reaches the threshold"
    )
    return Measured("C6", float(values[0]), len(task), note=note, null=float(values[1]))


def _plateau(tables: dict) -> Measured:
    """C7: RL-alone updates to P = 1/2 at the longest chain over the shortest (L = 8 over L = 4 when both ran); the
    null is the same ratio of RL alone from the same pretrained model without the pretraining gate (the target
    P = 1/2 asks a higher step success of longer chains in both)."""
    table = _table(tables, "plateau", ["chain_length", "updates_to_level"])
    _finite(table, ["chain_length"], "plateau")
    _unique_cells(table, ["chain_length"], "plateau")
    series = table.set_index("chain_length")["updates_to_level"].sort_index()
    if len(series) < 2:
        raise Incomplete(f"plateau: {len(series)} chain length(s); a ratio needs 2")
    if not set(PLATEAU_LENGTHS) <= set(series.index):
        raise Incomplete(f"plateau: the chain lengths {list(series.index)} do not include both of {PLATEAU_LENGTHS}")
    short, long = PLATEAU_LENGTHS
    listed = ", ".join(f"L={length:g}: {value:.4g}" for length, value in series.items())
    used = pd.to_numeric(series[[short, long]], errors="coerce")
    if not np.isfinite(used.to_numpy(dtype=float)).all():
        raise Incomplete(f"plateau: updates to P = 1/2 not finite at L = {short:g} or {long:g} ({listed})")
    if used[short] <= 0:
        raise Incomplete(f"plateau: RL alone starts at P >= 1/2 at L = {short:g} (0 updates); no plateau to compare")
    note = f"updates to P = 1/2 at L = {long:g} over L = {short:g}; RL alone from the pretrained model: {listed}"
    null = math.nan
    if "updates_to_level_null" in table.columns:
        nulls = table.set_index("chain_length")["updates_to_level_null"].sort_index()
        pair = pd.to_numeric(nulls[[short, long]], errors="coerce").to_numpy(dtype=float)
        # a null that never reaches P = 1/2 at L = 8 (inf) is not finite: nothing to beat, a holds is inconclusive
        null = float(pair[1] / pair[0]) if np.isfinite(pair).all() and pair[0] > 0 else math.nan
        listed_null = ", ".join(f"L={length:g}: {value:.4g}" for length, value in nulls.items())
        note += f"; the null without the pretraining gate: ratio {null:.4g} ({listed_null})"
    else:
        note += "; no null measured (the plateau table lacks updates_to_level_null)"
    return Measured("C7", float(used[long] / used[short]), len(series), note=note, null=null)


def _sft_fixed_point(tables: dict, comp: dict) -> Measured:
    """K1: at the largest budget, the largest excess of SFT alone over rho^L, over the pretraining computes."""
    try:
        rho, length = float(comp["demo_quality"]), comp["chain_length"]
    except KeyError as error:
        raise Incomplete(f"the comparisons lack the model's {error.args[0]}") from None
    if not (0.0 <= rho <= 1.0) or int(length) != length or length < 1:
        raise Incomplete(f"demo_quality {rho} must lie in [0, 1] and chain_length {length} be a positive integer")
    table = _table(tables, "complementarity", ["budget", "base_compute", "sft_only"])
    _finite(table, ["budget"], "complementarity")
    largest = table["budget"].max()
    rows = table[table["budget"] == largest]
    _finite(rows, ["base_compute", "sft_only"], f"complementarity at budget {largest:g}")
    ceiling = rho ** int(length)
    worst = rows.loc[rows["sft_only"].idxmax()]
    note = (
        f"SFT alone at budget {largest:g}: at most {worst['sft_only']:.4g} (compute {worst['base_compute']:g}) "
        f"against rho^L = {rho:g}^{int(length)} = {ceiling:.4g}, over {len(rows)} compute(s)"
    )
    return Measured("K1", float(rows["sft_only"].max() - ceiling), len(rows), note=note)


AGREEMENT_FLOOR = 1e-12  # K2: where the simulation has no spread (update 0), a gap above this fails
NO_SPREAD_VALUE = 1e9  # K2's value then (infinitely far out, kept finite so that it is decided)
AGREEMENT_ALPHA = 0.05  # K2, K2b: the family-wise error of the Bonferroni bound, two-sided over the N points


def _agreement_points(tables: dict) -> dict:
    """Per recorded point (config, update[, stage]): the signed gap mean over seeds of the simulated success - the
    mean-field success, its standard error (``sqrt(sum of the seeds' squared standard errors) / seeds``, each
    seed's runs independent), the seeds per config and the Bonferroni quantile ``z* = Phi^-1(1 - alpha / (2 N))``
    over the N points."""
    columns = ["config", "seed", "update", "success_sim", "success_theory", "success_sim_se"]
    table = _table(tables, "simulation", columns)
    _finite(table, ["seed", "update", "success_sim", "success_theory", "success_sim_se"], "simulation")
    keys = ["config", "update", *(["stage"] if "stage" in table.columns else [])]
    _unique_cells(table, [*keys, "seed"], "simulation")
    seeds = table.groupby("config")["seed"].nunique()
    per_point = table.groupby(keys)["seed"].nunique()
    short = per_point[per_point.to_numpy() != seeds.reindex(per_point.index.get_level_values("config")).to_numpy()]
    if len(short):
        example = ", ".join(f"{k} {v}" for k, v in zip(keys, short.index[0]))
        raise Incomplete(f"simulation: {len(short)} recorded update(s) lack some seed of their config, e.g. {example}")
    grouped = table.groupby(keys)
    means = grouped[["success_sim", "success_theory"]].mean()
    se = np.sqrt(grouped["success_sim_se"].agg(lambda v: float((v**2).sum()))) / grouped["seed"].nunique()
    gap = means["success_sim"] - means["success_theory"]
    z_star = bonferroni_quantile(len(gap), AGREEMENT_ALPHA)
    return {"keys": keys, "gap": gap, "se": se, "seeds": seeds, "z_star": z_star}


def _at(keys: list[str], index) -> str:
    return ", ".join(f"{k} {v}" for k, v in zip(keys, index))


def _agreement(tables: dict) -> Measured:
    """K2: an equivalence test of the simulation and the mean-field solution: the largest, over configurations and
    recorded updates, of ``|gap| + z* SE`` (the far end of each point's simultaneous interval for the gap,
    :func:`_agreement_points`) must stay within the claims file's margin; a point without spread (update 0) must
    agree to float precision."""
    found = _agreement_points(tables)
    keys, gap, se, seeds, z_star = (found[k] for k in ("keys", "gap", "se", "seeds", "z_star"))
    frozen = (se <= 0) & (gap.abs() > AGREEMENT_FLOOR)
    if frozen.any():
        note = (
            f"value set to {NO_SPREAD_VALUE:g} (fails): a gap of {gap.abs()[frozen].max():.3g} where the simulation "
            f"has no spread ({_at(keys, gap.abs()[frozen].idxmax())})"
        )
        return Measured("K2", NO_SPREAD_VALUE, int(seeds.min()), note=note)
    bound = gap.abs() + z_star * se
    worst = bound.idxmax()
    counts = f"{int(seeds.min())}" if seeds.min() == seeds.max() else f"{int(seeds.min())}-{int(seeds.max())}"
    largest = gap.abs().groupby(level="config").max()
    per_config = "; ".join(
        f"{name}: {bound.xs(name, level='config').max():.3g} (largest |gap| {largest[name]:.3g})"
        for name in seeds.index
    )
    note = (
        f"largest |gap| + z* SE at {_at(keys, worst)}: {abs(gap[worst]):.3g} + {z_star:.3g} x {se[worst]:.3g} = "
        f"{bound[worst]:.3g}, z* = Phi^-1(1 - {AGREEMENT_ALPHA:g}/(2 x {len(gap)} points)); per config {per_config};"
        f" {len(seeds)} config(s) x {counts} seed(s); the largest |gap| alone {gap.abs().max():.3g}"
    )
    return Measured("K2", float(bound.max()), int(seeds.min()), note=note)


def _agreement_bias(tables: dict) -> Measured:
    """K2b (info): the largest |gap| / SE over the points with spread, in units of the Bonferroni quantile z*
    (above 1: some point's gap is significant at family-wise level alpha, a bias of the mean-field approximation
    that more runs expose), with the signed mean gap per configuration in the note."""
    found = _agreement_points(tables)
    keys, gap, se, seeds, z_star = (found[k] for k in ("keys", "gap", "se", "seeds", "z_star"))
    spread = se > 0
    if not spread.any():
        raise Incomplete("simulation: no recorded point has spread; no standard error to measure the gap in")
    z = gap[spread].abs() / se[spread]
    bias = "; ".join(
        f"{name}: mean gap {gap.xs(name, level='config').mean():+.3g} (largest {z.xs(name, level='config').max():.3g}"
        " SE)"
        for name in seeds.index
    )
    note = (
        f"largest |gap| / SE {z.max():.3g} at {_at(keys, z.idxmax())} against z* = {z_star:.3g} ({len(gap)} points); "
        f"signed gap sim - theory per config: {bias}"
    )
    return Measured("K2b", float(z.max() / z_star), int(seeds.min()), note=note)


def _off_task(tables: dict) -> Measured:
    """K3: the largest |Delta u| of RL on task-irrelevant skills."""
    table, relevant = _task_skills(tables)
    off = table[~relevant]
    if off.empty:
        raise Incomplete("amplification: no task-irrelevant skill, nothing to check")
    _finite(off, ["delta_u"], "amplification (off the task)")
    largest = off["delta_u"].abs()
    where = f" (rank {off.loc[largest.idxmax(), 'rank']})" if "rank" in off.columns and largest.max() > 0 else ""
    note = f"largest |Delta u| over {len(off)} task-irrelevant skills{where}; tolerance {OFF_TASK_TOLERANCE:g}"
    return Measured("K3", float(largest.max()), len(off), note=note)


def measure_claims(tables: dict[str, pd.DataFrame], comp: dict) -> list[Measured]:
    """One :class:`Measured` per claim and check of the claims file (module docstring)."""
    return [
        _guard("C1", _complementarity, tables),
        _guard("C2", _ceiling_across_budgets, tables),
        _guard("C3", _ceiling_power_law, tables),
        _guard("C4", _allocation_span, tables),
        _guard("C5", _allocation_direction, tables),
        _guard("C6", _selective_amplification, tables),
        _guard("C7", _plateau, tables),
        _guard("C8", _fitted_exponent, "C8", tables, "pretraining", "excess pretraining loss against compute"),
        _guard("C9", _notes_ceiling, tables),
        _guard("K1", _sft_fixed_point, tables, comp),
        _guard("K2", _agreement, tables),
        _guard("K2b", _agreement_bias, tables),
        _guard("K3", _off_task, tables),
        _guard("K4", _derivation_at_every_budget, tables),
        _guard("K5", _amplification, tables),
        _guard("C10", _budget_exponent, tables),
    ]
