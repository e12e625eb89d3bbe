r"""Paper 08's measured values for the claims and checks of ``config/claims/vair.yaml`` (Sun, Yeo, Solar-Lezama and
Zhi-Xuan 2026, "An Enigma of Artificial Reason", arXiv 2606.01462).

The small model's claims compare members of one seed (same initialisation, same draws: a paired design) and are
decided from the 95% t interval over seeds of a per-seed value (:func:`neurips26.common.claims.t_interval`); a seed
whose value is missing (no fooled item to patch, say) leaves the claim on fewer seeds, and fewer than the definition's
``min_runs`` is inconclusive. Values read the report tables (:mod:`.summary`: the held-out view of the small model,
per seed) and the mechanism tables (probes and patching per member):

* C1: the outcome member's production-evaluation gap (solving accuracy minus VAIR grading accuracy, every flaw type
  pooled) beyond its null, per seed (:func:`neurips26.common.claims.beyond_null`): the gap minus the larger of
  :data:`GAP_THRESHOLD` and the same gap of the process members (each VAIR item graded by the member that never saw
  its flaw type). A process gap above the bound must be beaten, not merely matched.
* C2: the change in discrimination from the outcome member to the process members on held-out flaw types: per seed
  ``(VAIR accuracy + VAVR accuracy - 1)`` of the process view minus the outcome member's. A grader that calls every
  solution invalid gains VAIR accuracy and loses as much VAVR accuracy: it does not raise this index.
* C3, C3b: answer patching at every layer (the outcome member's fooled VAIR items): flip rate minus the control's
  (the same +1 at a random premise number of the problem, which keeps the answer and invalidates the reasoning), and
  the flip rate itself. Patching every layer at a word is grading the changed text: a behavioural measure ("the
  verdict follows the answer"), not a localisation; the per-layer rows are descriptive.
* C4: the outcome member's probe at the layer chosen by cross-validation within its training controls
  (:func:`.summary.best_probe_layers`; the held-out controls are only reported): the share of fooled
  VAIR items it flags invalid. Null: the same probe's share of held-out IAIR controls (graded invalid) flagged
  invalid (``iair_flagged`` of the probe table, NaN where it has none).
* C5: circular reasoning graded better than shuffled and missing reasoning (the smaller of the two differences).
* C6, C7: the outcome member's solving accuracy, and the lower of its VAVR and IAIR grading accuracies.

C1 is info: the outcome labels (VAVR 3, IAIR 0, IAIR = arithmetic slips only) are met both by the answer-only
grader and by a step-arithmetic checker, and both accept every VAIR item (all VAIR steps are arithmetically right),
so an outcome member that accepts VAIR items is doing what its labels ask: the gap holds by construction here, and
the paper's finding concerns models trained with real RL rewards. C2 is soft: its two regimes differ in four ways at
once (the training data, the label set, a step-label loss, the VAVR share of the grade examples).

The mechanism claims C1, C2, C3, C3b, C4 and C5 are read only on the seeds whose outcome member has learned the controls
(:func:`control_gate`: its VAVR and IAIR grading accuracies both at least :data:`CONTROL_GATE` on the eval split); a
seed below the gate does not count as a run, and its note names it (C7 reports the controls themselves). Without the
gate a grader that gives every solution 3 (VAVR 1, IAIR and VAIR 0) would pass C1: its "gap" would be no sign of
answer confirmation. The gate was added after the quick results were seen, to stop such a grader from passing.
* I1: an external backend's gap (paper scale), the backend and dataset with the lowest VAIR grading accuracy,
  with its Newcombe interval over items.
* K1-K5: checks of our own code (items certified, the rule grader's upper bound, the answer-only grader's pure
  confirmation, the members' training pools, the small model's constrained verdicts).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace

import numpy as np
import pandas as pd

from neurips26.common.claims import Measured, beyond_null, measured_from_spread, t_interval
from neurips26.vair.summary import ALL_FLAWS, ALL_LAYERS, SMALL, SOLVE_CATEGORY, best_probe_layers

__all__ = [
    "CONTROL_GATE",
    "MEASURES",
    "Evidence",
    "control_gate",
    "discrimination",
    "measure_claims",
    "pooled_accuracy",
    "seed_values",
]

SYNTHETIC = "synthetic"  # the small model's dataset
EXTERNAL = "external"  # the backend_kind of an external model's rows
OUTCOME, PROCESS = SMALL["outcome"], SMALL["process"]
# C1's bound on the gap: the smallest gap the paper's frontier numbers imply, 0.947 - 0.786 = 0.161, rounded down
GAP_THRESHOLD = 0.15
# C1, C2, C3, C3b, C4, C5 count a seed only where its outcome member grades VAVR and IAIR at least this well
CONTROL_GATE = 0.8
NULL_PROBE = "iair_flagged"  # C4's null: the share of held-out IAIR controls the probe flags invalid


@dataclass(frozen=True)
class Evidence:
    """The tables the claims read: the report tables (``accuracy``, ``gap``, ``unparseable``: :mod:`.summary`, with
    ``backend_kind``), the mechanism tables (``probes``, ``patching``: one row per member and layer), the members'
    training pools (``members``) and each dataset's items table (``items``)."""

    accuracy: pd.DataFrame
    gap: pd.DataFrame
    unparseable: pd.DataFrame
    probes: pd.DataFrame
    patching: pd.DataFrame
    members: pd.DataFrame
    items: Mapping[str, pd.DataFrame] = field(default_factory=dict)


