"""The item format of the VAIR dataset (Sun, Yeo, Solar-Lezama and Zhi-Xuan 2026, arXiv 2606.01462): a math word
problem, a solution written as GSM8K-style calculator steps (Cobbe et al. 2021: ``<<48/2=24>>``), its stated final
answer and the labels a step-replaying checker gives it.

Three categories of the paper: VAVR (valid answer, valid reasoning: the gold solution), VAIR (valid answer, invalid
reasoning: one of the paper's four answer-preserving flaws) and IAIR (invalid answer, invalid reasoning: here an
arithmetic slip carried to the answer). Texts: :func:`render` (the small model's word-level text),
:func:`render_natural` (the paper-style text for external models) and :func:`render_problem` (what a solver sees).
"""

from __future__ import annotations

import json
import re
from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, fields
from functools import lru_cache

import pandas as pd

__all__ = [
    "CATEGORIES",
    "CATEGORY_FLAWS",
    "FLAWS",
    "IAIR_FLAW",
    "SOURCES",
    "SPLITS",
    "Item",
    "Problem",
    "SolvedProblem",
    "Step",
    "check_splits",
    "items_from_frame",
    "items_to_frame",
    "render",
    "render_natural",
    "render_problem",
    "words",
]

CATEGORIES = ("VAVR", "VAIR", "IAIR")
FLAWS = ("missing_premise", "missing_step", "shuffled", "circular")  # the paper's four VAIR flaws, in its order
IAIR_FLAW = "arithmetic_slip"
CATEGORY_FLAWS = {"VAVR": ("none",), "VAIR": FLAWS, "IAIR": (IAIR_FLAW,)}
SOURCES = ("synthetic", "gsm8k", "math")
SPLITS = ("train", "eval")


def _is_int(value) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


@dataclass(frozen=True)
class Step:
    """One calculator step: `expression` over numbers with + - * / and parentheses, its stated integer `result`, and
    a short natural-language line `text` that contains the annotation ``"<expression> = <result>"``."""

    expression: str
    result: int
    text: str

    def __post_init__(self):
        if not self.expression.strip():
            raise ValueError(f"a step needs an expression, got {self!r}")
        if not _is_int(self.result):
            raise ValueError(f"a step's result must be an int, got {self.result!r} in {self!r}")
        if self.annotation not in self.text:
            raise ValueError(f"a step's text must contain its annotation {self.annotation!r}, got {self.text!r}")

    @property
    def annotation(self) -> str:
        return f"{self.expression} = {self.result}"


@dataclass(frozen=True)
class Problem:
    """A word problem: `sentences` (each stating quantities), the `question`, the quantities the sentences state
    (`numbers`, in order; integers only), the ground-truth `answer` and where it comes from (`source`)."""

    problem_id: str
    sentences: tuple[str, ...]
    question: str
    numbers: tuple[int, ...]
    answer: int
    source: str

    def __post_init__(self):
        if not self.problem_id:
            raise ValueError("a problem needs a problem_id")
        if not isinstance(self.sentences, tuple) or not all(isinstance(s, str) and s for s in self.sentences):
            raise ValueError(f"problem {self.problem_id}: sentences must be a tuple of non-empty strings")
        if not all(_is_int(n) for n in self.numbers) or not _is_int(self.answer):
            raise ValueError(f"problem {self.problem_id}: numbers and answer must be ints")
        if self.source not in SOURCES:
            raise ValueError(f"problem {self.problem_id}: source {self.source!r} is not one of {SOURCES}")


@dataclass(frozen=True)
class SolvedProblem:
    """A problem with its gold solution: the last step's result is the problem's answer."""

    problem: Problem
    steps: tuple[Step, ...]

    def __post_init__(self):
        if not self.steps or self.steps[-1].result != self.problem.answer:
            raise ValueError(
                f"problem {self.problem.problem_id}: the gold solution's last step must give the answer "
                f"{self.problem.answer}, got {self.steps[-1].result if self.steps else 'no steps'}"
            )


