"""The paper's four answer-preserving flaws (VAIR: missing premise, missing reasoning step, shuffled reasoning,
circular reasoning; arXiv 2606.01462) and the arithmetic slip that makes a wrong-answer (IAIR) solution, as
transformations of a gold calculator-step solution.

Each transformation is ``f(problem, steps, rng) -> (shown sentences, steps)`` or None when the problem offers no
place for it; the solution's stated answer is its last step's result.
- missing_premise: drop the sentence that states a number a step uses (the solution is unchanged); on a generated
  problem a distractor sentence of the same template (another person, a number used nowhere) takes its place, so
  the problem keeps its number of sentences (:func:`.problems.replacement_sentence`);
- missing_step: delete a step whose result a later step uses (the final step is kept, so is the answer); on a
  generated problem the distractor operation the solution has not computed yet takes its place, so the solution
  keeps its number of steps and operators (:func:`.problems.next_distractor_step`);
- shuffled: move a step to just after the first step that uses its result (a use before definition; the final
  step stays last);
- circular: the paper's circular reasoning, a solution that presupposes its conclusion: the step deriving one
  input of the final step is replaced by its derivation from the final answer (final ``A = x + y`` and step
  ``... = x`` become ``A - y = x``), so the answer is used to justify the quantity it is then computed from; the
  step keeps the wording of the step it replaces (only its annotation changes), so no phrase marks a circular item
  (an earlier "Since the answer is A" text appeared in circular items only: a surface cue, not a reasoning flaw);
- arithmetic_slip (IAIR): one step's result off by 1-3, the error carried through every later step to the answer.
The paper's circular items were written by an LLM with an adversarial prompt and all its items checked by hand;
here :func:`make_item` certifies every item with the step checker instead: a VAIR item keeps the ground-truth
answer and fails the reasoning check, an IAIR item has a wrong answer, else ValueError.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence

import numpy as np

from neurips26.vair.checker import check_solution, evaluate, stated_numbers
from neurips26.vair.items import FLAWS, IAIR_FLAW, Item, Problem, SolvedProblem, Step
from neurips26.vair.problems import next_distractor_step, replacement_sentence

__all__ = [
    "ALL_FLAWS",
    "FLAW_TRANSFORMS",
    "SLIP_DELTAS",
    "arithmetic_slip",
    "circular",
    "make_item",
    "missing_premise",
    "missing_step",
    "shuffled",
]

Transform = Callable[[Problem, tuple[Step, ...], np.random.Generator], tuple | None]
SLIP_DELTAS = (1, 2, 3)  # the size of an arithmetic slip, with either sign
_INVERSE = {  # final step `x op y = A`: (x from A and y, y from A and x)
    "+": ("{A} - {y}", "{A} - {x}"),
    "-": ("{A} + {y}", "{x} - {A}"),
    "*": ("{A} / {y}", "{A} / {x}"),
    "/": ("{A} * {y}", "{x} / {A}"),
}
_NUMBER = re.compile(r"\d+(?:[.,]\d+)*|\.\d+")


def _operands(step: Step) -> tuple:
    return evaluate(step.expression)[1]


def _restep(step: Step, expression: str, result: int, text: str | None = None) -> Step:
    """`step` with a new expression and result, its text's annotation rewritten (or the given text)."""
    annotation = f"{expression} = {result}"
    return Step(expression, result, text if text is not None else step.text.replace(step.annotation, annotation))


def _pick(candidates: Sequence, rng: np.random.Generator):
    return candidates[int(rng.integers(len(candidates)))] if candidates else None


def _needed(steps: tuple[Step, ...]) -> set[int]:
    """The steps the final answer depends on: the final step and, recursively, the steps deriving its operands (a
    distractor's steps are not among them)."""
    needed, todo = set(), [len(steps) - 1]
    while todo:
        k = todo.pop()
        needed.add(k)
        operands = set(_operands(steps[k]))
        todo += [j for j in range(k) if j not in needed and steps[j].result in operands]
    return needed


