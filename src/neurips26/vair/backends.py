"""Backends of the grading harness: anything that solves problems and grades solutions, behind one protocol.

A backend receives tasks, not bare strings: a task carries both views of its item, the natural-language text that a
language model reads (`problem`, `solution`) and the structured `Item` (steps, labels) that the rule-based checker,
the answer-only grader and the small local model (which reads `render(item)`) need. Each backend reads the view it
needs, so a call site never asks what kind of backend it holds.

To add a backend, write a class with

    name: str                  # the label of its rows in the results table
    tasks: frozenset[str]      # the tasks it does, a subset of {"solve", "grade"}
    external: bool             # an external model: more than 20% unparseable verdicts fails the run
    def solve(self, tasks: Sequence[SolveTask]) -> list[Reply]: ...   # one reply per task, in order
    def grade(self, tasks: Sequence[GradeTask]) -> list[Reply]: ...   # one reply per task, in order

and a factory (keyword options -> backend) in BACKENDS. A backend with heavy dependencies (torch, transformers, an
HTTP client) lives in its own module, which calls `register_backend(name, factory)` when imported, as `http` and
`hf` do: a job that runs it imports that module, and only such a job needs those dependencies. A text backend (one
prompt per task) can subclass TextBackend and implement `solve_texts` and `grade_texts` instead. A reply keeps the
raw text and the parsed value (an answer for solve, a grade 0-3 for grade), None when it could not be read.

The model-free backends:
- `rule`: the step checker (upper bound). Grades 3 when the checker accepts the solution's answer and every step, 1
  when the answer is right but a step is rejected, 0 when the answer is wrong. Solves by replaying the gold
  solution's steps (the problem's VAVR item) through the checker and answering its last step's result.
- `answer_only`: pure confirmation. Its own solve of a problem is the item's certified ground truth (`gt_answer`,
  which the dataset's checker verified against the gold steps); it grades 3 when the stated answer equals it and 0
  otherwise, never reading the steps.
- `random`: a uniformly random grade 0-3, seeded per (seed, item_id) so that order and batching change nothing.
  Solving is not applicable (no principled range to draw an answer from): its `tasks` is {"grade"} only.
"""

from __future__ import annotations

import zlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import ClassVar, Protocol

import numpy as np

from neurips26.vair.checker import check_item
from neurips26.vair.items import Item
from neurips26.vair.rubric import FULL_GRADE, GRADES
from neurips26.vair.verdicts import format_answer, format_grade

TASKS = ("solve", "grade")


@dataclass(frozen=True)
class SolveTask:
    """Solve one problem: `problem` is its natural-language text, `item` the problem's flawless (VAVR) item, so its
    problem is the unperturbed one and its steps the gold solution."""

    problem_id: str
    problem: str
    item: Item


@dataclass(frozen=True)
class GradeTask:
    """Grade one solution: `problem` is the problem as shown with it, `solution` its natural-language steps and final
    answer, `item` the structured item."""

    item_id: str
    problem: str
    solution: str
    item: Item


@dataclass(frozen=True)
class Reply:
    """A backend's reply to one task: the raw text, the parsed value (a final answer, or a grade 0-3) or None when
    none could be read, and `error`, a short reason when the backend itself failed (a malformed HTTP response)."""

    raw: str
    value: int | float | None
    error: str = ""

    @property
    def parsed_ok(self) -> bool:
        return self.value is not None


SolveReply = Reply
GradeReply = Reply


class Backend(Protocol):
    name: str
    tasks: frozenset[str]
    external: bool

    def solve(self, tasks: Sequence[SolveTask]) -> list[Reply]: ...

    def grade(self, tasks: Sequence[GradeTask]) -> list[Reply]: ...


class TextBackend:
    """Base of the backends that read text only (a prompted language model): they implement `solve_texts(problems)`
    and `grade_texts(problems, solutions)`, one reply per text, in order."""

    name: str = "text"
    tasks: frozenset[str] = frozenset(TASKS)
    external: bool = True

    def solve(self, tasks: Sequence[SolveTask]) -> list[Reply]:
        return self.solve_texts([task.problem for task in tasks])

    def grade(self, tasks: Sequence[GradeTask]) -> list[Reply]:
        return self.grade_texts([task.problem for task in tasks], [task.solution for task in tasks])

    def solve_texts(self, problems: list[str]) -> list[Reply]:
        raise NotImplementedError

    def grade_texts(self, problems: list[str], solutions: list[str]) -> list[Reply]:
        raise NotImplementedError