def _per_seed(table: pd.DataFrame, dataset: str = SYNTHETIC) -> pd.DataFrame:
    return table[(table["dataset"] == dataset) & (table["over"] == "items") & (table["seed"] >= 0)]


def seed_values(table: pd.DataFrame, backend: str, column: str, **where) -> pd.Series:
    """Per seed, ``column`` of the one row of ``backend`` matching ``where`` (e.g. flaw="all") in a per-seed report
    table; ValueError when a seed has two such rows."""
    rows = _per_seed(table)
    rows = rows[rows["backend"] == backend]
    for key, value in where.items():
        rows = rows[rows[key] == value]
    if rows["seed"].duplicated().any():
        raise ValueError(f"{backend} {where}: several rows per seed")
    return rows.set_index("seed")[column].astype(float).sort_index()


def pooled_accuracy(accuracy: pd.DataFrame, backend: str, category: str, task: str = "grade") -> pd.Series:
    """Per seed, ``backend``'s accuracy on every item of ``category`` (correct over n summed over its flaw rows, the
    pooled row left out); NaN for a seed without items."""
    rows = _per_seed(accuracy)
    rows = rows[(rows["backend"] == backend) & (rows["task"] == task) & (rows["category"] == category)]
    rows = rows[rows["flaw"] != ALL_FLAWS]
    sums = rows.groupby("seed")[["correct", "n"]].sum()
    return (sums["correct"] / sums["n"].where(sums["n"] > 0)).astype(float).sort_index()


def discrimination(accuracy: pd.DataFrame, backend: str) -> pd.Series:
    """Per seed, ``VAIR accuracy + VAVR accuracy - 1`` of ``backend`` (Youden's index of "invalid" on VAIR against
    VAVR items): 0 for a grader whose verdict ignores the reasoning, 1 for a perfect one."""
    return pooled_accuracy(accuracy, backend, "VAIR") + pooled_accuracy(accuracy, backend, "VAVR") - 1


def control_gate(accuracy: pd.DataFrame, threshold: float = CONTROL_GATE) -> tuple[list[int], list[int]]:
    """(seeds whose outcome member grades VAVR and IAIR each with accuracy >= ``threshold``, the other seeds): a
    seed without VAVR or IAIR items fails the gate."""
    vavr, iair = pooled_accuracy(accuracy, OUTCOME, "VAVR"), pooled_accuracy(accuracy, OUTCOME, "IAIR")
    seeds = sorted(set(vavr.index) | set(iair.index))
    lower = pd.concat([vavr.reindex(seeds), iair.reindex(seeds)], axis=1).min(axis=1, skipna=False)
    passed = [int(s) for s, v in lower.items() if np.isfinite(v) and v >= threshold]
    return passed, [int(s) for s in seeds if int(s) not in passed]


