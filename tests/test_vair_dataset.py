"""The VAIR synthetic problem generator and the dataset built from it: certified answers, distinct quantities,
every premise used, labels equal to the checker's verdicts, splits by problem, counts beside the paper's."""

from __future__ import annotations

import re
from fractions import Fraction

import numpy as np
import pytest

from neurips26.vair.checker import verify_item
from neurips26.vair.dataset import PAPER_COUNTS, applicability, build_items, counts
from neurips26.vair.flaws import FLAW_TRANSFORMS
from neurips26.vair.items import FLAWS, check_splits
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


def _relevant(solved):
    """The sentences about the people the question names, and the steps that are not a distractor's."""
    asked = set(re.findall(r"\w+", solved.problem.question))
    sentences = [s for s in solved.problem.sentences if s.split()[0] in asked]
    steps = [s for s in solved.steps if s.text.split()[0] in asked or s is solved.steps[-1]]
    return sentences, steps


def test_quantities_are_distinct_bounded_and_every_premise_is_used_once(problems):
    lengths, extra = set(), []
    for solved in problems:
        sentences, steps = _relevant(solved)
        numbers = [int(re.search(r"\d+", s).group()) for s in sentences]
        results = [step.result for step in solved.steps]
        values = [*numbers, *results]
        assert len(set(values)) == len(values), solved  # distractor numbers may repeat a premise, never a result
        assert all(2 <= v < 1000 for v in values) and all(n <= 99 for n in numbers), solved
        operands = [int(x) for step in steps for x in step.expression.split()[::2]]
        assert sorted(o for o in operands if o in numbers) == sorted(numbers), solved
        assert len(numbers) == len(steps) + 1 and len(solved.problem.numbers) == len(solved.problem.sentences)
        lengths.add(len(steps))
        extra.append((len(solved.problem.sentences) - len(sentences), len(solved.steps) - len(steps)))
    assert lengths == {2, 3, 4, 5}
    # distractors: a person with a count and 1-2 operations (2-4 sentences with a lone count), of which the
    # solution computes a proper prefix; never none, so every problem has an operation the solution does not compute
    assert {e for e, _ in extra} == {2, 3, 4} and {c for _, c in extra} == {0, 1}
    assert all(c <= e - 2 for e, c in extra)


def test_without_distractors_the_problem_states_exactly_its_premises():
    for solved in generate_problems(50, seed=2, distractor_ops=0):
        assert len(solved.problem.sentences) == len(solved.steps) + 1 == len(solved.problem.numbers)
    with pytest.raises(ValueError, match="distractor_ops"):
        generate_problems(1, seed=0, distractor_ops=-1)


def test_step_bounds_and_value_bound_are_honoured():
    for solved in generate_problems(100, seed=1, min_steps=3, max_steps=3, bound=200, max_premise=30):
        sentences, steps = _relevant(solved)
        assert len(steps) == 3 and all(s.result < 200 for s in solved.steps)
        assert max(int(re.search(r"\d+", s).group()) for s in sentences) <= 30
    with pytest.raises(ValueError, match="min_steps"):
        generate_problems(1, seed=0, min_steps=4, max_steps=3)
    with pytest.raises(ValueError, match="bound"):
        generate_problems(1, seed=0, bound=50, max_premise=99)


def test_sympy_certifies_integer_trees_and_refuses_fractions():
    assert certify(("-", ("*", 12, 3), 5)) == 31
    assert certify(("/", ("+", 10, 11), 7)) == 3
    assert certify(("/", 7, 2)) is None


@pytest.fixture(scope="module")
def items(problems):
    return build_items(problems[:80], np.random.default_rng(3), eval_fraction=0.25)


def test_every_item_carries_the_checkers_verdict(items):
    for item in items:
        verify_item(item)
    assert {(i.category, i.answer_valid, i.reasoning_valid) for i in items} == {
        ("VAVR", True, True),
        ("VAIR", True, False),
        ("IAIR", False, False),
    }


def test_each_problem_has_its_gold_a_slip_and_one_item_per_applicable_flaw(problems, items):
    by_problem = {}
    for item in items:
        by_problem.setdefault(item.problem_id, []).append(item.flaw)
    assert len(by_problem) == 80
    for solved in problems[:80]:
        made = by_problem[solved.problem.problem_id]
        applicable = [f for f in FLAWS if FLAW_TRANSFORMS[f](solved.problem, solved.steps, np.random.default_rng(0))]
        assert sorted(made) == sorted(["none", "arithmetic_slip", *applicable])


def test_splits_are_by_problem_and_sized_by_the_eval_fraction(items):
    check_splits(items)
    eval_problems = {i.problem_id for i in items if i.split == "eval"}
    assert len(eval_problems) == 20
    assert build_items(generate_problems(80, seed=7), np.random.default_rng(3), eval_fraction=0.25) == items
    with pytest.raises(ValueError, match="eval_fraction"):
        build_items([], np.random.default_rng(0), eval_fraction=1.5)


def test_several_distinct_items_per_flaw_where_the_problem_allows(problems):
    chain = next(p for p in problems if [len(part) for part in _relevant(p)] == [6, 5])
    items = build_items([chain], np.random.default_rng(0), per_flaw={"missing_premise": 3, "shuffled": 0})
    premise = [i for i in items if i.flaw == "missing_premise"]
    assert len(premise) == 3 and len({i.problem_sentences for i in premise}) == 3
    assert len({i.item_id for i in items}) == len(items) and not any(i.flaw == "shuffled" for i in items)
    assert sum(i.flaw == "missing_step" for i in items) == 1 == sum(i.flaw == "circular" for i in items)
    with pytest.raises(ValueError, match="per-flaw counts"):
        build_items([chain], np.random.default_rng(0), per_flaw={"typo": 1})


def test_counts_sit_beside_the_papers(items):
    table = counts(items).set_index(["category", "flaw"])
    assert table.loc[("VAVR", "none"), "total"] == 80 == table.loc[("IAIR", "arithmetic_slip"), "total"]
    assert table.loc[("VAVR", "none"), "eval"] == 20
    assert table["total"].sum() == len(items)
    assert table.loc["VAIR", "paper"].to_dict() == {
        "missing_premise": 258,
        "missing_step": 228,
        "shuffled": 259,
        "circular": 256,
    }
    assert sum(PAPER_COUNTS[("VAIR", f)] for f in FLAWS) == 1001


def test_applicability_rates_are_shares_of_problems(problems):
    rates = applicability(problems[:80], np.random.default_rng(0)).set_index("flaw")
    assert rates.loc["missing_premise", "rate"] == rates.loc["missing_step", "rate"] == 1.0
    two_step_chains = sum(len(p.steps) == 2 for p in problems[:80])
    assert rates.loc["shuffled", "applicable"] <= 80 - two_step_chains