def _not_applicable(backend, task: str):
    raise ValueError(f"backend {backend.name!r} does not do the task {task!r} (it does {sorted(backend.tasks)})")


@dataclass
class ModelFreeBackend:
    """Base of the backends that compute their replies from the structured items (no model, never unparseable)."""

    name: str
    tasks: ClassVar[frozenset[str]] = frozenset(TASKS)
    external: ClassVar[bool] = False


@dataclass
class RuleBackend(ModelFreeBackend):
    """The step checker as a grader and solver (the upper bound); see the module docstring."""

    name: str = "rule"

    def grade(self, tasks: Sequence[GradeTask]) -> list[Reply]:
        replies = []
        for task in tasks:
            result = check_item(task.item)
            grade = FULL_GRADE if result.answer_valid and result.reasoning_valid else int(result.answer_valid)
            replies.append(Reply(f"checker: {result.reason} {result.detail}\n{format_grade(grade)}", grade))
        return replies

    def solve(self, tasks: Sequence[SolveTask]) -> list[Reply]:
        replies = []
        for task in tasks:
            result = check_item(task.item)
            if not result.reasoning_valid:
                replies.append(Reply(f"checker: the gold steps fail: {result.reason} {result.detail}", None))
                continue
            answer = task.item.steps[-1].result
            replies.append(Reply(f"replayed {len(task.item.steps)} gold steps\n{format_answer(answer)}", answer))
        return replies


@dataclass
class AnswerOnlyBackend(ModelFreeBackend):
    """Pure confirmation: valid exactly when the stated answer equals the certified ground truth."""

    name: str = "answer_only"

    def grade(self, tasks: Sequence[GradeTask]) -> list[Reply]:
        grades = [FULL_GRADE if task.item.answer == task.item.gt_answer else 0 for task in tasks]
        return [Reply(format_grade(grade), grade) for grade in grades]

    def solve(self, tasks: Sequence[SolveTask]) -> list[Reply]:
        return [Reply(format_answer(task.item.gt_answer), task.item.gt_answer) for task in tasks]


@dataclass
class RandomBackend(ModelFreeBackend):
    """A uniformly random grade 0-3 per item, the same for the same (seed, item_id); it does not solve."""

    name: str = "random"
    seed: int = 0
    tasks: ClassVar[frozenset[str]] = frozenset({"grade"})

    def grade(self, tasks: Sequence[GradeTask]) -> list[Reply]:
        replies = []
        for task in tasks:
            rng = np.random.default_rng([self.seed, zlib.crc32(task.item_id.encode())])
            grade = int(rng.integers(len(GRADES)))
            replies.append(Reply(format_grade(grade), grade))
        return replies

    def solve(self, tasks: Sequence[SolveTask]) -> list[Reply]:
        _not_applicable(self, "solve")


BACKENDS: dict[str, Callable[..., Backend]] = {
    "rule": RuleBackend,
    "answer_only": AnswerOnlyBackend,
    "random": RandomBackend,
}
# Backends with heavy dependencies live in their own modules and register themselves when imported, so that a job
# importing this module (or neurips26.vair.grading) does not need what they need.
REGISTERED_ON_IMPORT = {"http": "neurips26.vair.http_backend", "hf": "neurips26.vair.hf_backend"}


def register_backend(name: str, factory: Callable[..., Backend]) -> None:
    """Add `factory` (keyword options -> backend) to BACKENDS as `name`; ValueError when another factory has it."""
    if BACKENDS.get(name, factory) is not factory:
        raise ValueError(f"backend name {name!r} is taken by {BACKENDS[name]!r}")
    BACKENDS[name] = factory


def make_backend(name: str, /, **options) -> Backend:
    """The backend registered as `name`, built from its keyword `options` (which may hold a ``name`` of their own: the
    backend's label); ValueError naming the registered ones (and the module to import for a backend that registers
    on import)."""
    if name not in BACKENDS:
        hint = f" (import {REGISTERED_ON_IMPORT[name]} to register it)" if name in REGISTERED_ON_IMPORT else ""
        raise ValueError(f"unknown backend {name!r}{hint}; registered backends: {sorted(BACKENDS)}")
    return BACKENDS[name](**options)