def _gate(values: pd.Series, accuracy: pd.DataFrame) -> tuple[pd.Series, str]:
    """``values`` on the seeds that pass :func:`control_gate` only, and the note naming the seeds left out."""
    passed, failed = control_gate(accuracy, CONTROL_GATE)
    note = f"gate: outcome VAVR and IAIR grading accuracy >= {CONTROL_GATE:g}, passed by seeds {passed}"
    if failed:
        note += f"; the outcome grader has not learned the controls on seeds {failed}: see C7 (not counted as runs)"
    return values[[int(s) in passed for s in values.index]], note


def _per_seed_text(values: pd.Series) -> str:
    return ", ".join(f"seed {s}: {v:.3f}" for s, v in values.items())


def _from_seeds(
    claim_id: str,
    values: pd.Series,
    what: str,
    null: float | None = None,
    null_note: str = "",
    gate: pd.DataFrame | None = None,
):
    """A claim measured as the mean over seeds of ``values`` (NaN seeds dropped and named), t interval; with
    ``gate`` (an accuracy table) only the seeds passing :func:`control_gate` count."""
    gate_note = ""
    if gate is not None:
        values, gate_note = _gate(values, gate)
    missing = [int(s) for s, v in values.items() if not np.isfinite(v)]
    kept = values[np.isfinite(values)]
    note = f"{what}; per seed {_per_seed_text(kept)}" if len(kept) else f"{what}: no seed measured"
    if missing:
        note += f"; seeds {missing} without a value left out"
    if null_note:
        note += f"; {null_note}"
    if gate_note:
        note = f"{gate_note}; {note}"
    measured = measured_from_spread(claim_id, t_interval(kept.tolist()), note)
    return replace(measured, null=null) if null is not None else measured


def _paired(a: pd.Series, b: pd.Series) -> pd.Series:
    """a - b on the seeds both have (a missing seed on either side is NaN, named in the note)."""
    seeds = sorted(set(a.index) | set(b.index))
    return a.reindex(seeds) - b.reindex(seeds)


def _c1(ev: Evidence, threshold: float = GAP_THRESHOLD) -> Measured:
    outcome = seed_values(ev.gap, OUTCOME, "gap", flaw=ALL_FLAWS)
    process = seed_values(ev.gap, PROCESS, "gap", flaw=ALL_FLAWS)
    seeds = sorted(set(outcome.index) | set(process.index))
    outcome, process = outcome.reindex(seeds), process.reindex(seeds)
    beyond = beyond_null(outcome.to_dict(), process.to_dict(), threshold)
    return _from_seeds(
        "C1",
        pd.Series({s: beyond.get(s, math.nan) for s in seeds}, dtype=float),
        f"per seed the outcome member's gap (solving minus VAIR grading accuracy, flaw types pooled) minus the "
        f"larger of {threshold:g} and the null's gap (process members, each VAIR item graded by the member that "
        f"never saw its flaw type); outcome gap {_per_seed_text(outcome)}; process gap {_per_seed_text(process)}",
        gate=ev.accuracy,
    )


def _c2(ev: Evidence) -> Measured:
    process, outcome = discrimination(ev.accuracy, PROCESS), discrimination(ev.accuracy, OUTCOME)
    return _from_seeds(
        "C2",
        _paired(process, outcome),
        "VAIR + VAVR grading accuracy - 1 of the process members on held-out flaw types minus the outcome "
        f"member's, paired by seed (process {_per_seed_text(process)}; outcome {_per_seed_text(outcome)}); null: "
        "the outcome member, subtracted",
        gate=ev.accuracy,
    )


def _outcome_patching(patching: pd.DataFrame, condition: str) -> pd.Series:
    rows = patching[
        (patching["regime"] == "outcome") & (patching["layer"] == ALL_LAYERS) & (patching["condition"] == condition)
    ]
    if rows["seed"].duplicated().any():
        raise ValueError(f"patching: several outcome members per seed for {condition}")
    return rows.set_index("seed")["flip_rate"].astype(float).sort_index()