def missing_premise(problem: Problem, steps: tuple[Step, ...], rng: np.random.Generator):
    """Drop a sentence stating a number that a step uses and that nothing else shown states or derives earlier; a
    generated problem gets a distractor sentence in its place (module docstring)."""
    per_sentence = [stated_numbers([s]) for s in problem.sentences]
    results = [step.result for step in steps]
    needed = _needed(steps)
    candidates = []
    for index, numbers in enumerate(per_sentence):
        elsewhere = stated_numbers([problem.question]).union(*(n for i, n in enumerate(per_sentence) if i != index))
        for k, step in ((k, steps[k]) for k in sorted(needed)):
            if any(v in numbers and v not in elsewhere and v not in results[:k] for v in _operands(step)):
                candidates.append(index)
                break
    index = _pick(candidates, rng)
    if index is None:
        return None
    kept = problem.sentences[:index] + problem.sentences[index + 1 :]
    if problem.source == "synthetic":
        replacement = replacement_sentence(problem, steps, index, lambda n: int(rng.integers(n)))
        kept = kept if replacement is None else kept[:index] + (replacement,) + kept[index:]
    return kept, steps


def _first_user(steps: tuple[Step, ...], k: int, stated: frozenset) -> int | None:
    """The first step after k that uses step k's result, when that result is neither stated nor derived by
    another step before that use (so that the use depends on step k alone)."""
    value = steps[k].result
    if value in stated:
        return None
    for j in range(k + 1, len(steps)):
        if value in _operands(steps[j]):
            others = [s.result for i, s in enumerate(steps[:j]) if i != k]
            return None if value in others else j
    return None


def missing_step(problem: Problem, steps: tuple[Step, ...], rng: np.random.Generator):
    """Delete a step (never the final one) whose result a later step uses; on a generated problem the next distractor
    step takes its place, or the first place after that distractor's last computed step (module docstring)."""
    stated = stated_numbers([*problem.sentences, problem.question])
    needed = _needed(steps)
    candidates = [k for k in range(len(steps) - 1) if k in needed and _first_user(steps, k, stated) is not None]
    k = _pick(candidates, rng)
    if k is None:
        return None
    kept = steps[:k] + steps[k + 1 :]
    extra = next_distractor_step(problem, kept, frozenset({steps[k].result})) if problem.source == "synthetic" else None
    if extra is not None:
        at = max(k, extra[1] + 1)
        kept = kept[:at] + (extra[0],) + kept[at:]
    return problem.sentences, kept


def shuffled(problem: Problem, steps: tuple[Step, ...], rng: np.random.Generator):
    """Move a step to just after the first step that uses its result (that user is not the final step)."""
    stated = stated_numbers([*problem.sentences, problem.question])
    pairs = [(k, _first_user(steps, k, stated)) for k in sorted(_needed(steps) - {len(steps) - 1})]
    pair = _pick([(k, j) for k, j in pairs if j is not None and j < len(steps) - 1], rng)
    if pair is None:
        return None
    k, j = pair
    order = [*range(k), *range(k + 1, j + 1), k, *range(j + 1, len(steps))]
    return problem.sentences, tuple(steps[i] for i in order)


def circular(problem: Problem, steps: tuple[Step, ...], rng: np.random.Generator):
    """Derive an input of the final step from the final answer (module docstring); the final step must be one
    binary operation ``x op y``, the replaced step the only one giving its value, the other operand known before
    it and the answer neither stated nor derived before it."""
    parts = steps[-1].expression.split()
    parts = parts if len(parts) == 3 else re.split(r"\s*([-+*/])\s*", steps[-1].expression.strip())
    if len(parts) != 3 or parts[1] not in _INVERSE:
        return None
    x, op, y = parts
    answer = steps[-1].result
    stated = stated_numbers([*problem.sentences, problem.question])
    if answer in stated:
        return None
    results = [step.result for step in steps]
    candidates = []
    for side, (mine, other) in enumerate(((x, y), (x, y)[::-1])):
        value, known = evaluate(mine)[0], evaluate(other)[0]
        producers = [k for k in range(len(steps) - 1) if results[k] == value]
        if len(producers) != 1 or value in stated:
            continue
        k = producers[0]
        if answer not in results[:k] and (known in stated or known in results[:k]):
            expression = _INVERSE[op][side].format(A=answer, x=x, y=y)
            if evaluate(expression)[0] == value:
                candidates.append((k, expression))
    chosen = _pick(candidates, rng)
    if chosen is None:
        return None
    k, expression = chosen
    return problem.sentences, steps[:k] + (_restep(steps[k], expression, steps[k].result),) + steps[k + 1 :]


