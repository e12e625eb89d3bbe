"""Paper 16's measured values for the claims and checks of ``config/claims/multistage_training.yaml``.

The paper was not found: the model is our reconstruction (the skill-chain model of :mod:`.model`), so the claims
are the abstract's four phenomena (and two the research notes add) measured in that model, and the checks are
properties the model has by construction (the SFT fixed point, RL's zero rate off the task) or that the stochastic
simulation verifies (the mean-field solution). Everything but the simulation is deterministic: a value rests on
the cells of a table (``runs`` counts them), not on seeds.

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

from neurips26.common.claims import Definition, Measured

from .evaluation import amplification_summary, monotone_violation

__all__ = ["OFF_TASK_TOLERANCE", "SUCCESS_TOLERANCE", "THRESHOLD_KEYS", "measure_claims", "threshold_mismatches"]

# the comparisons block's key of each claim's threshold (C5 compares with 0, the grid step being read from the
# table; K3's 1e-9 is a float64 zero, in the claims file only)
THRESHOLD_KEYS = {
    "C1": "complementarity_gain",
    "C2": "ceiling_tolerance",
    "C3": "ceiling_r2",
    "C4": "shift_span",
    "C6": "amplification_spearman",
    "C7": "plateau_ratio",
    "C8": "loss_tolerance",
    "C9": "ceiling_tolerance",
    "K1": "sft_ceiling_tolerance",
    "K2": "agreement",
}
SUCCESS_TOLERANCE = 1e-9  # C3: a fall of the final success larger than this (float64 noise of the optimiser) fails
OFF_TASK_TOLERANCE = 1e-9  # K3's threshold, for the note
PLATEAU_LENGTHS = (4, 8)  # C7: the research notes' pair, used when both were run


class Incomplete(ValueError):
    """The evidence of a claim is missing, non-finite or too thin to decide it."""


def threshold_mismatches(definitions: Sequence[Definition], comp: dict) -> list[str]:
    """Claims whose threshold in the claims file differs from the config's ``comparisons`` value (or whose key the
    block lacks): the claims file decides, so a mismatch means one of the two files was edited alone."""
    found = []
    for d in definitions:
        key = THRESHOLD_KEYS.get(d.claim_id)
        if key is None:
            continue
        if key not in comp:
            found.append(f"{d.claim_id}: comparisons has no {key}")
        elif not math.isclose(float(comp[key]), d.threshold, rel_tol=1e-12, abs_tol=0.0):
            found.append(f"{d.claim_id}: claims file threshold {d.threshold:g}, comparisons.{key} {comp[key]}")
    return found


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


def _complementarity(tables: dict) -> Measured:
    """C1: the largest gain of the best SFT -> RL split over the better single stage, over (budget, compute)."""
    columns = ["budget", "base_compute", "sft_only", "rl_only", "sft_share", "mixed", "gain"]
    table = _table(tables, "complementarity", columns)
    _finite(table, columns, "complementarity")
    best = table.loc[table["gain"].idxmax()]
    positive = int((table["gain"] > 0).sum())
    note = (
        f"largest gain at budget {best['budget']:g}, pretraining compute {best['base_compute']:g}: best split "
        f"(SFT share {best['sft_share']:.3g}) {best['mixed']:.4g} against SFT alone {best['sft_only']:.4g} and RL "
        f"alone {best['rl_only']:.4g}; the split gains in {positive} of {len(table)} setting(s)"
    )
    return Measured("C1", float(best["gain"]), len(table), note=note)


def _fitted_exponent(claim_id: str, tables: dict, name: str, what: str) -> Measured:
    """C2, C8: |fitted / predicted - 1| of a table's log-log fit (columns repeated on every row)."""
    table = _table(tables, name, ["base_compute", "fitted_exponent", "predicted_exponent", "fit_points"])
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
    ceiling = _table(tables, "ceiling", ["predicted_exponent"]).assign(predicted_exponent=notes)
    what = "step failure against pretraining compute, against the notes' heuristic (alpha - 1) / alpha"
    return _fitted_exponent("C9", {"ceiling": ceiling}, "ceiling", what)