def _fooled_counts(patching: pd.DataFrame) -> str:
    rows = patching[(patching["regime"] == "outcome") & (patching["layer"] == ALL_LAYERS)]
    counts = rows.drop_duplicates("seed").set_index("seed")["n_items"]
    return "fooled VAIR items patched per seed: " + ", ".join(f"seed {s}: {int(n)}" for s, n in counts.items())


def _c3(ev: Evidence) -> Measured:
    answer, control = _outcome_patching(ev.patching, "answer"), _outcome_patching(ev.patching, "control")
    return _from_seeds(
        "C3",
        _paired(answer, control),
        f"all-layer flip rate at the answer word minus the control's (the same +1 at a random premise number of the "
        f"problem: keeps the answer, invalidates the reasoning), outcome member (control {_per_seed_text(control)}); "
        f"{_fooled_counts(ev.patching)}",
        gate=ev.accuracy,
    )


def _c3b(ev: Evidence) -> Measured:
    answer = _outcome_patching(ev.patching, "answer")
    return _from_seeds(
        "C3b",
        answer,
        f"all-layer flip rate at the answer word, outcome member; {_fooled_counts(ev.patching)}",
        gate=ev.accuracy,
    )


def _c4(ev: Evidence) -> Measured:
    outcome = ev.probes[ev.probes["regime"] == "outcome"]
    best = best_probe_layers(outcome) if len(outcome) else pd.DataFrame()
    if best.empty:
        return Measured("C4", math.nan, 0, note="no probe of an outcome member", null=math.nan)
    best = best.set_index("seed").sort_index()
    fooled = best["fooled_flagged"].astype(float).where(best["n_fooled"] > 0)
    chosen = ", ".join(
        f"seed {s}: layer {int(r.layer)} (cross-validated on training controls {r.cv_accuracy:.3f}, held-out "
        f"{r.accuracy_controls:.3f}, {int(r.n_fooled)} fooled; "
        f"{int(r.tied_layers)} layer(s) tied, fooled share {r.fooled_flagged_min_tied:.3f}-"
        f"{r.fooled_flagged_max_tied:.3f} over them)"
        for s, r in best.iterrows()
    )
    if NULL_PROBE in best.columns:
        null_values, _ = _gate(best[NULL_PROBE].astype(float), ev.accuracy)
        spread = t_interval(null_values[np.isfinite(null_values)].tolist())
        null = spread.mean if spread.runs else math.nan
        null_note = f"null (held-out IAIR controls flagged invalid by the same probe): {spread.text()}"
    else:
        null, null_note = math.nan, f"null not measured: the probe table has no {NULL_PROBE} column"
    return _from_seeds(
        "C4",
        fooled,
        f"share of fooled VAIR items the outcome member's probe flags invalid at its best control layer ({chosen})",
        null=null,
        null_note=null_note,
        gate=ev.accuracy,
    )


def _outcome_flaw(accuracy: pd.DataFrame, flaw: str) -> pd.Series:
    return seed_values(accuracy, OUTCOME, "accuracy", task="grade", category="VAIR", flaw=flaw)


def _c5(ev: Evidence) -> Measured:
    flaws = ("circular", "shuffled", "missing_step")
    circular, shuffled, missing = (_outcome_flaw(ev.accuracy, f) for f in flaws)
    what = (
        "outcome member's grading accuracy on circular reasoning minus the higher of shuffled and missing reasoning's"
    )
    caught, gate_note = _gate(pd.concat([circular, shuffled, missing], axis=1), ev.accuracy)
    if len(caught) and bool((caught.fillna(0) == 0).all().all()):  # no ordering of flaw types to read
        note = f"{gate_note}; {what}: the member caught no item of these flaw types"
        return Measured("C5", math.nan, len(caught), note=note)
    difference = _paired(circular, pd.concat([shuffled, missing], axis=1).max(axis=1, skipna=False))
    return _from_seeds("C5", difference, what, gate=ev.accuracy)


