"""Hand-made results of paper 08's pipeline for the claims, summary and plots tests: the small model's members
(outcome and process, one process member per held-out flaw, per seed) grading and solving a few problems with
chosen accuracies, the model-free references, an external backend, probe and patching tables, the members' pools
and the items table."""

from __future__ import annotations

import numpy as np
import pandas as pd

from neurips26.common.claims import decide, rate_difference
from neurips26.vair.claims import Evidence, measure_claims
from neurips26.vair.grading import RESULT_COLUMNS, accuracy_table, gap_table, unparseable_table
from neurips26.vair.items import FLAWS
from neurips26.vair.summary import ALL_LAYERS, grading_tables, with_seed_means

UNPARSEABLE_TABLE_COLUMNS = [
    "dataset",
    "backend",
    "seed",
    "task",
    "n",
    "unparseable",
    "rate",
    "errors",
    "invalid_verdict_rate",
    "backend_kind",
]
GRADING_FUNCTIONS = {"accuracy": accuracy_table, "gap": gap_table, "unparseable": unparseable_table}
PROBLEMS = 20  # per seed: each problem has one VAVR, one IAIR and one VAIR item per flaw type
# accuracy per regime and cell: "solve", the control categories, the outcome member's flaw types, and the process
# members' VAIR accuracy on their held-out flaw type and on the flaw types they trained on
GOOD = {
    "outcome": {
        "solve": 1.0,
        "VAVR": 1.0,
        "IAIR": 0.95,
        "missing_premise": 0.1,
        "missing_step": 0.05,
        "shuffled": 0.05,
        "circular": 0.4,
    },
    "process": {"solve": 1.0, "VAVR": 0.95, "IAIR": 0.95, "heldout": 0.6, "seen": 0.95},
}
# items added to a cell's correct count per seed (VAIR cells only, unless a test says otherwise)
JITTER = {"outcome": (0, 1, -1), "process": (1, -1, 0)}


def changed(regime: str, **cells) -> dict:
    return {**GOOD, regime: {**GOOD[regime], **cells}}


def item_ids(problems: int = PROBLEMS) -> list[tuple[str, str, str, str]]:
    """(item_id, problem_id, category, flaw) of every item."""
    out = []
    for p in range(problems):
        pid = f"p{p:03d}"
        out.append((f"{pid}/none/0", pid, "VAVR", "none"))
        out.append((f"{pid}/arithmetic_slip/0", pid, "IAIR", "arithmetic_slip"))
        out += [(f"{pid}/{flaw}/0", pid, "VAIR", flaw) for flaw in FLAWS]
    return out


def _count(rate: float, shift: int, n: int) -> int:
    return int(np.clip(round(rate * n) + shift, 0, n))


def _row(item_id, problem_id, category, flaw, backend, task, correct, value=None):
    if value is None:
        value = (3 if correct else 0) if category == "VAVR" else (1 if correct else 3)
    return {
        "item_id": item_id,
        "problem_id": problem_id,
        "category": category,
        "flaw": flaw,
        "backend": backend,
        "task": task,
        "raw": f"GRADE: {value}",
        "parsed": float(value),
        "parsed_ok": True,
        "correct": correct,
        "error": "",
    }


def member_rows(backend: str, rates: dict, shift: dict, problems: int = PROBLEMS, heldout: str = "") -> list[dict]:
    """Results rows of one grader: the first k problems of each cell right, k = round(rate n) + its shift."""
    rows = []
    k_solve = _count(rates["solve"], shift.get("solve", 0), problems) if "solve" in rates else None
    for p in range(problems if k_solve is not None else 0):
        rows.append(_row(f"p{p:03d}", f"p{p:03d}", "problem", "none", backend, "solve", p < k_solve, value=7))
    for item_id, pid, category, flaw in item_ids(problems):
        cell = flaw if category == "VAIR" else category
        if heldout:
            cell = ("heldout" if flaw == heldout else "seen") if category == "VAIR" else category
        k = _count(rates[cell], shift.get(cell, 0), problems)
        rows.append(_row(item_id, pid, category, flaw, backend, "grade", int(pid[1:]) < k))
    return rows


