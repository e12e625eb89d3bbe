"""Reading a backend's reply: the grade 0-3 of the evaluation task and the final answer of the production task.

Both parsers first drop a reasoning model's thoughts: the text up to the last ``</think>``, and an unclosed
``<think>`` block (a reply cut off while thinking has no verdict).

Grades (`parse_grade`), in order:
1. Format lines: lines that are exactly ``GRADE: n`` (case, markdown emphasis around it and a trailing ``/3``
   tolerated). All such lines must agree on one n in 0-3; two different grades, or an n outside 0-3, make the reply
   unparseable: an ambiguous verdict is never resolved in the grader's favour.
2. Fallback, when no line follows the format: the last number written shortly after the word "grade" ("I would
   grade this a 2", "Grade: 1 because ..."); it counts when it is a whole number 0-3, else the reply is unparseable.
3. Fallback: a reply that is nothing but one digit 0-3.
Otherwise None (unparseable; counted by the harness as a wrong verdict, never dropped).

Answers (`parse_answer`): the last of ``ANSWER: n``, ``#### n`` (GSM8K's answer line) and ``\\boxed{n}``
(``\\frac{a}{b}`` inside a box too) whose n is a number; thousands commas, a dollar sign and ``\\text{...}`` units
are ignored. A whole number comes back as int, another as float; no answer gives None.
"""

from __future__ import annotations

import re
from fractions import Fraction

from neurips26.vair.rubric import GRADES

GRADE_KEYWORD = "GRADE"
ANSWER_KEYWORD = "ANSWER"

_NUMBER = r"-?\s*\$?\s*\d[\d,]*(?:\.\d+)?"
_FORMAT_LINE = re.compile(
    rf"^[\s*_#>`]*{GRADE_KEYWORD}[\s*_`]*[:=][\s*_`]*(-?\d+(?:\.\d+)?)\s*(?:/\s*3)?[\s*_`.]*$", re.I | re.M
)
_AFTER_WORD = re.compile(r"\bgrade\b[^\d\n]{0,24}?(?<![\d.])(-?\d+(?:\.\d+)?)", re.I)
_ANSWER_LINE = re.compile(rf"\b{ANSWER_KEYWORD}[*_\s]*:[*_\s]*({_NUMBER})", re.I)
_HASHES = re.compile(rf"####\s*({_NUMBER})")
_BOXED = re.compile(r"\\boxed\s*\{((?:[^{}]|\{(?:[^{}]|\{[^{}]*\})*\})*)\}")
_FRAC = re.compile(r"^(-?)\\[dt]?frac\{(-?\d+)\}\{(\d+)\}$")


def format_grade(grade: int) -> str:
    """The format line of a grade, as the prompt asks for it: ``GRADE: 2``."""
    if grade not in GRADES:
        raise ValueError(f"a grade is one of {list(GRADES)}, got {grade!r}")
    return f"{GRADE_KEYWORD}: {grade}"


def format_answer(answer: int) -> str:
    """The format line of a final answer, as the solving prompt asks for it: ``ANSWER: 18``."""
    return f"{ANSWER_KEYWORD}: {answer}"


def strip_thoughts(text: str) -> str:
    """`text` without a reasoning model's thoughts: what follows the last ``</think>``, and nothing from an unclosed
    ``<think>`` on."""
    text = text or ""
    closing = text.lower().rfind("</think>")
    if closing >= 0:
        text = text[closing + len("</think>") :]
    opening = text.lower().find("<think>")
    return text if opening < 0 else text[:opening]


def _whole_grade(token: str) -> int | None:
    return int(token) if token in {str(g) for g in GRADES} else None


def parse_grade(text: str | None) -> int | None:
    """The grade 0-3 a reply states (see the module's rules), or None when it states none unambiguously."""
    body = strip_thoughts(text or "")
    stated = _FORMAT_LINE.findall(body)
    if stated:
        grades = {_whole_grade(token) for token in stated}
        return grades.pop() if len(grades) == 1 else None  # a None in the set (out of range) also lands here
    mentioned = _AFTER_WORD.findall(body)
    if mentioned:
        return _whole_grade(mentioned[-1])
    return _whole_grade(body.strip())


def _number(token: str) -> int | float | None:
    """A number written as `token` (LaTeX fraction, thousands commas, dollar sign, units in \\text{} allowed)."""
    token = re.sub(r"\\(?:text|mathrm|mbox)\{[^{}]*\}", "", token)
    token = re.sub(r"\\[$,!; ]|[$\s]", "", token).replace(",", "")
    fraction = _FRAC.match(token)
    try:
        if fraction:
            value = Fraction(int(fraction.group(2)), int(fraction.group(3)))
            value = -value if fraction.group(1) else value
        else:
            value = Fraction(token)
    except (ValueError, ZeroDivisionError):
        return None
    return int(value) if value.denominator == 1 else float(value)


def parse_answer(text: str | None) -> int | float | None:
    """The final answer a solver's reply states (the last well-formed answer marker), or None."""
    body = strip_thoughts(text or "")
    found: list[tuple[int, int | float]] = []
    for pattern in (_ANSWER_LINE, _HASHES, _BOXED):
        for match in pattern.finditer(body):
            value = _number(match.group(1))
            if value is not None:
                found.append((match.start(), value))
    return max(found, key=lambda hit: hit[0])[1] if found else None
