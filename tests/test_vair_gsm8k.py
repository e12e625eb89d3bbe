"""Reading GSM8K records (hand-written in its format) into replayable problems, skipping and counting the rest;
and MATH-500 records certified by their final answer."""

from __future__ import annotations

import json

import numpy as np
import pytest

from neurips26.vair.checker import check_item
from neurips26.vair.dataset import build_items
from neurips26.vair.gsm8k import read_gsm8k, split_sentences
from neurips26.vair.math500 import answers_match, read_math500, render_math

RECORDS = [
    {  # kept: "twice" states 2
        "question": "Mia picks 24 apples on Monday. On Tuesday she picks twice as many. How many apples does she pick?",
        "answer": "On Tuesday she picks 24 * 2 = <<24*2=48>>48 apples.\n"
        "In total she picks 24 + 48 = <<24+48=72>>72 apples.\n#### 72",
    },
    {  # skipped: 7 (days in a week) is stated nowhere
        "question": "Tom buys 2 pens every day for a week. Each pen costs $3. How much does he spend?",
        "answer": "He buys 7*2=<<7*2=14>>14 pens.\nHe spends 14*3=$<<14*3=42>>42.\n#### 42",
    },
    {  # kept: a percentage, a decimal factor and thousands separators
        "question": "A jacket costs $80 and is sold at 25% off. Sam also pays $1,200 for a laptop. "
        "How much does Sam pay in total?",
        "answer": "The discount is 80*.25=$<<80*.25=20>>20.\nThe jacket costs 80-20=$<<80-20=60>>60.\n"
        "Sam pays 60+1,200=$<<60+1200=1260>>1,260 in total.\n#### 1,260",
    },
    {  # skipped: a step with a non-integer result
        "question": "Ann has 7 cakes. She cuts each in 2 halves. How many halves are there?",
        "answer": "Each cake weighs 7/2=<<7/2=3.5>>3.5.\nThere are 7*2=<<7*2=14>>14 halves.\n#### 14",
    },
    {  # skipped: the last annotation is not the final answer
        "question": "Leo has 9 cards and gets 4 more. How many cards does he have?",
        "answer": "He has 9+4=<<9+4=13>>13 cards.\nSo he has 13 cards in all.\n#### 12",
    },
]
JSONL = "\n".join(json.dumps(record) for record in RECORDS) + "\n\n"


def test_replayable_records_become_problems_and_the_rest_are_counted_by_reason():
    problems, skipped = read_gsm8k(JSONL.splitlines())
    assert [p.problem.problem_id for p in problems] == ["gsm8k-0", "gsm8k-2"]
    assert skipped == {"answer_mismatch": 1, "non_integer_step": 1, "undefined_operand": 1}
    mia, sam = problems
    assert mia.problem.sentences == ("Mia picks 24 apples on Monday.", "On Tuesday she picks twice as many.")
    assert mia.problem.question == "How many apples does she pick?" and mia.problem.answer == 72
    assert [(s.expression, s.result) for s in mia.steps] == [("24*2", 48), ("24+48", 72)]
    assert mia.steps[0].text == "On Tuesday she picks 24*2 = 48 apples."  # the restated "24 * 2 =" is not doubled
    assert sam.problem.answer == 1260 and sam.problem.numbers == (80, 25, 1200)
    assert sam.steps[2].text == "Sam pays 60+1200 = 1260 in total."


def test_gsm8k_problems_take_the_flaws_with_certified_labels():
    problems, _ = read_gsm8k(JSONL.splitlines())
    items = build_items(problems, np.random.default_rng(0), eval_fraction=0.5)
    assert {i.flaw for i in items if i.problem_id == "gsm8k-0"} == {
        "none",
        "missing_premise",
        "missing_step",
        "circular",
        "arithmetic_slip",
    }  # two steps: no step can move after its user without moving the final step
    for item in items:
        result = check_item(item)
        assert (result.answer_valid, result.reasoning_valid) == (item.answer_valid, item.reasoning_valid)


def test_a_line_that_is_not_a_record_is_refused_with_its_index():
    with pytest.raises(ValueError, match="GSM8K line 1 is not a record"):
        read_gsm8k([json.dumps(RECORDS[0]), json.dumps({"question": "only"})])


def test_sentences_split_after_full_stops_but_not_inside_numbers():
    assert split_sentences("It costs $2.50 each. Buy 3! How much?") == ["It costs $2.50 each.", "Buy 3!", "How much?"]


MATH = [
    {"problem": "What is $1+1$?", "solution": "We have $1+1=\\boxed{2}$.", "answer": "2", "subject": "Prealgebra",
     "level": 1, "unique_id": "test/prealgebra/1.json"},
    {"problem": "Simplify $\\frac{2}{4}$.", "solution": "It is $\\boxed{\\dfrac{1}{2}}$.", "answer": "\\frac12",
     "subject": "Algebra", "level": 2, "unique_id": "test/algebra/2.json"},
    {"problem": "Find $x$.", "solution": "So $x = \\boxed{5}$.", "answer": "6", "subject": "Algebra", "level": 3,
     "unique_id": "test/algebra/3.json"},
    {"problem": "No box.", "solution": "The answer is 4.", "answer": "4", "subject": "Algebra", "level": 1,
     "unique_id": "test/algebra/4.json"},
]  # fmt: skip


def test_math500_records_are_certified_by_their_final_answer_only():
    items, skipped = read_math500([json.dumps(r) for r in MATH])
    assert [i.problem_id for i in items] == ["test/prealgebra/1.json", "test/algebra/2.json"]
    assert skipped == {"answer_mismatch": 1, "no_boxed_answer": 1}
    assert all(i.category == "VAVR" and i.answer_valid and i.reasoning_valid is None for i in items)
    assert "Final answer: \\frac12" in render_math(items[1])


@pytest.mark.parametrize(
    ("a", "b", "same"),
    [
        ("\\frac{1}{2}", "\\dfrac12", True),
        ("0.5", "\\frac{1}{2}", True),
        ("1,000", "1000", True),
        ("\\text{(B)}", "B", True),
        ("3\\sqrt{2}", "3\\sqrt2", True),
        ("\\frac{1}{2}", "\\frac{1}{3}", False),
        ("x+1", "1+x", False),  # no algebra: string forms after normalisation
    ],
)
def test_math_answers_match_after_normalisation(a, b, same):
    assert answers_match(a, b) is same
