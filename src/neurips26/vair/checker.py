"""The rule-based step checker: replays a calculator-step solution and decides whether its reasoning is valid, the
criterion that separates VAVR from VAIR solutions in the VAIR dataset (arXiv 2606.01462).

Each step's expression (numbers, + - * / and parentheses) is evaluated exactly with sympy (Rational arithmetic) and
the solution is valid when, step by step,
(a) the expression's value equals the step's stated result ("arithmetic" otherwise);
(b) every operand is a number stated in the shown problem text or the result of an earlier step; an operand that is
    neither is the final answer before it is derived ("circular"), a later step's result ("use_before_definition")
    or a number that appears nowhere ("undefined_operand");
(d) the stated final answer equals the last step's result ("answer_mismatch", reported at index ``len(steps)``).
The verdict names the first failing step. A number names one quantity only where the problem's quantities are
distinct (the synthetic generator guarantees it; a GSM8K question may state a number twice, and then a dropped
premise or a moved step can go unnoticed: the flaw transformations skip such cases).

Numbers the text states: digits (``1,000``, ``2.50``), percentages (``20%`` states 20 and 1/5) and number words
(``three``, ``twenty-five``, ``dozen``, ``twice``, ``half`` for 2 and 1/2, ...), as GSM8K questions write them.
"""

from __future__ import annotations

import operator
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import lru_cache

from sympy import Integer, Rational

from neurips26.vair.items import Item, Step

__all__ = ["REASONS", "CheckResult", "check_item", "check_solution", "evaluate", "stated_numbers", "verify_item"]

REASONS = ("valid", "arithmetic", "undefined_operand", "use_before_definition", "circular", "answer_mismatch")

_UNITS = ("zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen "
          "seventeen eighteen nineteen twenty").split()  # fmt: skip
_TENS = {"twenty": 20, "thirty": 30, "forty": 40, "fifty": 50, "sixty": 60, "seventy": 70, "eighty": 80, "ninety": 90}
NUMBER_WORDS = {
    **{word: (Integer(value),) for value, word in enumerate(_UNITS)},
    **{word: (Integer(value),) for word, value in _TENS.items()},
    "hundred": (Integer(100),),
    "thousand": (Integer(1000),),
    "dozen": (Integer(12),),
    "twice": (Integer(2),),
    "double": (Integer(2),),
    "triple": (Integer(3),),
    "half": (Integer(2), Rational(1, 2)),
    "third": (Integer(3), Rational(1, 3)),
    "quarter": (Integer(4), Rational(1, 4)),
    "fourth": (Integer(4), Rational(1, 4)),
    "fifth": (Integer(5), Rational(1, 5)),
    "tenth": (Integer(10), Rational(1, 10)),
}
_COMPOUND = re.compile(rf"\b({'|'.join(_TENS)})-({'|'.join(_UNITS[1:10])})\b")
_STATED = re.compile(r"(\d+(?:\.\d+)?|\.\d+)(\s*(?:%|percent\b))?|([a-z]+)")
_THOUSANDS = re.compile(r"(?<=\d),(?=\d{3}(?!\d))")
_PRECEDENCE = (("+", "-"), ("*", "/"))
_TOKEN = re.compile(r"\s*(?:(\d+(?:\.\d+)?|\.\d+)|([-+*/()]))")


@dataclass(frozen=True)
class CheckResult:
    """The checker's verdict: answer_valid (stated answer equals the ground truth), reasoning_valid, the index of the
    first invalid step (-1 when valid, ``len(steps)`` for an answer that is not the last step's result), the reason
    (one of REASONS) and a sentence saying what failed."""

    answer_valid: bool
    reasoning_valid: bool
    first_invalid_step: int
    reason: str
    detail: str = ""


def stated_numbers(texts: Iterable[str]) -> frozenset:
    """The exact values (sympy Rationals) the texts state (module docstring)."""
    return frozenset().union(*(_stated_in(text) for text in texts))


@lru_cache(maxsize=65536)
def _stated_in(text: str) -> frozenset:
    text = _THOUSANDS.sub("", text.lower())
    values = {Integer(_TENS[m.group(1)] + _UNITS.index(m.group(2))) for m in _COMPOUND.finditer(text)}
    for digits, percent, word in _STATED.findall(text):
        if digits:
            value = Rational(digits)
            values.add(value)
            if percent:
                values.add(value / 100)
        elif word in NUMBER_WORDS:
            values.update(NUMBER_WORDS[word])
    return frozenset(values)


def _apply(op: str, left, right):
    """left op right in exact arithmetic; None propagates a division by zero."""
    if left is None or right is None or (op == "/" and right == 0):
        return None
    return {"+": operator.add, "-": operator.sub, "*": operator.mul, "/": operator.truediv}[op](left, right)