@dataclass(frozen=True)
class Item:
    """A graded solution: the problem as shown (`problem_sentences`, with one sentence dropped for a missing premise),
    the solution's `steps` and stated `answer`, the ground truth `gt_answer`, and the labels. `first_invalid_step` is
    -1 for valid reasoning, otherwise the index of the first step the checker rejects (``len(steps)`` when only the
    stated answer disagrees with the last step)."""

    item_id: str
    problem_id: str
    category: str
    flaw: str
    problem_sentences: tuple[str, ...]
    question: str
    steps: tuple[Step, ...]
    answer: int
    gt_answer: int
    answer_valid: bool
    reasoning_valid: bool
    first_invalid_step: int
    split: str

    def __post_init__(self):
        name = f"item {self.item_id}"
        if self.category not in CATEGORY_FLAWS:
            raise ValueError(f"{name}: category {self.category!r} is not one of {CATEGORIES}")
        if self.flaw not in CATEGORY_FLAWS[self.category]:
            raise ValueError(
                f"{name}: a {self.category} item has flaw in {CATEGORY_FLAWS[self.category]}, got {self.flaw!r}"
            )
        if self.split not in SPLITS:
            raise ValueError(f"{name}: split {self.split!r} is not one of {SPLITS}")
        if not isinstance(self.steps, tuple) or not self.steps or not all(isinstance(s, Step) for s in self.steps):
            raise ValueError(f"{name}: steps must be a non-empty tuple of Step")
        if not isinstance(self.problem_sentences, tuple):
            raise ValueError(f"{name}: problem_sentences must be a tuple")
        if not (_is_int(self.answer) and _is_int(self.gt_answer) and _is_int(self.first_invalid_step)):
            raise ValueError(f"{name}: answer, gt_answer and first_invalid_step must be ints")
        if self.answer_valid != (self.answer == self.gt_answer):
            raise ValueError(
                f"{name}: answer_valid={self.answer_valid} but answer {self.answer} vs gt_answer {self.gt_answer}"
            )
        if self.reasoning_valid != (self.first_invalid_step == -1):
            raise ValueError(
                f"{name}: first_invalid_step must be -1 exactly when the reasoning is valid, got "
                f"{self.first_invalid_step} with reasoning_valid={self.reasoning_valid}"
            )
        if not -1 <= self.first_invalid_step <= len(self.steps):
            raise ValueError(f"{name}: first_invalid_step {self.first_invalid_step} outside -1..{len(self.steps)}")
        expected = {"VAVR": (True, True), "VAIR": (True, False), "IAIR": (False, False)}[self.category]
        if (self.answer_valid, self.reasoning_valid) != expected:
            raise ValueError(
                f"{name}: a {self.category} item has (answer_valid, reasoning_valid) = {expected}, got "
                f"({self.answer_valid}, {self.reasoning_valid})"
            )


_NUMBER_COMMAS = re.compile(r"(?<=\d),(?=\d{3})")
_BARE_DECIMAL = re.compile(r"(?<![\d.])\.(?=\d)")
_WORD = re.compile(r"\d+(?:\.\d+)?|[^\W\d_]+|[^\s\w]|_")


def words(text: str) -> list[str]:
    """The word-level tokens of `text`: lower case, numbers whole (``1,000`` -> ``1000``, ``.5`` -> ``0.5``),
    every punctuation mark and operator a token of its own."""
    text = _BARE_DECIMAL.sub("0.", _NUMBER_COMMAS.sub("", text.lower()))
    return _WORD.findall(text)


@lru_cache(maxsize=65536)
def _render_shown(sentences: tuple[str, ...], question: str) -> str:
    return " ".join(words(" ".join([*sentences, question])))


@lru_cache(maxsize=65536)
def _render_step(expression: str, result: int) -> str:
    return " ".join([*words(expression), "=", str(result)])


