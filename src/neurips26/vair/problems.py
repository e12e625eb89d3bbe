"""Seeded GSM8K-like arithmetic word problems with symbolic ground truth, the synthetic stand-in for the math word
problems of the VAIR dataset (arXiv 2606.01462 perturbs gold solutions of GSM8K, Cobbe et al. 2021, and MATH).

A problem follows one or two people's counts of an object: a person has some objects, then each sentence applies
one operation with one stated number (buys more: +, gives away: -, multiplies: *, splits into equal piles: exact /);
with two people the question asks for their total or their difference. The gold solution has one calculator step
per operation (2-5 steps), in the order of the sentences. Every stated number is used once, every value (stated or
computed) is an integer in [2, bound) and all of them are pairwise distinct, so that a number names exactly one
quantity (the step checker, :mod:`.checker`, relies on it). The answer is sympy's exact evaluation of the problem's
expression tree; a tree sympy does not evaluate to the stepwise integer is resampled.
"""

from __future__ import annotations

import operator
import random
from dataclasses import dataclass
from functools import cache

from sympy import Integer, Rational

from neurips26.vair.items import Problem, SolvedProblem, Step

__all__ = ["NAMES", "OBJECTS", "certify", "generate_problems", "sympy_value"]

NAMES = ("Ava", "Ben", "Chloe", "Dan", "Ella", "Finn", "Grace", "Hugo", "Ivy", "Jack", "Kim", "Leo", "Mia", "Noah")
OBJECTS = ("apples", "books", "coins", "stickers", "marbles", "pens", "cards", "shells", "stamps", "beads", "cookies")
SMALLEST = 2  # every stated or computed value is at least this: no x * 1, x / 1 or x - x steps

# operation -> (the sentence stating its number, the step's text); {a} the count so far, {p} the stated number
OPERATIONS = {
    "+": ("{X} buys {p} more {obj}.", "{X} then has {a} + {p} = {r} {obj}."),
    "-": ("{X} gives away {p} {obj}.", "{X} has {a} - {p} = {r} {obj} left."),
    "*": ("{X} multiplies the {obj} by {p}.", "{X} then has {a} * {p} = {r} {obj}."),
    "/": ("{X} splits the {obj} into {p} equal piles and keeps one.", "{X} keeps {a} / {p} = {r} {obj}."),
}
START = "{X} has {p} {obj}."
QUESTION_ONE = "How many {obj} does {X} have now?"
COMBINE = {  # the final step of a two-person problem: (question, step text); {X} holds the larger count for -
    "+": ("How many {obj} do {X} and {Y} have together?", "Together they have {a} + {b} = {r} {obj}."),
    "-": ("How many more {obj} does {X} have than {Y}?", "{X} has {a} - {b} = {r} more {obj} than {Y}."),
}


