"""The four VAIR flaws and the IAIR slip on hand-made problems: each keeps (or, for the slip, changes) the answer,
the checker flags exactly the step it breaks, and a transformation that changes the answer or passes unflagged is
refused."""

from __future__ import annotations

import re

import numpy as np
import pytest

from neurips26.vair.checker import check_item, evaluate
from neurips26.vair.flaws import (
    ALL_FLAWS,
    FLAW_TRANSFORMS,
    SLIP_DELTAS,
    circular,
    make_item,
    missing_premise,
    missing_step,
    shuffled,
)
from neurips26.vair.items import FLAWS, Problem, SolvedProblem, Step


def _solved(sentences, question, steps, problem_id="p", source="gsm8k"):
    steps = tuple(Step(e, r, f"So {e} = {r} apples.") for e, r in steps)
    return SolvedProblem(Problem(problem_id, sentences, question, (), steps[-1].result, source), steps)


CHAIN = _solved(
    ("Ava has 12 apples.", "Ava buys 7 more apples.", "Ava multiplies the apples by 3.", "Ava gives away 8 apples."),
    "How many apples does Ava have now?",
    [("12 + 7", 19), ("19 * 3", 57), ("57 - 8", 49)],
)
TWO_PEOPLE = _solved(
    ("Ava has 40 pens.", "Ava buys 25 more pens.", "Ben has 9 pens.", "Ben multiplies the pens by 3."),
    "How many more pens does Ava have than Ben?",
    [("40 + 25", 65), ("9 * 3", 27), ("65 - 27", 38)],
)


def _outcomes(solved, transform, seeds=range(12)):
    """The distinct results of `transform` over several seeds."""
    return {transform(solved.problem, solved.steps, np.random.default_rng(seed)) for seed in seeds}


def _verdict(solved, flaw, seed=0):
    item = make_item(solved, flaw, np.random.default_rng(seed), item_id=f"{flaw}-{seed}", split="eval")
    result = check_item(item)
    return item, (item.category, item.answer, result.first_invalid_step, result.reason)


def test_the_registry_holds_the_papers_four_flaws_and_the_slip():
    assert tuple(FLAW_TRANSFORMS) == FLAWS and set(ALL_FLAWS) == {*FLAWS, "arithmetic_slip"}


def test_missing_premise_drops_one_used_premise_and_keeps_the_solution():
    outcomes = _outcomes(CHAIN, missing_premise)
    assert {len(sentences) for sentences, _ in outcomes} == {3}
    assert {steps for _, steps in outcomes} == {CHAIN.steps}
    dropped = {next(s for s in CHAIN.problem.sentences if s not in shown) for shown, _ in outcomes}
    assert dropped == set(CHAIN.problem.sentences)  # every sentence states a used number
    item, verdict = _verdict(CHAIN, "missing_premise", seed=3)
    index = CHAIN.problem.sentences.index(next(s for s in CHAIN.problem.sentences if s not in item.problem_sentences))
    assert verdict == ("VAIR", 49, max(index - 1, 0), "undefined_operand")  # sentence i states step max(i-1, 0)'s


def test_missing_premise_needs_a_number_stated_nowhere_else():
    steps = [(s.expression, s.result) for s in CHAIN.steps]
    restated = _solved(CHAIN.problem.sentences, "With 12, 7, 3 and 8 as above, how many are left?", steps)
    assert _outcomes(restated, missing_premise) == {None}


def test_missing_step_deletes_a_used_step_but_never_the_final_one():
    outcomes = _outcomes(CHAIN, missing_step)
    assert {steps for _, steps in outcomes} == {CHAIN.steps[1:], CHAIN.steps[:1] + CHAIN.steps[2:]}
    item, verdict = _verdict(CHAIN, "missing_step")
    assert verdict[:2] == ("VAIR", 49) and verdict[3] == "undefined_operand"
    assert item.steps[verdict[2]] == CHAIN.steps[verdict[2] + 1]  # the step that used the deleted result


def test_shuffled_moves_a_step_after_its_first_user_keeping_the_final_step_last():
    assert _outcomes(CHAIN, shuffled) == {(CHAIN.problem.sentences, (CHAIN.steps[1], CHAIN.steps[0], CHAIN.steps[2]))}
    assert _verdict(CHAIN, "shuffled")[1] == ("VAIR", 49, 0, "use_before_definition")
    two_steps = _solved(CHAIN.problem.sentences[:3], "How many?", [("12 + 7", 19), ("19 * 3", 57)])
    assert _outcomes(two_steps, shuffled) == {None}  # the only user of step 0 is the final step


def test_circular_derives_the_final_steps_input_from_the_answer():
    [(shown, steps)] = _outcomes(CHAIN, circular)
    assert steps[1] == Step("49 + 8", 57, "So 49 + 8 = 57 apples.") and steps[::2] == CHAIN.steps[::2]
    assert "answer" not in steps[1].text.lower()  # the replaced step's own wording: no phrase marks the flaw
    assert _verdict(CHAIN, "circular")[1] == ("VAIR", 49, 1, "circular")
    [(_, steps)] = _outcomes(TWO_PEOPLE, circular)  # 27 comes from the answer: 65 - 38
    assert steps[1].expression == "65 - 38" and evaluate("65 - 38")[0] == 27
    assert _verdict(TWO_PEOPLE, "circular")[1] == ("VAIR", 38, 1, "circular")