def _ceiling_power_law(tables: dict) -> Measured:
    """C3: the fit's R^2, or 0 when the final success falls anywhere as the pretraining compute grows."""
    table = _table(tables, "ceiling", ["base_compute", "success", "r2", "fit_points"])
    points = _constant(table, "fit_points", "ceiling")
    if points < 3:
        raise Incomplete(f"ceiling: the fit rests on {points:g} point(s); a power law needs 3")
    r2 = _constant(table, "r2", "ceiling")
    _finite(table, ["base_compute", "success"], "ceiling")
    _unique_cells(table, ["base_compute"], "ceiling")
    ordered = table.sort_values("base_compute")
    computes, success = ordered["base_compute"].to_numpy(), ordered["success"].to_numpy()
    fall = monotone_violation(table, "base_compute", +1, value="success", within=())
    trend = (
        f"final success {success[0]:.4g} at compute {computes[0]:g} to {success[-1]:.4g} at {computes[-1]:g} "
        f"({len(table)} computes)"
    )
    if fall > SUCCESS_TOLERANCE:
        k = int(np.argmin(np.diff(success)))
        note = (
            f"value set to 0 (fails): the final success falls by {fall:.3g} from compute {computes[k]:g} to "
            f"{computes[k + 1]:g}; fit R^2 {r2:.4g}; {trend}"
        )
        return Measured("C3", 0.0, int(points), note=note)
    note = f"R^2 of the log-log fit of the step failure over {points:g} computes; {trend}, never falling"
    return Measured("C3", r2, int(points), note=note)


def _largest_span(table: pd.DataFrame, within: list[str]) -> float:
    """The largest span (max - min) of the optimal SFT share within the groups of ``within``."""
    return float(table.groupby(within)["sft_share"].agg(lambda s: s.max() - s.min()).max())


def _allocation_span(tables: dict) -> Measured:
    """C4: the smaller of the largest span of the optimal SFT share along rho (within compute and reward noise) and
    along the pretraining compute (within rho and reward noise); the reward noise's own span in the note."""
    table = _table(tables, "allocation", ["base_compute", "demo_quality", "reward_noise", "sft_share"])
    _finite(table, ["base_compute", "demo_quality", "reward_noise", "sft_share"], "allocation")
    short = [axis for axis in ("demo_quality", "base_compute") if table[axis].nunique() < 2]
    if short:
        raise Incomplete(f"allocation: a single value of {short}, no span along it")
    along_rho = _largest_span(table, ["base_compute", "reward_noise"])
    along_compute = _largest_span(table, ["demo_quality", "reward_noise"])
    noise = _largest_span(table, ["base_compute", "demo_quality"]) if table["reward_noise"].nunique() > 1 else 0.0
    note = (
        f"largest span of the optimal SFT share along rho {along_rho:.3g}, along the pretraining compute "
        f"{along_compute:.3g}; along the reward noise {noise:.3g} (not claimed); {len(table)} settings"
    )
    return Measured("C4", min(along_rho, along_compute), len(table), note=note)


