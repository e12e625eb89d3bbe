"""Seeded GSM8K-like arithmetic word problems with symbolic ground truth, the synthetic stand-in for the math word
problems of the VAIR dataset (arXiv 2606.01462 perturbs gold solutions of GSM8K, Cobbe et al. 2021, and MATH).

A problem follows one or two people's counts of an object: a person has some objects, then each sentence applies
one operation with one stated number (buys more: +, gives away: -, multiplies: *, splits into equal piles: exact /);
with two people the question asks for their total or their difference. The gold solution has one calculator step
per operation (2-5 steps), in the order of the sentences. Every value (stated or computed) is an integer in
[2, bound) and all of them are pairwise distinct, so that a number names exactly one quantity (the step checker,
:mod:`.checker`, relies on it). The answer is sympy's exact evaluation of the problem's expression tree; a tree sympy
does not evaluate to the stepwise integer is resampled.

Distractors (true but irrelevant premises, as GSM8K problems state them): a person the question does not ask about
has a count and applies 1 to `distractor_ops` operations to it, in the same sentence templates, and with probability
`lone_rate` a further person only has a count; their sentences are interleaved with the problem's (each person's in
order). The gold solution computes a random prefix of the distractor's operations (never all of them: one stays for
:func:`next_distractor_step`), interleaved with the problem's steps before the final one. Without them the grader,
who sees one item at a time, could tell a flaw from the counts alone: a problem with one sentence more than its
solution has steps is complete, a solution with fewer steps than the problem has operations misses one. The
distractors vary both counts, and the flaw transformations (:mod:`.flaws`) replace what they remove with a
distractor sentence or step (:func:`replacement_sentence`, :func:`next_distractor_step`), so that the counts of a
flawed item are those of a valid one.
"""

from __future__ import annotations

import operator
import random
import re
from dataclasses import dataclass
from functools import cache

from sympy import Integer, Rational

from neurips26.vair.items import Problem, SolvedProblem, Step

__all__ = [
    "NAMES",
    "OBJECTS",
    "certify",
    "generate_problems",
    "next_distractor_step",
    "parse_sentence",
    "replacement_sentence",
    "sympy_value",
]

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
    blocked: frozenset = frozenset()  # values a result may not take besides `used` (a distractor's: the premises)

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
            if result is None or result in self.used or result in self.blocked or result == p:
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


def _interleave(rng: random.Random, first: list, second: list) -> list:
    """A uniformly random merge of two lists that keeps the order within each."""
    slots = set(rng.sample(range(len(first) + len(second)), len(second)))
    one, two = iter(first), iter(second)
    return [next(two) if i in slots else next(one) for i in range(len(first) + len(second))]


def _distractors(draft: _Draft, names: list[str], max_ops: int, lone_rate: float, avoid: set[int]):
    """Distractor sentences (with their numbers) and the distractor steps the solution computes: a person with a
    count and 1..max_ops operations (the solution computes a random proper prefix of them) and, with probability
    `lone_rate`, a person with a count only. Their values are distinct among themselves and from `avoid` (the
    problem's computed values); a distractor's stated number may repeat a premise of the problem (its results may
    not), so that they are drawn from the premises' range (a premise also stated by a distractor cannot be dropped
    as missing: :func:`.flaws.missing_premise`); numbers beyond `max_premise` only where the range holds no free
    value. None when no values are left."""
    rng = draft.rng
    for limit in (draft.max_premise, draft.bound - 1):
        side = _Draft(rng, draft.bound, limit, draft.obj, [], [], [], set(avoid), frozenset(draft.numbers))
        ops = rng.randint(1, max_ops)
        if side.chain(names[0], ops) is None:
            continue
        chain = list(zip(side.sentences, side.numbers, strict=True))
        steps = side.steps[: rng.randint(0, ops - 1)]
        if rng.random() < lone_rate:
            before = len(side.sentences)
            lone = side.fresh(SMALLEST, limit)
            if lone is None:
                continue
            side.state(START, names[1], lone)
            chain = _interleave(rng, chain, [(side.sentences[before], lone)])
        return chain, steps
    return None


def _draft_problem(
    rng: random.Random, n_steps: int, bound: int, max_premise: int, combine_rate: float, max_ops: int, lone_rate: float
):
    """One attempt at a problem with `n_steps` steps and its distractors: (sentences, question, numbers, steps,
    sympy tree) or None."""
    first, second, *others = rng.sample(NAMES, 4)
    draft = _Draft(rng, bound, max_premise, rng.choice(OBJECTS), [], [], [], set())
    if rng.random() >= combine_rate:
        chained = draft.chain(first, n_steps)
        if chained is None:
            return None
        question = QUESTION_ONE.format(X=first, obj=draft.obj)
        steps, tree = draft.steps, chained[1]
    else:
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
        draft.used.add(result)
        question, text = COMBINE[op]
        step = Step(f"{a} {op} {b}", result, text.format(X=first, Y=second, a=a, b=b, r=result, obj=draft.obj))
        question = question.format(X=first, Y=second, obj=draft.obj)
        steps, tree = [*draft.steps, step], (op, tree_a, tree_b)
    stated = list(zip(draft.sentences, draft.numbers, strict=True))
    if max_ops > 0:
        extra = _distractors(draft, others, max_ops, lone_rate, {step.result for step in steps})
        if extra is None:
            return None
        stated = _interleave(rng, stated, extra[0])
        steps = [*_interleave(rng, steps[:-1], extra[1]), steps[-1]]
    return [s for s, _ in stated], question, [n for _, n in stated], steps, tree