def test_circular_needs_a_binary_final_step_and_an_answer_not_stated():
    gsm8k_style = _solved(("Janet's ducks lay 16 eggs.", "She eats 3 and bakes 4."), "How many?", [("16-3-4", 9)])
    assert _outcomes(gsm8k_style, circular) == {None}
    stated = _solved(CHAIN.problem.sentences, "Is it 49?", [(s.expression, s.result) for s in CHAIN.steps])
    assert _outcomes(stated, circular) == {None}
    sentences = ("Ava has 12 pens.", "She splits them into 2 piles.", "She buys 3 more.")
    derived_before = _solved(sentences, "How many?", [("12 / 2", 6), ("6 + 3", 9), ("9 - 3", 6)])
    assert _outcomes(derived_before, circular) == {None}  # 9 - 3 = 6: the answer 6 is known before 6 + 3


def test_arithmetic_slip_is_carried_to_a_wrong_answer():
    for seed in range(12):
        item, (category, answer, first, reason) = _verdict(CHAIN, "arithmetic_slip", seed)
        assert category == "IAIR" and reason == "arithmetic" and answer != 49 and not item.answer_valid
        assert item.steps[:first] == CHAIN.steps[:first]
        slip = item.steps[first].result - CHAIN.steps[first].result
        assert abs(slip) in SLIP_DELTAS and item.steps[first].text == f"So {item.steps[first].annotation} apples."
        for step in item.steps[first + 1 :]:  # every later step is right given the slipped value
            assert evaluate(step.expression)[0] == step.result


@pytest.mark.parametrize(
    ("flaw", "transform", "message"),
    [
        ("missing_step", lambda p, s, r: (p.sentences, s[:-1]), "changes the answer: 49 -> 57"),
        ("shuffled", lambda p, s, r: (p.sentences, s), "the checker cannot verify .* valid \\(valid"),
        ("arithmetic_slip", lambda p, s, r: (p.sentences, s), "leaves the answer 49 right"),
    ],
)
def test_a_flaw_that_changes_the_answer_or_escapes_the_checker_is_refused(monkeypatch, flaw, transform, message):
    monkeypatch.setitem(ALL_FLAWS, flaw, transform)
    with pytest.raises(ValueError, match=f"{flaw} on problem p:? {message}"):
        make_item(CHAIN, flaw, np.random.default_rng(0), item_id="x", split="train")


def test_a_gold_solution_the_checker_rejects_and_an_unknown_flaw_are_refused():
    unstated = _solved(CHAIN.problem.sentences, "How many?", [("12 + 7", 19), ("19 * 4", 76)])
    with pytest.raises(ValueError, match="none on problem p: the checker cannot verify .*undefined_operand"):
        make_item(unstated, "none", np.random.default_rng(0), item_id="x", split="train")
    with pytest.raises(ValueError, match="unknown flaw 'typo'"):
        make_item(CHAIN, "typo", np.random.default_rng(0), item_id="x", split="train")


# a generated problem: Ava's chain, and the distractor Kim with a count and two operations, the first one computed
DISTRACTED = _solved(
    ("Ava has 12 apples.", "Kim has 5 apples.", "Ava buys 7 more apples.", "Kim buys 4 more apples.",
     "Ava multiplies the apples by 3.", "Kim multiplies the apples by 2."),
    "How many apples does Ava have now?",
    [("12 + 7", 19), ("5 + 4", 9), ("19 * 3", 57)],
    source="synthetic",
)  # fmt: skip


def test_missing_premise_on_a_generated_problem_puts_a_distractor_in_its_place():
    for seed in range(12):
        item, verdict = _verdict(DISTRACTED, "missing_premise", seed)
        shown, original = item.problem_sentences, DISTRACTED.problem.sentences
        changed = [i for i, (a, b) in enumerate(zip(shown, original, strict=True)) if a != b]
        assert len(shown) == len(original) and len(changed) == 1 and item.steps == DISTRACTED.steps
        new, old = shown[changed[0]], original[changed[0]]
        assert new.split()[0] not in ("Ava", old.split()[0])  # another person than the question's
        assert re.sub(r"\d+", "N", new).split()[1:] == re.sub(r"\d+", "N", old).split()[1:]  # the same template
        number = int(re.search(r"\d+", new).group())
        assert number not in (19, 9, 57, int(re.search(r"\d+", old).group()))  # no step's result, not the dropped
        assert verdict[:2] == ("VAIR", 57) and verdict[3] == "undefined_operand"


def test_missing_step_on_a_generated_problem_computes_the_next_distractor_operation_instead():
    outcomes = _outcomes(DISTRACTED, missing_step)
    assert len(outcomes) == 1  # only Ava's first step is used later
    ((sentences, steps),) = outcomes
    assert sentences == DISTRACTED.problem.sentences and len(steps) == len(DISTRACTED.steps)
    assert [s.annotation for s in steps] == ["5 + 4 = 9", "9 * 2 = 18", "19 * 3 = 57"]
    assert steps[1].text == "Kim then has 9 * 2 = 18 apples."
    item, verdict = _verdict(DISTRACTED, "missing_step")
    assert verdict == ("VAIR", 57, 2, "undefined_operand")
