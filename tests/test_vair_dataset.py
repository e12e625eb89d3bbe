"""The VAIR synthetic problem generator and the dataset built from it: certified answers, distinct quantities,
every premise used, labels equal to the checker's verdicts, splits by problem, counts beside the paper's."""

from __future__ import annotations

import re
from fractions import Fraction

import pytest

from neurips26.vair.problems import certify, generate_problems

OPERATORS = {"+": Fraction.__add__, "-": Fraction.__sub__, "*": Fraction.__mul__, "/": Fraction.__truediv__}


@pytest.fixture(scope="module")
def problems():
    return generate_problems(300, seed=7)


def test_the_generator_is_deterministic_in_its_seed(problems):
    assert generate_problems(300, seed=7) == problems
    assert generate_problems(300, seed=8) != problems
    assert len({p.problem.problem_id for p in problems}) == 300


def test_every_step_is_exact_integer_arithmetic_and_the_answer_its_last_result(problems):
    for solved in problems:
        for step in solved.steps:
            left, op, right = step.expression.split()
            assert OPERATORS[op](Fraction(left), Fraction(right)) == step.result, step
        assert solved.problem.answer == solved.steps[-1].result


def test_quantities_are_distinct_bounded_and_every_premise_is_used_once(problems):
    lengths = set()
    for solved in problems:
        numbers = solved.problem.numbers
        results = [step.result for step in solved.steps]
        values = [*numbers, *results]
        assert len(set(values)) == len(values), solved
        assert all(2 <= v < 1000 for v in values) and all(n <= 99 for n in numbers), solved
        operands = [int(x) for step in solved.steps for x in step.expression.split()[::2]]
        assert sorted(o for o in operands if o in numbers) == sorted(numbers), solved
        for number in numbers:  # each premise is stated in exactly one sentence
            assert sum(bool(re.search(rf"\b{number}\b", s)) for s in solved.problem.sentences) == 1, solved
        assert len(numbers) == len(solved.steps) + 1 == len(solved.problem.sentences)
        lengths.add(len(solved.steps))
    assert lengths == {2, 3, 4, 5}


def test_step_bounds_and_value_bound_are_honoured():
    for solved in generate_problems(100, seed=1, min_steps=3, max_steps=3, bound=200, max_premise=30):
        assert len(solved.steps) == 3
        assert all(s.result < 200 for s in solved.steps) and max(solved.problem.numbers) <= 30
    with pytest.raises(ValueError, match="min_steps"):
        generate_problems(1, seed=0, min_steps=4, max_steps=3)
    with pytest.raises(ValueError, match="bound"):
        generate_problems(1, seed=0, bound=50, max_premise=99)


def test_sympy_certifies_integer_trees_and_refuses_fractions():
    assert certify(("-", ("*", 12, 3), 5)) == 31
    assert certify(("/", ("+", 10, 11), 7)) == 3
    assert certify(("/", 7, 2)) is None