def _allocation_direction(tables: dict) -> Measured:
    """C5: the largest step of the optimal SFT share against the predicted direction (down as rho grows, up as
    the compute grows) minus one grid step 1 / n_grid."""
    columns = ["base_compute", "demo_quality", "reward_noise", "sft_share"]
    table = _table(tables, "allocation", [*columns, "n_grid"])
    _finite(table, columns, "allocation")
    n_grid = _constant(table, "n_grid", "allocation")
    if n_grid < 1 or n_grid != int(n_grid):
        raise Incomplete(f"allocation: n_grid {n_grid:g} is not a positive integer")
    extra = [c for c in ("budget", "chain_length") if c in table.columns]
    _finite(table, extra, "allocation")
    _unique_cells(table, ["demo_quality", "base_compute", "reward_noise", *extra], "allocation")
    short = [axis for axis in ("demo_quality", "base_compute") if table[axis].nunique() < 2]
    if short:
        raise Incomplete(f"allocation: a single value of {short}, no direction to test")
    by_rho = monotone_violation(table, "demo_quality", +1, within=("base_compute", "reward_noise", *extra))
    by_compute = monotone_violation(table, "base_compute", -1, within=("demo_quality", "reward_noise", *extra))
    step = 1.0 / n_grid
    note = (
        f"largest fall of the optimal SFT share as rho grows {by_rho:.3g}, largest rise as the compute grows "
        f"{by_compute:.3g}, tolerance one grid step 1/{n_grid:g} = {step:.3g}; {table['demo_quality'].nunique()} "
        f"rho x {table['base_compute'].nunique()} computes x {table['reward_noise'].nunique()} reward noise(s)"
    )
    return Measured("C5", max(by_rho, by_compute) - step, len(table), note=note)


def _task_skills(tables: dict) -> tuple[pd.DataFrame, pd.Series]:
    columns = ["task_relevant", "task_weight", "strength", "delta_u", "success_before", "success_after"]
    table = _table(tables, "amplification", columns)
    if table["task_relevant"].isna().any():
        raise Incomplete("amplification: task_relevant has missing values")
    return table, table["task_relevant"].astype(bool)


def _amplification(tables: dict) -> Measured:
    """C6: Spearman of Delta u / q with the strength over task skills, or -1 when the strongest quarter of task
    skills does not gain more step success than the weakest quarter."""
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
        return Measured("C6", -1.0, len(task), note=note)
    note = f"Spearman of Delta u / q with the strength over {len(task)} task skills; {gains}"
    return Measured("C6", float(rho), len(task), note=note)


def _plateau(tables: dict) -> Measured:
    """C7: RL-alone updates to P = 1/2 at the longest chain over the shortest (L = 8 over L = 4 when both ran)."""
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
    return Measured("C7", float(used[long] / used[short]), len(series), note=note)


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


def _agreement(tables: dict) -> Measured:
    """K2: the largest |mean over seeds of the simulated success - the mean-field success| over configurations and
    recorded updates."""
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
    means = table.groupby(keys)[["success_sim", "success_theory"]].mean()
    gap = (means["success_sim"] - means["success_theory"]).abs()
    worst = dict(zip(keys, gap.idxmax()))
    where = ", ".join(f"{k} {v}" for k, v in worst.items())
    counts = f"{int(seeds.min())}" if seeds.min() == seeds.max() else f"{int(seeds.min())}-{int(seeds.max())}"
    note = (
        f"largest gap at {where}; {len(seeds)} config(s) x {counts} seed(s), "
        f"{len(gap)} recorded points; largest standard error of a seed's mean over its runs "
        f"{table['success_sim_se'].max():.3g}"
    )
    return Measured("K2", float(gap.max()), int(seeds.min()), note=note)


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
        _guard("C2", _fitted_exponent, "C2", tables, "ceiling",
               "step failure 1 - Pbar at the optimal split against pretraining compute"),
        _guard("C3", _ceiling_power_law, tables),
        _guard("C4", _allocation_span, tables),
        _guard("C5", _allocation_direction, tables),
        _guard("C6", _amplification, tables),
        _guard("C7", _plateau, tables),
        _guard("C8", _fitted_exponent, "C8", tables, "pretraining", "excess pretraining loss against compute"),
        _guard("C9", _notes_ceiling, tables),
        _guard("K1", _sft_fixed_point, tables, comp),
        _guard("K2", _agreement, tables),
        _guard("K3", _off_task, tables),
    ]  # fmt: skip
