"""The VAIR item format: label consistency, the rendered texts, the table round trip and the split checks."""

from __future__ import annotations

import dataclasses

import pytest

from neurips26.vair.items import (
    FLAWS,
    Item,
    Problem,
    SolvedProblem,
    Step,
    check_splits,
    items_from_frame,
    items_to_frame,
    render,
    render_natural,
    render_problem,
    words,
)

SENTENCES = ("Ava has 12 apples.", "Ava buys 7 more apples.", "Ava ends up with 3 times as many apples.")
QUESTION = "How many apples does Ava have now?"
STEPS = (
    Step("12 + 7", 19, "Ava has 12 + 7 = 19 apples."),
    Step("19 * 3", 57, "Ava has 19 * 3 = 57 apples."),
)


VAVR = Item("p1-none-0", "p1", "VAVR", "none", SENTENCES, QUESTION, STEPS, 57, 57, True, True, -1, "train")


def _item(**changes) -> Item:
    return dataclasses.replace(VAVR, **changes)


def _slip(**changes) -> Item:
    """An IAIR item: 12 + 7 slipped to 20, carried to the answer 60."""
    steps = (Step("12 + 7", 20, "12 + 7 = 20"), Step("20 * 3", 60, "So 20 * 3 = 60."))
    slip = dict(category="IAIR", flaw="arithmetic_slip", steps=steps, answer=60, answer_valid=False)
    return _item(**{**slip, "reasoning_valid": False, "first_invalid_step": 0, **changes})


def test_flaws_are_the_papers_four_in_its_order():
    assert FLAWS == ("missing_premise", "missing_step", "shuffled", "circular")


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        (dict(flaw="shuffled"), "flaw"),
        (dict(category="VAIR"), "flaw"),
        (dict(category="IAIR", flaw="circular"), "flaw"),
        (dict(answer=58), "answer_valid"),
        (dict(first_invalid_step=1), "first_invalid_step"),
        (dict(category="VAIR", flaw="circular"), r"\(answer_valid, reasoning_valid\)"),
        (dict(category="VAIR", flaw="shuffled", reasoning_valid=False, first_invalid_step=3), "outside"),
        (dict(category="IAIR", flaw="arithmetic_slip", reasoning_valid=False, first_invalid_step=0), "answer_valid"),
        (dict(split="test"), "split"),
        (dict(steps=()), "steps"),
    ],
)
def test_inconsistent_labels_are_refused(changes, message):
    with pytest.raises(ValueError, match=message):
        _item(**changes)


def test_consistent_flawed_items_are_accepted():
    _item(category="VAIR", flaw="missing_step", reasoning_valid=False, first_invalid_step=1)
    _slip()


def test_a_step_text_must_contain_its_annotation_and_its_result_be_an_int():
    with pytest.raises(ValueError, match="annotation"):
        Step("12 + 7", 19, "Ava has 19 apples.")
    with pytest.raises(ValueError, match="int"):
        Step("12 / 8", 1.5, "12 / 8 = 1.5")
    with pytest.raises(ValueError, match="last step"):
        SolvedProblem(Problem("p", SENTENCES, QUESTION, (12, 7, 3), 58, "synthetic"), STEPS)


def test_render_puts_every_number_and_operator_in_a_word_of_its_own():
    text = render(_item())
    assert text.split("\n") == [
        "ava has 12 apples . ava buys 7 more apples . ava ends up with 3 times as many apples . "
        "how many apples does ava have now ?",
        "SOLUTION",
        "12 + 7 = 19",
        "19 * 3 = 57",
        "ANSWER 57",
    ]
    assert words("It costs $1,250.50 or .5 of (48/2).") == [
        "it",
        "costs",
        "$",
        "1250.50",
        "or",
        "0.5",
        "of",
        "(",
        "48",
        "/",
        "2",
        ")",
        ".",
    ]


def test_render_begins_with_what_the_solver_sees_and_a_dropped_premise_is_not_shown():
    problem = Problem("p1", SENTENCES, QUESTION, (12, 7, 3), 57, "synthetic")
    assert render(_item()).startswith(render_problem(problem) + "\nSOLUTION\n")
    shown = _item(
        problem_sentences=SENTENCES[1:],
        category="VAIR",
        flaw="missing_premise",
        reasoning_valid=False,
        first_invalid_step=0,
    )
    assert "12 apples" not in render(shown).split("\n")[0] and "12 + 7 = 19" in render(shown)


def test_render_natural_shows_problem_step_texts_and_answer():
    text = render_natural(_item())
    assert text.startswith("Problem: Ava has 12 apples. Ava buys 7 more apples.")
    assert "Solution:\nAva has 12 + 7 = 19 apples.\nAva has 19 * 3 = 57 apples.\nFinal answer: 57" in text


def test_items_survive_the_table_round_trip():
    items = [
        _item(),
        _slip(item_id="p1-slip", split="eval", problem_id="p2"),
    ]
    frame = items_to_frame(items)
    assert frame["answer"].dtype == "int64" and frame["reasoning_valid"].dtype == bool
    assert items_from_frame(frame) == items
    with pytest.raises(ValueError, match="columns"):
        items_from_frame(frame.drop(columns=["steps"]))


def test_check_splits_names_leaked_problems_and_duplicate_ids():
    train = _item()
    check_splits([train, _item(item_id="p2-none-0", problem_id="p2", split="eval")])
    with pytest.raises(ValueError, match=r"problem_ids in two splits: \['p1'\]"):
        check_splits([train, _item(item_id="other", split="eval")])
    with pytest.raises(ValueError, match=r"item_ids in two splits: \['p1-none-0'\]"):
        check_splits([train, dataclasses.replace(train, problem_id="p3", split="eval")])
    with pytest.raises(ValueError, match=r"duplicate item_ids: \['p1-none-0'\]"):
        check_splits([train, train])
