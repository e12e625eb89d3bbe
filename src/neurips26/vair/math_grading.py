"""A text backend (an external model: http, hf) on MATH-500 items (Hendrycks et al. 2021; :mod:`.math500`), in the
harness's results table (:data:`.grading.RESULT_COLUMNS`).

MATH answers are LaTeX, not integers, and its gold solutions cannot be replayed or flawed, so: every item is a VAVR
gold solution (a grade is correct when it is 3), and a solve reply is correct when its final answer (the last
``\\boxed{...}``, else the text after the last ``ANSWER:``) matches the record's answer by
:func:`.math500.answers_match` (normalised LaTeX or equal exact numbers; no algebra). ``parsed`` of a solve row is the
answer as a number where it is one (NaN otherwise); ``parsed_ok`` says whether an answer was found at all.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence

import pandas as pd

from .backends import TextBackend
from .grading import SOLVE_CATEGORY, results_frame
from .math500 import MathItem, answers_match, boxed_answer
from .rubric import grade_is_correct
from .verdicts import ANSWER_KEYWORD, strip_thoughts

__all__ = ["math_answer", "math_results"]

_ANSWER_LINE = re.compile(rf"\b{ANSWER_KEYWORD}[*_\s]*:[*_\s]*(.+?)\s*$", re.I | re.M)


def math_answer(reply: str) -> str | None:
    """The final answer a MATH solve reply states: its last ``\\boxed{...}``, else its last ``ANSWER: ...`` line's
    text; None when it states neither (thoughts dropped first)."""
    body = strip_thoughts(reply or "")
    boxed = boxed_answer(body)
    if boxed is not None:
        return boxed
    lines = _ANSWER_LINE.findall(body)
    return lines[-1] if lines else None


def _number(answer: str | None) -> float:
    try:
        return float(answer.replace(",", "")) if answer is not None else math.nan
    except ValueError:
        return math.nan


def math_results(backend: TextBackend, items: Sequence[MathItem]) -> pd.DataFrame:
    """The results rows of `backend` solving every MATH-500 problem of `items` and grading each gold solution."""
    problems = [item.problem for item in items]
    solutions = [f"{item.solution}\nFinal answer: {item.answer}" for item in items]
    rows = []
    for item, reply in zip(items, backend.solve_texts(problems), strict=True):
        answer = math_answer(reply.raw) if not reply.error else None
        rows.append(
            {
                "item_id": item.problem_id,
                "problem_id": item.problem_id,
                "category": SOLVE_CATEGORY,
                "flaw": "none",
                "backend": backend.name,
                "task": "solve",
                "raw": reply.raw,
                "parsed": _number(answer),
                "parsed_ok": answer is not None,
                "correct": answer is not None and answers_match(answer, item.answer),
                "error": reply.error,
            }
        )
    for item, reply in zip(items, backend.grade_texts(problems, solutions), strict=True):
        rows.append(
            {
                "item_id": item.item_id,
                "problem_id": item.problem_id,
                "category": item.category,
                "flaw": item.flaw,
                "backend": backend.name,
                "task": "grade",
                "raw": reply.raw,
                "parsed": math.nan if reply.value is None else float(reply.value),
                "parsed_ok": reply.parsed_ok,
                "correct": grade_is_correct(reply.value, item.category),
                "error": reply.error,
            }
        )
    return results_frame(rows)