def small_results(values=GOOD, seeds=(0, 1, 2), jitter=JITTER, solve_jitter=(0, 0, 0), unparseable=0) -> pd.DataFrame:
    rows, member = [], 0
    for regime, heldouts in (("outcome", ("none",)), ("process", FLAWS)):
        for heldout in heldouts:
            for s in seeds:
                vair_cells = FLAWS if regime == "outcome" else ("heldout", "seen")
                shift = {c: jitter[regime][s % 3] for c in vair_cells} | {"solve": solve_jitter[s % 3]}
                part = member_rows(
                    f"small_{regime}", values[regime], shift, heldout="" if heldout == "none" else heldout
                )
                rows += [
                    {
                        **r,
                        "member": member,
                        "regime": regime,
                        "heldout_flaw": heldout,
                        "seed": s,
                        "invalid_verdict": False,
                    }
                    for r in part
                ]
                member += 1
    frame = pd.DataFrame(rows)
    graded = frame.index[frame["task"] == "grade"][:unparseable]
    frame.loc[graded, ["parsed_ok", "correct"]] = False
    frame.loc[graded, "parsed"] = np.nan
    return frame


def _acc(backend, seed, task, category, flaw, n, correct, kind="small", dataset="synthetic"):
    return {
        "dataset": dataset,
        "backend": backend,
        "seed": seed,
        "over": "items",
        "task": task,
        "category": category,
        "flaw": flaw,
        "n": n,
        "correct": correct,
        "accuracy": correct / n if n else np.nan,
        "low": np.nan,
        "high": np.nan,
        "interval": "",
        "backend_kind": kind,
    }


def _gap(backend, seed, flaw, n_problems, solved, n_items, correct, kind="small", dataset="synthetic"):
    spread = rate_difference(solved, n_problems, correct, n_items)
    return {
        "dataset": dataset,
        "backend": backend,
        "seed": seed,
        "over": "items",
        "flaw": flaw,
        "n_problems": n_problems,
        "solve_accuracy": solved / n_problems,
        "n_items": n_items,
        "grade_accuracy": correct / n_items,
        "gap": spread.mean,
        "low": spread.low,
        "high": spread.high,
        "interval": spread.method,
        "backend_kind": kind,
    }


def grader_tables(backend, rates, shift, seed=-1, kind="small", dataset="synthetic", n=PROBLEMS, heldout=False):
    """The accuracy and gap rows (as :func:`neurips26.vair.summary.grading_tables` writes them) of one grader on
    ``n`` problems, each with one item per category and flaw type: counts round(rate n) + shift per cell."""
    acc, gap = [], []
    solved = _count(rates["solve"], shift.get("solve", 0), n) if "solve" in rates else None
    if solved is not None:
        acc.append(_acc(backend, seed, "solve", "problem", "none", n, solved, kind, dataset))
    for category, flaw in (("VAVR", "none"), ("IAIR", "arithmetic_slip")):
        acc.append(_acc(backend, seed, "grade", category, flaw, n, _count(rates[category], 0, n), kind, dataset))
    vair = {f: _count(rates["heldout" if heldout else f], shift.get(f, 0), n) for f in FLAWS}
    for flaw, correct in [*vair.items(), ("all", sum(vair.values()))]:
        items = n * (len(FLAWS) if flaw == "all" else 1)
        acc.append(_acc(backend, seed, "grade", "VAIR", flaw, items, correct, kind, dataset))
        if solved is not None:
            gap.append(_gap(backend, seed, flaw, n, solved, items, correct, kind, dataset))
    return acc, gap


