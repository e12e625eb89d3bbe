"""The VAIR dataset: for each problem its gold solution (VAVR), wrong-answer solutions (IAIR) and one solution per
applicable answer-preserving flaw (VAIR), every item certified by the step checker (:func:`.flaws.make_item`), split
into train and eval by problem, with the counts per category and flaw beside the paper's (arXiv 2606.01462)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd

from neurips26.vair.flaws import ALL_FLAWS, make_item
from neurips26.vair.items import FLAWS, IAIR_FLAW, Item, SolvedProblem, check_splits

__all__ = ["PAPER_COUNTS", "applicability", "build_items", "counts"]

# The paper's dataset (arXiv 2606.01462): 1,001 VAIR items (missing premise 258, missing reasoning 228, shuffled
# reasoning 259, circular reasoning 256), 861 VAVR (gold solutions) and 861 IAIR (wrong-answer solutions of any
# kind; ours are arithmetic slips), from GSM8K, MATH and their perturbed variants.
PAPER_COUNTS = {
    ("VAVR", "none"): 861,
    ("VAIR", "missing_premise"): 258,
    ("VAIR", "missing_step"): 228,
    ("VAIR", "shuffled"): 259,
    ("VAIR", "circular"): 256,
    ("IAIR", IAIR_FLAW): 861,
}
DRAWS_PER_ITEM = 3  # draws of a transformation per wanted item (repeats of an item already made are dropped)


def _wanted(per_flaw: int | Mapping[str, int], flaws: Sequence[str]) -> dict[str, int]:
    if isinstance(per_flaw, int):
        wanted = dict.fromkeys(flaws, per_flaw)
    else:
        wanted = {**dict.fromkeys(flaws, 1), **per_flaw}
    unknown = sorted(set(wanted) - set(FLAWS))
    if unknown or any(n < 0 for n in wanted.values()):
        raise ValueError(f"per-flaw counts must be >= 0 for flaws in {FLAWS}, got {wanted}")
    return wanted


def _distinct_items(solved: SolvedProblem, flaw: str, n: int, rng: np.random.Generator, split: str) -> list[Item]:
    """Up to `n` distinct items of `flaw` on `solved` (DRAWS_PER_ITEM draws per item; none where it has no place)."""
    items, seen = [], set()
    for _ in range(n if flaw == "none" else DRAWS_PER_ITEM * n):
        if len(items) == n:
            break
        item = make_item(solved, flaw, rng, item_id=f"{solved.problem.problem_id}/{flaw}/{len(items)}", split=split)
        if item is None:
            break
        if (item.problem_sentences, item.steps) not in seen:
            seen.add((item.problem_sentences, item.steps))
            items.append(item)
    return items


def build_items(
    problems: Sequence[SolvedProblem],
    rng: np.random.Generator,
    *,
    flaws: Sequence[str] = FLAWS,
    per_flaw: int | Mapping[str, int] = 1,
    iair_per_problem: int = 1,
    eval_fraction: float = 0.2,
) -> list[Item]:
    """Per problem: the gold solution (VAVR), `iair_per_problem` arithmetic slips (IAIR) and up to `per_flaw`
    distinct items of each flaw in `flaws` (a number for all, or a mapping flaw -> number, 1 for a flaw it does not
    name), fewer where the problem offers fewer places.
    A random `eval_fraction` of the problems (rounded) is the eval split, the rest train. Every label is the
    checker's verdict (ValueError otherwise, from :func:`.flaws.make_item`); no problem or item id in both splits."""
    if not 0.0 <= eval_fraction <= 1.0:
        raise ValueError(f"eval_fraction must be in [0, 1], got {eval_fraction}")
    wanted = {"none": 1, **_wanted(per_flaw, flaws), IAIR_FLAW: iair_per_problem}
    n_eval = round(eval_fraction * len(problems))
    in_eval = set(rng.permutation(len(problems))[:n_eval].tolist())
    items = []
    for index, solved in enumerate(problems):
        split = "eval" if index in in_eval else "train"
        for flaw, n in wanted.items():
            items += _distinct_items(solved, flaw, n, rng, split)
    check_splits(items)
    return items


def counts(items: Sequence[Item]) -> pd.DataFrame:
    """Items per category and flaw (train, eval, total) beside the paper's counts (PAPER_COUNTS)."""
    frame = pd.DataFrame(
        [(item.category, item.flaw, item.split) for item in items], columns=["category", "flaw", "split"]
    )
    table = frame.groupby(["category", "flaw", "split"]).size().unstack("split", fill_value=0)
    table = table.reindex(index=pd.MultiIndex.from_tuples(PAPER_COUNTS, names=["category", "flaw"]), fill_value=0)
    table = table.reindex(columns=["train", "eval"], fill_value=0)
    table["total"] = table["train"] + table["eval"]
    table["paper"] = [PAPER_COUNTS[key] for key in table.index]
    return table.reset_index().rename_axis(columns=None)


def applicability(problems: Sequence[SolvedProblem], rng: np.random.Generator) -> pd.DataFrame:
    """For each flaw and the slip, the share of `problems` it can be applied to (flaw, applicable, problems,
    rate)."""
    rows = []
    for flaw, transform in ALL_FLAWS.items():
        applicable = sum(transform(p.problem, p.steps, rng) is not None for p in problems)
        rows.append((flaw, applicable, len(problems), applicable / max(len(problems), 1)))
    return pd.DataFrame(rows, columns=["flaw", "applicable", "problems", "rate"])
