"""Paper 08's files as tables and back: problems (with their gold steps), the certified items of a dataset and their
counts, MATH-500 items, the records a reader skipped, and the eval split the graders read. Items themselves go through
:func:`.items.items_to_frame` and :func:`.items.items_from_frame`.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import fields
from pathlib import Path

import numpy as np
import pandas as pd

from .checker import verify_item
from .dataset import build_items, counts
from .items import Item, Problem, SolvedProblem, Step, items_to_frame
from .math500 import MathItem

__all__ = [
    "MATH_COLUMNS",
    "PROBLEM_COLUMNS",
    "SKIPPED_COLUMNS",
    "eval_split",
    "item_tables",
    "math_items_from_frame",
    "math_items_to_frame",
    "problems_from_frame",
    "problems_to_frame",
    "read_records",
    "skipped_frame",
    "with_dataset",
]

PROBLEM_COLUMNS = ("problem_id", "source", "sentences", "question", "numbers", "answer", "steps", "n_steps")
SKIPPED_COLUMNS = ("reason", "records")
MATH_COLUMNS = tuple(f.name for f in fields(MathItem))


def problems_to_frame(problems: Sequence[SolvedProblem]) -> pd.DataFrame:
    """One row per problem (:data:`PROBLEM_COLUMNS`): sentences, numbers and the gold steps as JSON text."""
    rows = [
        {
            "problem_id": p.problem.problem_id,
            "source": p.problem.source,
            "sentences": json.dumps(list(p.problem.sentences)),
            "question": p.problem.question,
            "numbers": json.dumps(list(p.problem.numbers)),
            "answer": p.problem.answer,
            "steps": json.dumps([[s.expression, s.result, s.text] for s in p.steps]),
            "n_steps": len(p.steps),
        }
        for p in problems
    ]
    return pd.DataFrame(rows, columns=list(PROBLEM_COLUMNS)).astype({"answer": "int64", "n_steps": "int64"})


def problems_from_frame(frame: pd.DataFrame) -> list[SolvedProblem]:
    """The problems of a table written by :func:`problems_to_frame` (each validated again by its dataclass);
    ValueError naming missing columns."""
    missing = [c for c in PROBLEM_COLUMNS if c not in frame.columns]
    if missing:
        raise ValueError(f"a problems table needs the columns {missing}")
    out = []
    for row in frame[list(PROBLEM_COLUMNS)].itertuples(index=False):
        problem = Problem(
            row.problem_id,
            tuple(json.loads(row.sentences)),
            row.question,
            tuple(int(n) for n in json.loads(row.numbers)),
            int(row.answer),
            row.source,
        )
        steps = tuple(Step(expression, int(result), text) for expression, result, text in json.loads(row.steps))
        out.append(SolvedProblem(problem, steps))
    return out


def read_records(path: str | Path, reader: Callable[[Iterable[str]], tuple[list, dict[str, int]]], what: str):
    """(kept, skipped) of a JSON-lines source read by `reader` (GSM8K's or MATH-500's); ValueError naming the file
    and the skipped reasons when no record is kept."""
    with open(path) as handle:
        kept, skipped = reader(handle)
    if not kept:
        raise ValueError(f"{path}: no {what} record was kept (skipped by reason: {skipped})")
    return kept, skipped


def skipped_frame(skipped: Mapping[str, int], kept: int) -> pd.DataFrame:
    """The records a reader skipped, per reason, and the records it kept (reason "kept")."""
    rows = [(reason, int(n)) for reason, n in sorted(skipped.items())] + [("kept", int(kept))]
    return pd.DataFrame(rows, columns=list(SKIPPED_COLUMNS))


def math_items_to_frame(items: Sequence[MathItem]) -> pd.DataFrame:
    """MATH-500 items as a table (:data:`MATH_COLUMNS`); `reasoning_valid` is None (never replayed)."""
    frame = pd.DataFrame([[getattr(i, c) for c in MATH_COLUMNS] for i in items], columns=list(MATH_COLUMNS))
    return frame.astype({"level": "int64", "answer_valid": bool, "reasoning_valid": object})


def math_items_from_frame(frame: pd.DataFrame) -> list[MathItem]:
    missing = [c for c in MATH_COLUMNS if c not in frame.columns]
    if missing:
        raise ValueError(f"a MATH items table needs the columns {missing}")
    rows = frame[list(MATH_COLUMNS)].to_dict("records")
    return [MathItem(**{**row, "level": int(row["level"]), "reasoning_valid": None}) for row in rows]


def item_tables(
    problems: Sequence[SolvedProblem], settings: Mapping, dataset: str
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The items table of a dataset's problems (:func:`.dataset.build_items` with `settings`: seed, per_flaw,
    iair_per_problem, eval_fraction), every item verified again by the step checker (ValueError naming the first
    item whose labels it does not confirm), and its counts beside the paper's (first column `dataset`)."""
    settings = dict(settings)
    items = build_items(problems, np.random.default_rng(settings.pop("seed")), **settings)
    for item in items:
        verify_item(item)
    return items_to_frame(items), with_dataset(counts(items), dataset)


def eval_split(items: Sequence[Item]) -> list[Item]:
    """The items every grader is scored on: the eval split (the small model trains on the rest); ValueError when
    there is none."""
    chosen = [item for item in items if item.split == "eval"]
    if not chosen:
        raise ValueError(f"none of the {len(items)} items is in the eval split")
    return chosen


def with_dataset(frame: pd.DataFrame, dataset: str) -> pd.DataFrame:
    """`frame` with a first column `dataset`."""
    return frame.assign(dataset=dataset)[["dataset", *frame.columns]]