def _substitute(expression: str, changed: dict[int, int]) -> str:
    """`expression` with every integer literal that is a key of `changed` replaced by its value."""

    def swap(match: re.Match) -> str:
        number = match.group().replace(",", "")
        return str(changed[int(number)]) if number.isdigit() and int(number) in changed else match.group()

    return _NUMBER.sub(swap, expression)


def arithmetic_slip(problem: Problem, steps: tuple[Step, ...], rng: np.random.Generator):
    """Put one step's result off by 1-3 and recompute every later step with the wrong value (a later result must
    stay a non-negative integer, and the final answer must change)."""
    tries = [(k, sign * d) for k in range(len(steps)) for d in SLIP_DELTAS for sign in (1, -1)]
    for index in rng.permutation(len(tries)):
        k, delta = tries[int(index)]
        slipped = steps[k].result + delta
        if slipped < 0:
            continue
        changed = {steps[k].result: slipped}
        new = [*steps[:k], _restep(steps[k], steps[k].expression, slipped)]
        for step in steps[k + 1 :]:
            expression = _substitute(step.expression, changed)
            if expression == step.expression:
                new.append(step)
                continue
            value = evaluate(expression)[0]
            if value is None or not value.is_Integer or value < 0:
                break
            changed[step.result] = int(value)
            new.append(_restep(step, expression, int(value)))
        else:
            if new[-1].result != steps[-1].result:
                return problem.sentences, tuple(new)
    return None


FLAW_TRANSFORMS: dict[str, Transform] = dict(
    zip(FLAWS, (missing_premise, missing_step, shuffled, circular), strict=True)
)
ALL_FLAWS: dict[str, Transform] = {**FLAW_TRANSFORMS, IAIR_FLAW: arithmetic_slip}


def make_item(solved: SolvedProblem, flaw: str, rng: np.random.Generator, *, item_id: str, split: str) -> Item | None:
    """The item of `flaw` ("none" for the gold solution) on `solved`, labelled with the checker's verdict; None when
    the flaw has no place in this problem. ValueError when the gold solution is not valid, a VAIR flaw changes the
    answer or passes the checker, or a slip leaves the answer right."""
    problem = solved.problem
    if flaw == "none":
        category, shown = "VAVR", (problem.sentences, solved.steps)
    elif flaw in ALL_FLAWS:
        category = "IAIR" if flaw == IAIR_FLAW else "VAIR"
        shown = ALL_FLAWS[flaw](problem, solved.steps, rng)
        if shown is None:
            return None
    else:
        raise ValueError(f"unknown flaw {flaw!r}; known: none, {', '.join(ALL_FLAWS)}")
    sentences, steps = shown
    answer = steps[-1].result
    name = f"{flaw} on problem {problem.problem_id}"
    if category != "IAIR" and answer != problem.answer:
        raise ValueError(f"{name} changes the answer: {problem.answer} -> {answer}")
    if category == "IAIR" and answer == problem.answer:
        raise ValueError(f"{name} leaves the answer {answer} right")
    verdict = check_solution(sentences, problem.question, steps, answer, problem.answer)
    if verdict.reasoning_valid != (category == "VAVR"):
        raise ValueError(
            f"{name}: the checker cannot verify the item: it finds the reasoning "
            f"{'valid' if verdict.reasoning_valid else 'invalid'} ({verdict.reason}: {verdict.detail})"
        )
    return Item(
        item_id=item_id,
        problem_id=problem.problem_id,
        category=category,
        flaw=flaw,
        problem_sentences=tuple(sentences),
        question=problem.question,
        steps=tuple(steps),
        answer=answer,
        gt_answer=problem.answer,
        answer_valid=verdict.answer_valid,
        reasoning_valid=verdict.reasoning_valid,
        first_invalid_step=verdict.first_invalid_step,
        split=split,
    )
