"""The VAIR step checker on hand-made solutions: one per verdict, GSM8K-style numbers, and refused expressions."""

from __future__ import annotations

import dataclasses

import pytest
from sympy import Rational

from neurips26.vair.checker import check_item, check_solution, evaluate, stated_numbers, verify_item
from neurips26.vair.items import Item, Step

SENTENCES = ("Ava has 12 apples.", "Ava buys 7 more apples.", "Ava multiplies the apples by 3.")
QUESTION = "How many apples does Ava have now?"
GOLD = (Step("12 + 7", 19, "12 + 7 = 19"), Step("19 * 3", 57, "19 * 3 = 57"))


def _check(steps, answer=57, gt=57, sentences=SENTENCES, question=QUESTION):
    result = check_solution(sentences, question, tuple(Step(e, r, f"{e} = {r}") for e, r in steps), answer, gt)
    return result.answer_valid, result.reasoning_valid, result.first_invalid_step, result.reason


def test_the_gold_solution_is_valid():
    assert _check([("12 + 7", 19), ("19 * 3", 57)]) == (True, True, -1, "valid")


@pytest.mark.parametrize(
    ("steps", "answer", "verdict"),
    [
        ([("12 + 7", 20), ("20 * 3", 60)], 60, (False, False, 0, "arithmetic")),  # a slip carried on
        ([("12 + 7", 19), ("19 * 3", 56)], 56, (False, False, 1, "arithmetic")),
        ([("7 * 3", 21), ("21 + 36", 57)], 57, (True, False, 1, "undefined_operand")),  # 36 = 12 * 3 unstated
        ([("19 * 3", 57), ("12 + 7", 19)], 57, (True, False, 0, "use_before_definition")),  # shuffled
        ([("57 / 3", 19), ("19 * 3", 57)], 57, (True, False, 0, "circular")),  # assumes the answer
        ([("12 + 7", 19), ("19 * 3", 57)], 58, (False, False, 2, "answer_mismatch")),
        ([("12 + 7", 19), ("19 / (7 - 7)", 57)], 57, (True, False, 1, "arithmetic")),  # division by zero
        ([("12 + 7", 19), ("19 * 3", 57), ("57 * 7 / 12", 33)], 33, (False, False, 2, "arithmetic")),  # 33.25
    ],
)
def test_each_kind_of_invalid_step_is_named_at_its_index(steps, answer, verdict):
    assert _check(steps, answer=answer) == verdict


def test_the_answer_is_judged_against_the_ground_truth_apart_from_the_reasoning():
    assert _check([("12 + 7", 19), ("19 * 3", 57)], answer=57, gt=58) == (False, True, -1, "valid")


def test_a_premise_not_shown_is_an_undefined_operand():
    assert _check([("12 + 7", 19), ("19 * 3", 57)], sentences=SENTENCES[1:]) == (True, False, 0, "undefined_operand")


def test_gsm8k_style_numbers_decimals_percentages_and_words_are_stated():
    sentences = (
        "Janet's ducks lay sixteen eggs per day.",
        "She eats three and bakes with four.",
        "An egg sells for $2.50, and a box of a dozen gets 20% off.",
    )
    question = "How much does she make from 1,000 eggs?"
    assert _check([("16*2.5", 39)], answer=39, gt=39, sentences=sentences, question=question)[3] == "arithmetic"
    steps = [("16-3-4", 9), ("12*2.50", 30), ("30*.2", 6), ("30-6", 24), ("1,000/4", 250), ("250-24", 226)]
    assert _check(steps, answer=226, gt=226, sentences=sentences, question=question) == (True, True, -1, "valid")
    assert _check([("30*20/100", 6)], answer=6, gt=6, sentences=sentences, question=question)[3] == "undefined_operand"
    assert stated_numbers(["Twenty-five kids, half of them", "a 12.5% tip on $1,200"]) >= {
        25,
        20,
        5,
        2,
        Rational(1, 2),
        Rational(25, 2),
        Rational(1, 8),
        1200,
    }


@pytest.mark.parametrize(
    ("expression", "message"),
    [("2^3", "'\\^3'"), ("3 x 4", "'x 4'"), ("(2+3", "not closed"), ("-3+5", "'-'"), ("2+", "ends"), ("2 3", "3")],
)
def test_expressions_outside_the_grammar_are_refused_with_the_reason(expression, message):
    with pytest.raises(ValueError, match=f"cannot parse the expression .*{message}"):
        evaluate(expression)


def test_evaluation_is_exact_and_keeps_precedence():
    assert evaluate("2 + 3 * (4 - 1) / 9") == (Rational(3), (2, 3, 4, 1, 9))
    assert evaluate("1/3 + 1/6")[0] == Rational(1, 2)


def test_verify_item_refuses_labels_the_checker_does_not_give():
    item = Item("p-0", "p", "VAVR", "none", SENTENCES, QUESTION, GOLD, 57, 57, True, True, -1, "train")
    assert verify_item(item) == check_item(item)
    hidden = dataclasses.replace(item, problem_sentences=SENTENCES[1:])  # still labelled valid
    with pytest.raises(ValueError, match=r"item p-0 \(VAVR, none\).*\(True, False, 0\) \(undefined_operand"):
        verify_item(hidden)
