"""GSM8K (Cobbe et al. 2021, openai/grade-school-math) as VAIR problems with replayable gold solutions.

A GSM8K record is a JSON line with `question` and `answer`; the answer's lines carry calculator annotations
``<<48/2=24>>`` and end with ``#### <final answer>``. Each annotation becomes a :class:`.items.Step` (its line, with
the annotation written ``48/2 = 24``, is the step's text); the question is split into sentences, its last one the
question. A record is kept only when the step checker replays its gold solution as valid (every operand stated in
the question or derived earlier, exact arithmetic, the last step giving the final answer) and every value is an
integer; the others are skipped and counted by reason, never dropped silently.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Iterable

from sympy import Rational

from neurips26.vair.checker import check_solution, evaluate
from neurips26.vair.items import Problem, SolvedProblem, Step

__all__ = ["read_gsm8k", "split_sentences"]

_ANNOTATION = re.compile(r"<<([^<>=]*)=([^<>]*)>>")
_FINAL = re.compile(r"^####\s*(.+?)\s*$", re.MULTILINE)
_RESTATED = re.compile(r"(?<![A-Za-z])(?:[\d.,()+\-*/×÷–−$%]|\s|\bx\b)+=\s*\$?\s*$")  # "16 - 3 - 4 = " before it
_REPEATED = re.compile(r"^\$?-?[\d,]*\.?\d+")  # the result GSM8K writes again right after the annotation
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z0-9$\"'])")
_INTEGER = re.compile(r"(?<![\d.])\d{1,3}(?:,\d{3})+(?![\d,])|(?<![\d.])\d+(?![\d.])")


def split_sentences(text: str) -> list[str]:
    """The sentences of a GSM8K question (split after . ! ? before a capital, digit, $ or quote)."""
    return [s.strip() for s in _SENTENCE_END.split(text.strip()) if s.strip()]


def _integer(text: str) -> int | None:
    """The integer a GSM8K number writes (``1,260``, ``18.00``), or None when it is not one."""
    try:
        value = Rational(text.replace(",", "").replace("$", "").strip())
    except (TypeError, ValueError, SyntaxError):
        return None
    return int(value) if value.is_Integer else None


def _step_text(line: str, match: re.Match, expression: str, result: int) -> str:
    """The line of an annotation with it written ``<expression> = <result>`` (the expression the line states
    before it and the result it repeats after it are replaced), other annotations of the line removed."""
    before, after = line[: match.start()], line[match.end() :]
    restated = _RESTATED.search(before)
    if restated and any(c.isdigit() for c in restated.group()):
        before = before[: restated.start()]
    after = _REPEATED.sub("", after, count=1)
    text = f"{before.rstrip()} {expression} = {result}{after}".strip()
    return " ".join(_ANNOTATION.sub("", text).split())


def _record(index: int, question: str, answer: str, prefix: str) -> SolvedProblem | str:
    """The problem of one record, or the reason it is skipped."""
    final = _FINAL.search(answer)
    gt = _integer(final.group(1)) if final else None
    if gt is None:
        return "no_integer_final_answer"
    steps = []
    for line in answer[: final.start()].splitlines():
        for match in _ANNOTATION.finditer(line):
            expression, result = match.group(1).strip(), _integer(match.group(2))
            if result is None:
                return "non_integer_step"
            try:
                evaluate(expression)
            except ValueError:
                return "unparseable_expression"
            steps.append(Step(expression, result, _step_text(line, match, expression, result)))
    if not steps:
        return "no_annotations"
    parts = split_sentences(question)
    sentences, asked = tuple(parts[:-1]), parts[-1]
    verdict = check_solution(sentences, asked, steps, gt, gt)
    if not verdict.reasoning_valid:
        return verdict.reason
    numbers = tuple(int(n.replace(",", "")) for n in _INTEGER.findall(" ".join(sentences)))
    problem = Problem(f"{prefix}-{index}", sentences, asked, numbers, gt, "gsm8k")
    return SolvedProblem(problem, tuple(steps))


def read_gsm8k(lines: Iterable[str], *, prefix: str = "gsm8k") -> tuple[list[SolvedProblem], dict[str, int]]:
    """The GSM8K records of a jsonl text (its lines) whose gold solutions the checker replays, with ids
    ``<prefix>-<line index>``, and the number of skipped records per reason (module docstring). ValueError naming
    the line for a line that is not a JSON record with `question` and `answer`."""
    problems, skipped = [], Counter()
    for index, line in enumerate(lines):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
            question, answer = record["question"], record["answer"]
        except (json.JSONDecodeError, KeyError, TypeError) as error:
            raise ValueError(f"GSM8K line {index} is not a record with question and answer: {error}") from error
        solved = _record(index, question, answer, prefix)
        if isinstance(solved, str):
            skipped[solved] += 1
        else:
            problems.append(solved)
    return problems, dict(sorted(skipped.items()))