def report_tables(
    values=GOOD,
    seeds=(0, 1, 2),
    jitter=JITTER,
    solve_jitter=(0, 0, 0),
    unparseable=0,
    reference=True,
    rule_wrong=0,
    answer_only_wrong=0,
    external=None,
):
    """Hand-made accuracy, gap and unparseable tables: the small model's outcome and process (held-out) views per
    seed, the references (rule and answer-only) and optionally external graders ((dataset, backend) -> rates)."""
    acc, gap, unparse = [], [], []
    for regime in ("outcome", "process"):
        for s in seeds:
            shift = dict.fromkeys(FLAWS, jitter[regime][s % 3]) | {"solve": solve_jitter[s % 3]}
            a, g = grader_tables(f"small_{regime}", values[regime], shift, s, heldout=regime == "process")
            acc += a
            gap += g
            n = 6 * PROBLEMS
            unparse.append(
                {
                    "dataset": "synthetic",
                    "backend": f"small_{regime}",
                    "seed": s,
                    "task": "grade",
                    "n": n,
                    "unparseable": unparseable,
                    "rate": unparseable / n,
                    "errors": 0,
                    "invalid_verdict_rate": 0.01,
                    "backend_kind": "small",
                }
            )
    if reference:
        perfect = {"solve": 1.0, "VAVR": 1.0, "IAIR": 1.0, **dict.fromkeys(FLAWS, 1.0)}
        a, _ = grader_tables("rule", perfect, {}, kind="reference")
        a[1]["correct"] -= rule_wrong  # the VAVR cell
        a[1]["accuracy"] = a[1]["correct"] / a[1]["n"]
        acc += a
        a, _ = grader_tables(
            "answer_only", {**perfect, **dict.fromkeys(FLAWS, answer_only_wrong / PROBLEMS)}, {}, kind="reference"
        )
        acc += a
    for (dataset, backend), rates in (external or {}).items():
        a, g = grader_tables(backend, rates, {}, kind="external", dataset=dataset, n=rates.get("n", 100))
        acc += a
        gap += g
    columns = (list(_acc("", 0, "", "", "", 1, 0)), list(_gap("", 0, "", 1, 0, 1, 0)), UNPARSEABLE_TABLE_COLUMNS)
    acc, gap, unparse = (pd.DataFrame(rows, columns=c) for rows, c in zip((acc, gap, unparse), columns))
    keys = ["dataset", "backend", "backend_kind"]  # the means over seeds, as the pipeline adds them
    acc = with_seed_means(acc, "accuracy", [*keys, "task", "category", "flaw"], ["n", "correct"])
    gap = with_seed_means(gap, "gap", [*keys, "flaw"], ["n_problems", "solve_accuracy", "n_items", "grade_accuracy"])
    return acc, gap, unparse


def reference_results(rule_wrong: int = 0) -> pd.DataFrame:
    rows = []
    perfect = {"solve": 1.0, "VAVR": 1.0, "IAIR": 1.0, **dict.fromkeys(FLAWS, 1.0)}
    rows += member_rows("rule", perfect, {})
    rows += member_rows("answer_only", {**perfect, **dict.fromkeys(FLAWS, 0.0)}, {})
    rows += member_rows("random", {k: 0.5 for k in perfect if k != "solve"}, {})
    frame = pd.DataFrame(rows, columns=list(RESULT_COLUMNS))
    wrong = frame.index[(frame["backend"] == "rule") & (frame["task"] == "grade")][:rule_wrong]
    frame.loc[wrong, "correct"] = False
    return frame


def external_results(solve=0.95, vair=0.5, problems=100) -> pd.DataFrame:
    rates = {"solve": solve, "VAVR": 0.95, "IAIR": 0.97, **dict.fromkeys(FLAWS, vair)}
    return pd.DataFrame(member_rows("http", rates, {}, problems=problems), columns=list(RESULT_COLUMNS))


def members_table(seeds=(0, 1, 2), outcome_vair=0, heldout_items=0) -> pd.DataFrame:
    """Per member and (category, flaw): the training items its grade pool holds (as the train job writes it)."""
    rows, member = [], 0
    cells = [("VAVR", "none"), ("IAIR", "arithmetic_slip"), *(("VAIR", f) for f in FLAWS)]
    for regime, heldouts in (("outcome", ("none",)), ("process", FLAWS)):
        for heldout in heldouts:
            for s in seeds:
                for category, flaw in cells:
                    if category != "VAIR":
                        n = 80
                    elif regime == "outcome":
                        n = outcome_vair if flaw == "shuffled" else 0
                    else:
                        n = heldout_items if flaw == heldout else 60
                    rows.append({"member": member, "regime": regime, "heldout_flaw": heldout, "seed": s,
                                 "category": category, "flaw": flaw, "n_items": n, "draw_share": 0.1})  # fmt: skip
                member += 1
    return pd.DataFrame(rows)