def render_problem(problem: Problem) -> str:
    """The word-level text a solver reads: the problem's sentences and question (one line)."""
    return _render_shown(problem.sentences, problem.question)


def render(item: Item) -> str:
    """The small model's text: the shown problem and question on one line, ``SOLUTION``, one line per step
    ``<expr> = <result>`` and ``ANSWER <n>``; every number and operator a whitespace-separated word."""
    lines = [_render_shown(item.problem_sentences, item.question), "SOLUTION"]
    lines += [_render_step(step.expression, step.result) for step in item.steps]
    lines.append(f"ANSWER {item.answer}")
    return "\n".join(lines)


def render_natural(item: Item) -> str:
    """The paper-style text an external model grades: the problem, then the solution's natural-language steps and
    its final answer."""
    problem = " ".join([*item.problem_sentences, item.question])
    solution = "\n".join(step.text for step in item.steps)
    return f"Problem: {problem}\n\nSolution:\n{solution}\nFinal answer: {item.answer}"


_COLUMNS = [f.name for f in fields(Item)]


def items_to_frame(items: Sequence[Item]) -> pd.DataFrame:
    """Items as a table (one row per item; `problem_sentences` and `steps` as JSON text), for ``items.parquet``."""
    rows = []
    for item in items:
        row = {name: getattr(item, name) for name in _COLUMNS}
        row["problem_sentences"] = json.dumps(list(item.problem_sentences))
        row["steps"] = json.dumps([[s.expression, s.result, s.text] for s in item.steps])
        rows.append(row)
    frame = pd.DataFrame(rows, columns=_COLUMNS)
    ints = {"answer": "int64", "gt_answer": "int64", "first_invalid_step": "int64"}
    return frame.astype({**ints, "answer_valid": bool, "reasoning_valid": bool})


def items_from_frame(frame: pd.DataFrame) -> list[Item]:
    """The items of a table written by :func:`items_to_frame`; ValueError naming missing columns."""
    missing = [c for c in _COLUMNS if c not in frame.columns]
    if missing:
        raise ValueError(f"an items table needs the columns {missing}")
    steps: dict[tuple, Step] = {}  # items of one problem share steps: each is built (and validated) once

    def step(expression: str, result: int, text: str) -> Step:
        key = (expression, result, text)
        if key not in steps:
            steps[key] = Step(expression, int(result), text)
        return steps[key]

    items = []
    for values in zip(*(frame[c].tolist() for c in _COLUMNS), strict=True):
        row = dict(zip(_COLUMNS, values, strict=True))
        row["problem_sentences"] = tuple(json.loads(row["problem_sentences"]))
        row["steps"] = tuple(step(*triple) for triple in json.loads(row["steps"]))
        for name in ("answer", "gt_answer", "first_invalid_step"):
            row[name] = int(row[name])
        for name in ("answer_valid", "reasoning_valid"):
            row[name] = bool(row[name])
        items.append(Item(**row))
    return items


def check_splits(items: Iterable[Item]) -> None:
    """ValueError when an item_id occurs twice (naming whether in two splits) or a problem has items in both
    splits (naming the ids): train and eval must not share a problem."""
    items = list(items)
    item_splits, problem_splits = defaultdict(set), defaultdict(set)
    for item in items:
        item_splits[item.item_id].add(item.split)
        problem_splits[item.problem_id].add(item.split)
    crossing = sorted(i for i, s in item_splits.items() if len(s) > 1)
    if crossing:
        raise ValueError(f"item_ids in two splits: {crossing[:20]} ({len(crossing)} in all)")
    duplicates = sorted(i for i, n in Counter(item.item_id for item in items).items() if n > 1)
    if duplicates:
        raise ValueError(f"duplicate item_ids: {duplicates[:20]} ({len(duplicates)} in all)")
    leaked = sorted(p for p, s in problem_splits.items() if len(s) > 1)
    if leaked:
        raise ValueError(f"problem_ids in two splits: {leaked[:20]} ({len(leaked)} in all)")