@lru_cache(maxsize=65536)
def evaluate(expression: str) -> tuple[Rational | None, tuple[Rational, ...]]:
    """The exact value of a calculator expression (None after a division by zero) and its number literals in order.
    Grammar: numbers (``12``, ``2.5``, ``.5``, ``1,000``), binary + - * /, parentheses; ValueError naming anything
    else."""
    text = _THOUSANDS.sub("", expression)
    tokens, position = [], 0
    while position < len(text.rstrip()):
        match = _TOKEN.match(text, position)
        if match is None:
            raise ValueError(f"cannot parse the expression {expression!r}: unexpected {text[position:].strip()[:10]!r}")
        tokens.append(Rational(match.group(1)) if match.group(1) else match.group(2))
        position = match.end()
    operands = tuple(t for t in tokens if not isinstance(t, str))
    cursor = 0

    def fail(why: str):
        return ValueError(f"cannot parse the expression {expression!r}: {why}")

    def factor():
        nonlocal cursor
        if cursor >= len(tokens):
            raise fail("it ends where a number or '(' is expected")
        token = tokens[cursor]
        cursor += 1
        if token == "(":
            value = level(0)
            if cursor >= len(tokens) or tokens[cursor] != ")":
                raise fail("a '(' is not closed")
            cursor += 1
            return value
        if isinstance(token, str):
            raise fail(f"{token!r} where a number or '(' is expected")
        return token

    def level(depth: int):  # depth 0: + and -, depth 1: * and /, depth 2: a number or a parenthesis
        nonlocal cursor
        if depth == len(_PRECEDENCE):
            return factor()
        value = level(depth + 1)
        while cursor < len(tokens) and tokens[cursor] in _PRECEDENCE[depth]:
            op = tokens[cursor]
            cursor += 1
            value = _apply(op, value, level(depth + 1))
        return value

    value = level(0)
    if cursor != len(tokens):
        raise fail(f"unexpected {tokens[cursor]!r}")
    return value, operands


def _invalid(answer_valid: bool, index: int, reason: str, detail: str) -> CheckResult:
    return CheckResult(answer_valid, False, index, reason, detail)


def check_solution(
    sentences: Sequence[str], question: str, steps: Sequence[Step], answer: int, gt_answer: int
) -> CheckResult:
    """Replay `steps` against the shown problem text (module docstring); ValueError for no steps or an expression
    that does not parse."""
    if not steps:
        raise ValueError("a solution needs at least one step")
    answer_valid = answer == gt_answer
    stated = stated_numbers([*sentences, question])
    results = [Integer(step.result) for step in steps]
    final = Integer(answer)
    for index, step in enumerate(steps):
        value, operands = evaluate(step.expression)
        earlier = set(results[:index])
        for operand in operands:
            if operand in stated or operand in earlier:
                continue
            if operand == final:
                return _invalid(answer_valid, index, "circular", f"step {index} uses the final answer {operand}")
            if operand in results[index + 1 :]:
                later = results.index(operand, index + 1)
                detail = f"step {index} uses {operand}, the result of the later step {later}"
                return _invalid(answer_valid, index, "use_before_definition", detail)
            detail = f"step {index} uses {operand}, neither stated nor derived"
            return _invalid(answer_valid, index, "undefined_operand", detail)
        if value != results[index]:
            detail = f"step {index}: {step.expression} is {value}, not {step.result}"
            return _invalid(answer_valid, index, "arithmetic", detail)
    if final != results[-1]:
        detail = f"the answer {answer} is not the last step's result {steps[-1].result}"
        return _invalid(answer_valid, len(steps), "answer_mismatch", detail)
    return CheckResult(answer_valid, True, -1, "valid")


def check_item(item: Item) -> CheckResult:
    """The checker's verdict on an item's shown problem, steps and answer."""
    return check_solution(item.problem_sentences, item.question, item.steps, item.answer, item.gt_answer)


def verify_item(item: Item) -> CheckResult:
    """The checker's verdict, after checking that the item's labels are it; ValueError naming the item otherwise
    (an item whose answer or reasoning label the checker cannot verify)."""
    result = check_item(item)
    labels = (item.answer_valid, item.reasoning_valid, item.first_invalid_step)
    verdict = (result.answer_valid, result.reasoning_valid, result.first_invalid_step)
    if labels != verdict:
        raise ValueError(
            f"item {item.item_id} ({item.category}, {item.flaw}): labels (answer_valid, reasoning_valid, "
            f"first_invalid_step) = {labels}, the checker says {verdict} ({result.reason}: {result.detail})"
        )
    return result