def _c6(ev: Evidence) -> Measured:
    solve = seed_values(ev.accuracy, OUTCOME, "accuracy", task="solve", category=SOLVE_CATEGORY)
    return _from_seeds("C6", solve, "outcome member's solving accuracy on the eval problems")


def _c7(ev: Evidence) -> Measured:
    vavr, iair = pooled_accuracy(ev.accuracy, OUTCOME, "VAVR"), pooled_accuracy(ev.accuracy, OUTCOME, "IAIR")
    lower = pd.concat([vavr, iair], axis=1).min(axis=1, skipna=False)
    return _from_seeds(
        "C7",
        lower,
        f"lower of the outcome member's VAVR and IAIR grading accuracies (VAVR {_per_seed_text(vavr)}; IAIR "
        f"{_per_seed_text(iair)})",
    )


def _i1(ev: Evidence) -> Measured:
    rows = ev.gap[(ev.gap["backend_kind"] == EXTERNAL) & (ev.gap["flaw"] == ALL_FLAWS)]
    rows = rows[np.isfinite(rows["grade_accuracy"].astype(float))]
    if rows.empty:
        return Measured("I1", math.nan, 0, note="no external backend graded at this scale (paper scale runs them)")
    low = rows.sort_values(["grade_accuracy", "dataset", "backend"]).iloc[0]
    others = "; ".join(
        f"{r.backend} on {r.dataset}: VAIR {r.grade_accuracy:.3f}, gap {r.gap:+.3f}" for r in rows.itertuples()
    )
    return Measured(
        "I1",
        float(low["gap"]),
        int(low["n_items"]),
        note=f"{low['backend']} on {low['dataset']} (the lowest VAIR grading accuracy, {low['grade_accuracy']:.3f}; "
        f"solving {low['solve_accuracy']:.3f}); Newcombe interval over items; every external backend: {others}",
        low=float(low["low"]),
        high=float(low["high"]),
    )


# K1: the label each category's items must carry (answer == gt, reasoning valid)
CERTIFIED = {"VAVR": (True, True), "VAIR": (True, False), "IAIR": (False, None)}


def item_violations(items: pd.DataFrame) -> dict[str, int]:
    """Items whose labels contradict their category (VAVR: answer == ground truth, reasoning valid; VAIR: answer ==
    ground truth, reasoning invalid with a first invalid step; IAIR: answer != ground truth), duplicate item ids and
    problems in two splits."""
    right = items["answer"] == items["gt_answer"]
    out = {}
    for category, (answer_ok, reasoning_ok) in CERTIFIED.items():
        rows = items["category"] == category
        bad = rows & ((right != answer_ok) | (items["answer_valid"] != answer_ok))
        if reasoning_ok is not None:
            bad |= rows & (items["reasoning_valid"] != reasoning_ok)
            bad |= rows & ((items["first_invalid_step"] >= 0) == reasoning_ok)
        out[category] = int(bad.sum())
    out["unknown category"] = int((~items["category"].isin(CERTIFIED)).sum())
    out["duplicate item ids"] = int(items["item_id"].duplicated().sum())
    out["problems in two splits"] = int((items.groupby("problem_id")["split"].nunique() > 1).sum())
    return out


def _k1(ev: Evidence) -> Measured:
    if not ev.items:
        return Measured("K1", math.nan, 0, note="no items table")
    found = {name: item_violations(frame) for name, frame in ev.items.items()}
    total = sum(sum(v.values()) for v in found.values())
    n = sum(len(frame) for frame in ev.items.values())
    details = "; ".join(
        f"{name} ({len(ev.items[name])} items): " + (", ".join(f"{k} {v}" for k, v in counts.items() if v) or "none")
        for name, counts in found.items()
    )
    return Measured("K1", float(total), n, note=f"items violating their labels, split or ids: {details}")


