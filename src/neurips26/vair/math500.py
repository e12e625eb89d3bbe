"""MATH-500 (HuggingFaceH4/MATH-500, 500 problems of MATH, Hendrycks et al. 2021) as gold-solution (VAVR) items
certified by the final answer only.

MATH solutions are free-form LaTeX, not calculator steps: the step checker cannot replay them and the flaw
transformations cannot be applied, so a MATH item's reasoning is not verified (``reasoning_valid`` is None) and only
its answer is: the solution's last ``\\boxed{...}`` must match the record's `answer` after normalisation
(:func:`answers_match`: LaTeX spacing and fraction forms, ``\\text``, thousands separators, exact numbers; no
algebra). Records that fail are skipped and counted by reason.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass

from sympy import Rational

__all__ = ["MathItem", "answers_match", "boxed_answer", "normalise_answer", "read_math500", "render_math"]


@dataclass(frozen=True)
class MathItem:
    """A MATH-500 problem with its gold solution, usable as a VAVR item whose answer (not reasoning) is
    certified."""

    item_id: str
    problem_id: str
    problem: str
    solution: str
    answer: str
    subject: str
    level: int
    split: str = "eval"
    category: str = "VAVR"
    flaw: str = "none"
    answer_valid: bool = True
    reasoning_valid: bool | None = None  # not replayed (module docstring)


def boxed_answer(solution: str) -> str | None:
    """The content of the last ``\\boxed{...}`` of a solution (braces matched), or None."""
    start = solution.rfind("\\boxed{")
    if start < 0:
        return None
    depth, begin = 0, start + len("\\boxed{")
    for position in range(begin, len(solution)):
        depth += {"{": 1, "}": -1}.get(solution[position], 0)
        if depth < 0:
            return solution[begin:position]
    return None


_REMOVED = ("\\left", "\\right", "\\!", "\\,", "\\;", "\\:", "\\ ", "$", "^\\circ", "^{\\circ}", "\\%", "%")
_SHORT_ARGUMENT = re.compile(r"\\(frac|sqrt)(?![a-zA-Z{])(\w)(\w)?")


def normalise_answer(answer: str) -> str:
    """A canonical string of a MATH answer (module docstring)."""
    text = answer.strip()
    for token in _REMOVED:
        text = text.replace(token, "")
    text = re.sub(r"\\[dt]frac", r"\\frac", text)
    text = re.sub(r"\\text\{([^{}]*)\}", r"\1", text)
    text = re.sub(r"(?<=\d),(?=\d{3}(?!\d))", "", text)
    text = _SHORT_ARGUMENT.sub(lambda m: f"\\{m[1]}{{{m[2]}}}" + (f"{{{m[3]}}}" if m[3] else ""), text)
    text = re.sub(r"\s+", "", text).rstrip(".")
    return re.sub(r"^\(([A-Z])\)$", r"\1", text)


def _number(text: str) -> Rational | None:
    fraction = re.fullmatch(r"(-?)\\frac\{(\d+)\}\{(\d+)\}", text)
    if fraction:
        value = Rational(int(fraction[2]), int(fraction[3]))
        return -value if fraction[1] else value
    return Rational(text) if re.fullmatch(r"-?\d+(?:\.\d+)?", text) else None


def answers_match(first: str, second: str) -> bool:
    """Whether two MATH answers agree: equal normalised strings, or equal exact numbers."""
    a, b = normalise_answer(first), normalise_answer(second)
    if a == b:
        return True
    x, y = _number(a), _number(b)
    return x is not None and y is not None and x == y


def read_math500(lines: Iterable[str]) -> tuple[list[MathItem], dict[str, int]]:
    """The MATH-500 records of a jsonl text (its lines) whose boxed answer matches their `answer`, as MathItems,
    and the skipped records per reason; ValueError naming a line that is not a record."""
    items, skipped = [], Counter()
    for index, line in enumerate(lines):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
            problem, solution, answer = record["problem"], record["solution"], record["answer"]
            problem_id, subject, level = record["unique_id"], record["subject"], int(record["level"])
        except (json.JSONDecodeError, KeyError, TypeError, ValueError) as error:
            raise ValueError(
                f"MATH-500 line {index} is not a record with problem, solution, answer: {error}"
            ) from error
        boxed = boxed_answer(solution)
        if boxed is None:
            skipped["no_boxed_answer"] += 1
        elif not answers_match(boxed, answer):
            skipped["answer_mismatch"] += 1
        else:
            items.append(MathItem(f"{problem_id}/none/0", problem_id, problem, solution, answer, subject, level))
    return items, dict(sorted(skipped.items()))


def render_math(item: MathItem) -> str:
    """The paper-style text an external model grades (as :func:`.items.render_natural`)."""
    return f"Problem: {item.problem}\n\nSolution:\n{item.solution}\nFinal answer: {item.answer}"