def generate_problems(
    n: int,
    seed: int,
    *,
    min_steps: int = 2,
    max_steps: int = 5,
    bound: int = 1000,
    max_premise: int = 99,
    combine_rate: float = 0.4,
    distractor_ops: int = 2,
    lone_rate: float = 0.5,
) -> list[SolvedProblem]:
    """`n` distinct problems with their gold solutions, drawn from `seed` (module docstring): a uniform number of
    steps in [min_steps, max_steps], stated numbers in [2, max_premise], every value below `bound`, a two-person
    problem with probability `combine_rate`, and distractors (a person with 1..`distractor_ops` operations, a lone
    count with probability `lone_rate`; `distractor_ops` 0: none). Each answer is certified by sympy's evaluation of
    the expression tree."""
    if not 1 <= min_steps <= max_steps:
        raise ValueError(f"need 1 <= min_steps <= max_steps, got {min_steps}, {max_steps}")
    if max_premise < 3 * SMALLEST or bound <= max_premise:
        raise ValueError(f"need max_premise >= {3 * SMALLEST} and bound > max_premise, got {max_premise}, {bound}")
    if distractor_ops < 0 or not 0.0 <= lone_rate <= 1.0:
        raise ValueError(f"need distractor_ops >= 0 and lone_rate in [0, 1], got {distractor_ops}, {lone_rate}")
    rng = random.Random(seed)
    solved, seen = [], set()
    attempts = 0
    while len(solved) < n:
        attempts += 1
        if attempts > 50 * n + 1000:
            raise ValueError(f"could not draw {n} problems with bound {bound} and max_premise {max_premise}")
        n_steps = rng.randint(min_steps, max_steps)
        draft = _draft_problem(rng, n_steps, bound, max_premise, combine_rate, distractor_ops, lone_rate)
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


def _pattern(template: str) -> re.Pattern:
    fields = {"X": r"(?P<X>[A-Z][a-z]+)", "p": r"(?P<p>\d+)", "obj": r"(?P<obj>[a-z]+)"}
    parts = re.split(r"\{(X|p|obj)\}", template)
    return re.compile("".join(fields[part] if i % 2 else re.escape(part) for i, part in enumerate(parts)) + "$")


# sentence kind ("start" or an operation) -> its template and the pattern that reads it back
_SENTENCES = {"start": START, **{op: sentence for op, (sentence, _) in OPERATIONS.items()}}
_READERS = {kind: _pattern(template) for kind, template in _SENTENCES.items()}


def parse_sentence(sentence: str) -> tuple[str, str, int, str] | None:
    """(kind, name, number, object) of a sentence the generator writes (kind "start" or an operation), else None."""
    for kind, reader in _READERS.items():
        match = reader.match(sentence)
        if match:
            return kind, match["X"], int(match["p"]), match["obj"]
    return None


def _derived(problem: Problem, steps: tuple[Step, ...]) -> set[int]:
    return {*(step.result for step in steps), problem.answer}


def replacement_sentence(problem: Problem, steps: tuple[Step, ...], index: int, draw) -> str | None:
    """The distractor that takes the place of sentence `index` when a missing premise removes it: the same template
    about a person the question does not name (for an operation: a distractor who has a count, if any), stating a
    number that is not the removed one and that no step derives (drawn by `draw(n) -> int in [0, n)`, from [2, the
    largest stated number]: the premises' range, as the generator's distractors). None when the sentence is not one
    the generator writes."""
    parsed = parse_sentence(problem.sentences[index])
    if parsed is None:
        return None
    kind, _, removed, obj = parsed
    readings = [parse_sentence(s) for s in problem.sentences]
    named = {r[1] for r in readings if r} | set(re.findall(r"[A-Z][a-z]+", problem.question))
    counted = sorted({r[1] for r in readings if r and r[0] == "start"} - set(re.findall(r"\w+", problem.question)))
    fresh = [name for name in NAMES if name not in named]
    people = counted if kind != "start" and counted else fresh
    taken = _derived(problem, steps) | {removed}
    top = max(problem.numbers, default=SMALLEST)
    free = [v for v in range(SMALLEST, top + 1) if v not in taken]
    free = free or [v for v in range(top + 1, top + 2 + len(taken)) if v not in taken]
    if not people:
        return None
    return _SENTENCES[kind].format(X=people[draw(len(people))], p=free[draw(len(free))], obj=obj)


def next_distractor_step(
    problem: Problem, steps: tuple[Step, ...], exclude: frozenset = frozenset()
) -> tuple[Step, int] | None:
    """The first operation of a distractor (a person the question does not name) that `steps` do not compute, as a
    valid step, with the index of the last step of that person's chain in `steps` (-1 when none): the step a missing
    step puts in place of the one it deletes; its result is no step's result, not the answer and not in `exclude`
    (the deleted step's result). None when there is no such operation, or for a problem the generator did not
    write."""
    asked = set(re.findall(r"\w+", problem.question))
    chains: dict[str, list] = {}
    for sentence in problem.sentences:
        parsed = parse_sentence(sentence)
        if parsed is None:
            return None
        kind, name, number, obj = parsed
        if name not in asked and (kind == "start") == (name not in chains):
            chains.setdefault(name, []).append((kind, number, obj))
    taken = _derived(problem, steps) | set(exclude)
    for name, chain in chains.items():
        value, last = chain[0][1], -1
        for op, number, obj in chain[1:]:
            result = _SYMPY_OPERATIONS[op](Integer(value), Integer(number))
            if not result.is_Integer or int(result) < SMALLEST:
                break
            expression = f"{value} {op} {number}"
            done = [i for i, step in enumerate(steps) if step.expression == expression and step.result == result]
            if done:
                value, last = int(result), done[0]
                continue
            if int(result) in taken:
                break
            text = OPERATIONS[op][1].format(X=name, a=value, p=number, r=int(result), obj=obj)
            return Step(expression, int(result), text), last
    return None