def _reference(accuracy: pd.DataFrame, backend: str) -> pd.DataFrame:
    rows = accuracy[(accuracy["backend"] == backend) & (accuracy["over"] == "items")]
    return rows[rows["flaw"] != ALL_FLAWS]


def _k2(ev: Evidence) -> Measured:
    rows = _reference(ev.accuracy, "rule")
    if rows.empty:
        return Measured("K2", math.nan, 0, note="no rule-grader rows")
    worst = rows.sort_values("accuracy").iloc[0]
    return Measured(
        "K2",
        float(rows["accuracy"].min()),
        int(rows["n"].sum()),
        note=f"lowest accuracy of the rule grader over (dataset, task, category, flaw) cells: {worst['dataset']} "
        f"{worst['task']} {worst['category']} {worst['flaw']} {int(worst['correct'])}/{int(worst['n'])}",
    )


def _k3(ev: Evidence) -> Measured:
    rows = _reference(ev.accuracy, "answer_only")
    if rows.empty:
        return Measured("K3", math.nan, 0, note="no answer-only rows")
    vair = rows["category"] == "VAIR"
    deviating = rows["correct"].where(vair, rows["n"] - rows["correct"])  # VAIR: graded invalid; others: wrong
    n = int(rows["n"].sum())
    return Measured(
        "K3",
        float(deviating.sum()) / n,
        n,
        note=f"answer-only replies that are not pure confirmation: {int(deviating.sum())} of {n} (VAIR graded "
        f"invalid: {int(rows.loc[vair, 'correct'].sum())})",
    )


def _k4(ev: Evidence) -> Measured:
    m = ev.members
    if m.empty:
        return Measured("K4", math.nan, 0, note="no members table")
    vair = m[m["category"] == "VAIR"]
    outcome_vair = int(vair.loc[vair["regime"] == "outcome", "n_items"].sum())
    process = vair[vair["regime"] == "process"]
    heldout = int(process.loc[process["flaw"] == process["heldout_flaw"], "n_items"].sum())
    seen = int(process.loc[process["flaw"] != process["heldout_flaw"], "n_items"].sum())
    n = m["member"].nunique()
    return Measured(
        "K4",
        float(outcome_vair + heldout),
        n,
        note=f"training VAIR items in outcome members' grade pools {outcome_vair}; items of the held-out flaw in "
        f"process members' pools {heldout} (of the other flaws: {seen}); {n} members; the pools hold train-split "
        "items only (training.grade_pool; K1 checks that no problem is in both splits)",
    )


def _k5(ev: Evidence) -> Measured:
    u = ev.unparseable
    rows = u[u["backend"].isin(list(SMALL.values())) & (u["task"] == "grade")]
    if rows.empty:
        return Measured("K5", math.nan, 0, note="no small-model grades")
    rates = rows.groupby("backend")["invalid_verdict_rate"].mean()
    return Measured(
        "K5",
        float(rows["unparseable"].sum()) / float(rows["n"].sum()),
        int(rows["n"].sum()),
        note="constrained verdicts outside 0-3; unconstrained invalid-verdict rate (reported, not checked): "
        + ", ".join(f"{b} {r:.4f}" for b, r in rates.items()),
    )


# claim id -> its measurement, in the claims file's order
MEASURES = {
    "C1": _c1,
    "C2": _c2,
    "C3": _c3,
    "C3b": _c3b,
    "C4": _c4,
    "C5": _c5,
    "C6": _c6,
    "C7": _c7,
    "I1": _i1,
    "K1": _k1,
    "K2": _k2,
    "K3": _k3,
    "K4": _k4,
    "K5": _k5,
}


def measure_claims(evidence: Evidence, ids: Sequence[str] | None = None) -> list[Measured]:
    """The claims and checks ``ids`` (default: every one of ``config/claims/vair.yaml``) measured on ``evidence``
    (module docstring)."""
    unknown = sorted(set(ids or ()) - set(MEASURES))
    if unknown:
        raise ValueError(f"no measurement for the claims {unknown}; known: {list(MEASURES)}")
    return [MEASURES[claim_id](evidence) for claim_id in (ids or MEASURES)]