# the outcome probe per layer: (accuracy on held-out controls, AUROC, fooled share flagged, IAIR controls flagged)
PROBE_LAYERS = ((0.6, 0.65, 0.5, 0.5), (0.9, 0.95, 0.3, 0.9), (1.0, 1.0, 0.1, 1.0), (1.0, 1.0, 0.2, 1.0))


def probes_table(layers=PROBE_LAYERS, seeds=(0, 1, 2), jitter=(0.0, 0.02, -0.02), null_column=True, fooled=15):
    rows = []
    for regime in ("outcome", "process"):
        for s in seeds:
            member = s if regime == "outcome" else 100 + s
            for layer, (acc, auroc, flagged, invalid) in enumerate(layers):
                row = {
                    "member": member,
                    "regime": regime,
                    "heldout_flaw": "none" if regime == "outcome" else "shuffled",
                    "seed": s,
                    "layer": layer,
                    "n_train": 40,
                    "n_test": 20,
                    "cv_accuracy": acc,
                    "auroc_controls": auroc,
                    "accuracy_controls": acc,
                    "n_fooled": fooled,
                    "fooled_flagged": flagged + jitter[s % 3] if fooled else np.nan,
                }
                if null_column:
                    row["iair_flagged"] = invalid
                rows.append(row)
    return pd.DataFrame(rows)


def patching_table(answer=0.8, control=0.1, seeds=(0, 1, 2), jitter=(0.0, 0.05, -0.05), n_items=(20, 20, 20)):
    rows = []
    for s in seeds:
        n = n_items[s % 3]
        for layer in (0, 1, 2, ALL_LAYERS):
            scale = 1.0 if layer == ALL_LAYERS else 0.3 * (layer + 1)
            for condition, rate in (("answer", answer), ("control", control)):
                value = min(1.0, max(0.0, scale * rate + jitter[s % 3] * (condition == "answer")))
                flips = round(value * n)
                rows.append(
                    {
                        "member": s,
                        "regime": "outcome",
                        "heldout_flaw": "none",
                        "seed": s,
                        "layer": layer,
                        "condition": condition,
                        "n_items": n,
                        "flips": flips,
                        "flip_rate": flips / n if n else np.nan,
                    }
                )
    return pd.DataFrame(rows)


def items_table(problems: int = PROBLEMS, wrong_vair: int = 0) -> pd.DataFrame:
    rows = []
    for item_id, pid, category, flaw in item_ids(problems):
        right = category != "IAIR"
        rows.append(
            {
                "item_id": item_id,
                "problem_id": pid,
                "category": category,
                "flaw": flaw,
                "answer": 10 if right else 11,
                "gt_answer": 10,
                "answer_valid": right,
                "reasoning_valid": category == "VAVR",
                "first_invalid_step": -1 if category == "VAVR" else 1,
                "split": "eval",
            }
        )
    frame = pd.DataFrame(rows)
    frame.loc[frame.index[frame["category"] == "VAIR"][:wrong_vair], "answer"] = 12
    return frame


def evidence(tables=None, probes=None, patching=None, members=None, items=None) -> Evidence:
    """Evidence of the default (good) scenario with the given parts replaced; ``tables`` are :func:`report_tables`'s
    three tables."""
    accuracy, gap, unparseable = report_tables() if tables is None else tables
    return Evidence(
        accuracy=accuracy,
        gap=gap,
        unparseable=unparseable,
        probes=probes_table() if probes is None else probes,
        patching=patching_table() if patching is None else patching,
        members=members_table() if members is None else members,
        items={"synthetic": items_table()} if items is None else items,
    )


def results_evidence(small=None, reference=None, external=None, **parts) -> Evidence:
    """As :func:`evidence`, the tables built by the pipeline's own summary from results rows."""
    small = small_results() if small is None else small
    reference = {"synthetic": reference_results()} if reference is None else reference
    tables = grading_tables(reference, small, external or {}, GRADING_FUNCTIONS)
    return evidence((tables["accuracy"], tables["gap"], tables["unparseable"]), **parts)


def decided(definitions: list, ids=None, **parts) -> pd.DataFrame:
    """The claims table of ``definitions`` (only ``ids`` where given) on the scenario's evidence."""
    chosen = [d for d in definitions if ids is None or d.claim_id in ids]
    measured = measure_claims(evidence(**parts), [d.claim_id for d in chosen])
    return decide(chosen, measured).set_index("claim_id")