@cache
def _divisors(value: int, largest: int) -> tuple[int, ...]:
    """Divisors d of `value` with SMALLEST <= d <= largest and value / d >= SMALLEST."""
    return tuple(d for d in range(SMALLEST, min(largest, value // SMALLEST) + 1) if value % d == 0)


_SYMPY_OPERATIONS = {"+": operator.add, "-": operator.sub, "*": operator.mul, "/": operator.truediv}


def sympy_value(tree) -> Rational:
    """sympy's exact value (Integer or Rational arithmetic) of a tree of ints and (op, left, right) tuples."""
    if isinstance(tree, int):
        return Integer(tree)
    return _SYMPY_OPERATIONS[tree[0]](sympy_value(tree[1]), sympy_value(tree[2]))


def certify(tree) -> int | None:
    """The problem's answer as sympy evaluates its expression tree: an int, or None when it is not an integer."""
    value = sympy_value(tree)
    return int(value) if value.is_Integer else None


@dataclass
class _Draft:
    """A problem under construction: sentences and premises in order, steps, the values in use; a count's
    expression tree is an int (a stated number) or (op, left tree, right tree)."""

    rng: random.Random
    bound: int
    max_premise: int
    obj: str
    sentences: list
    numbers: list
    steps: list
    used: set

    def fresh(self, low: int, high: int) -> int | None:
        """A uniformly drawn number in [low, high] that is not in use (None after a few failed draws)."""
        high = min(high, self.max_premise)
        if high < low:
            return None
        for _ in range(8):
            value = self.rng.randint(low, high)
            if value not in self.used:
                return value
        return None

    def state(self, template: str, name: str, value: int) -> None:
        self.sentences.append(template.format(X=name, p=value, obj=self.obj))
        self.numbers.append(value)
        self.used.add(value)

    def operate(self, name: str, value: int, tree):
        """Apply one operation with a fresh stated number to `name`'s count; (value, tree) after it, or None."""
        for op in self.rng.sample(tuple(OPERATIONS), len(OPERATIONS)):
            if op == "+":
                p = self.fresh(SMALLEST, self.bound - 1 - value)
                result = None if p is None else value + p
            elif op == "-":
                p = self.fresh(SMALLEST, value - SMALLEST)
                result = None if p is None else value - p
            elif op == "*":
                p = self.fresh(SMALLEST, (self.bound - 1) // value)
                result = None if p is None else value * p
            else:
                choices = [d for d in _divisors(value, self.max_premise) if d not in self.used]
                p = self.rng.choice(choices) if choices else None
                result = None if p is None else value // p
            if result is None or result in self.used or result == p:
                continue
            sentence, text = OPERATIONS[op]
            self.state(sentence, name, p)
            self.used.add(result)
            expression = f"{value} {op} {p}"
            self.steps.append(Step(expression, result, text.format(X=name, a=value, p=p, r=result, obj=self.obj)))
            return result, (op, tree, p)
        return None

    def chain(self, name: str, operations: int):
        """A person's start count and `operations` operations on it: (value, tree), or None."""
        start = self.fresh(SMALLEST, self.max_premise)
        if start is None:
            return None
        self.state(START, name, start)
        value, tree = start, start
        for _ in range(operations):
            applied = self.operate(name, value, tree)
            if applied is None:
                return None
            value, tree = applied
        return value, tree


def _draft_problem(rng: random.Random, n_steps: int, bound: int, max_premise: int, combine_rate: float):
    """One attempt at a problem with `n_steps` steps: (sentences, question, numbers, steps, sympy tree) or None."""
    first, second = rng.sample(NAMES, 2)
    draft = _Draft(rng, bound, max_premise, rng.choice(OBJECTS), [], [], [], set())
    if rng.random() >= combine_rate:
        chained = draft.chain(first, n_steps)
        if chained is None:
            return None
        question = QUESTION_ONE.format(X=first, obj=draft.obj)
        return draft.sentences, question, draft.numbers, draft.steps, chained[1]
    operations_first = rng.randint(0, n_steps - 1)
    one = draft.chain(first, operations_first)
    two = None if one is None else draft.chain(second, n_steps - 1 - operations_first)
    if two is None:
        return None
    (a, tree_a), (b, tree_b) = one, two
    op = rng.choice(("+", "-"))
    if op == "-" and a < b:
        (a, tree_a, first), (b, tree_b, second) = (b, tree_b, second), (a, tree_a, first)
    result = a + b if op == "+" else a - b
    if result >= bound or result < SMALLEST or result in draft.used:
        return None
    question, text = COMBINE[op]
    step = Step(f"{a} {op} {b}", result, text.format(X=first, Y=second, a=a, b=b, r=result, obj=draft.obj))
    question = question.format(X=first, Y=second, obj=draft.obj)
    return draft.sentences, question, draft.numbers, [*draft.steps, step], (op, tree_a, tree_b)


def generate_problems(
    n: int,
    seed: int,
    *,
    min_steps: int = 2,
    max_steps: int = 5,
    bound: int = 1000,
    max_premise: int = 99,
    combine_rate: float = 0.4,
) -> list[SolvedProblem]:
    """`n` distinct problems with their gold solutions, drawn from `seed` (module docstring): a uniform number of
    steps in [min_steps, max_steps], stated numbers in [2, max_premise], every value below `bound`, a two-person
    problem with probability `combine_rate`. Each answer is certified by sympy's evaluation of the expression tree."""
    if not 1 <= min_steps <= max_steps:
        raise ValueError(f"need 1 <= min_steps <= max_steps, got {min_steps}, {max_steps}")
    if max_premise < 3 * SMALLEST or bound <= max_premise:
        raise ValueError(f"need max_premise >= {3 * SMALLEST} and bound > max_premise, got {max_premise}, {bound}")
    rng = random.Random(seed)
    solved, seen = [], set()
    attempts = 0
    while len(solved) < n:
        attempts += 1
        if attempts > 50 * n + 1000:
            raise ValueError(f"could not draw {n} problems with bound {bound} and max_premise {max_premise}")
        draft = _draft_problem(rng, rng.randint(min_steps, max_steps), bound, max_premise, combine_rate)
        if draft is None:
            continue
        sentences, question, numbers, steps, tree = draft
        key = (*sentences, question)
        if key in seen:
            continue
        certified = certify(tree)
        if certified != steps[-1].result:
            continue
        seen.add(key)
        problem_id = f"syn{seed}-{len(solved)}"
        problem = Problem(problem_id, tuple(sentences), question, tuple(numbers), certified, "synthetic")
        solved.append(SolvedProblem(problem, tuple(steps)))
    return solved
