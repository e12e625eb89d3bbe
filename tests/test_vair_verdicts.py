"""Reading grades and final answers from hand-written replies, malformed ones included."""

from __future__ import annotations

import pytest

from neurips26.vair.verdicts import format_answer, format_grade, parse_answer, parse_grade, strip_thoughts

GRADE_REPLIES = [
    # the format line
    ("The steps are fine.\nGRADE: 3", 3),
    ("GRADE: 0", 0),
    ("grade: 2", 2),
    ("**GRADE: 1**", 1),
    ("**Grade:** 2", 2),
    ("Reasoning skips a step.\nGRADE: 1/3", 1),
    ("GRADE: 2\nGRADE: 2", 2),  # repeated, agreeing
    ("Rubric recap: 3 means fully correct.\nGRADE:  0 ", 0),
    # the format line wins over prose that mentions other grades
    ("It is not a grade 3 solution: a premise is missing.\nGRADE: 1", 1),
    # ambiguous or out of range: unparseable
    ("GRADE: 2\nOn reflection:\nGRADE: 3", None),
    ("GRADE: 5", None),
    ("grade: 5", None),
    ("GRADE: 4\nGRADE: 2", None),
    ("GRADE: -1", None),
    ("GRADE: 2.5", None),
    # fallback: a number shortly after the word grade
    ("I would grade this a 2 because the order is off.", 2),
    ("Grade: 1 - the answer is right but a step is missing.", 1),
    ("Grade 3 means flawless; this solution deserves grade 1.", 1),
    ("My grade is 7.", None),
    ("grade of 2.5", None),
    ("The grade is 10 out of 10.", None),
    # fallback: a bare digit
    ("2", 2),
    ("  3\n", 3),
    ("4", None),
    # prose only, empty, nothing
    ("The reasoning is circular, so it is not fully correct.", None),
    ("", None),
    (None, None),
    ("Step 2 computes 3 * 4 = 12 correctly.", None),
    # reasoning models' thoughts are dropped
    ("<think>maybe GRADE: 3? no, a step is missing</think>\nGRADE: 1", 1),
    ("...so it should be grade 3</think>GRADE: 2", 2),
    ("<think>GRADE: 3 seems likely but let me check", None),  # cut off while thinking
]


@pytest.mark.parametrize(("reply", "grade"), GRADE_REPLIES)
def test_parse_grade_reads_the_stated_grade_or_none(reply, grade):
    assert parse_grade(reply) == grade


@pytest.mark.parametrize("grade", [0, 1, 2, 3])
def test_a_formatted_grade_parses_back(grade):
    assert parse_grade(f"Some rationale.\n{format_grade(grade)}") == grade


def test_format_grade_refuses_a_grade_outside_the_rubric():
    with pytest.raises(ValueError, match="one of"):
        format_grade(4)


ANSWER_REPLIES = [
    ("She has 18 eggs left.\nANSWER: 18", 18),
    ("Answer: 1,234", 1234),
    ("**Answer:** $45", 45),
    ("ANSWER: -7", -7),
    ("ANSWER: 12.0", 12),
    ("ANSWER: 12.5", 12.5),
    ("Natalia sold 48 + 24 = 72 clips.\n#### 72", 72),
    ("#### 1,000", 1000),
    ("So the total is \\boxed{36}.", 36),
    ("\\boxed{\\$1,200}", 1200),
    ("\\boxed{18 \\text{ dollars}}", 18),
    ("\\boxed{\\frac{3}{4}}", 0.75),
    ("\\boxed{\\dfrac{8}{2}}", 4),
    # the last marker wins
    ("ANSWER: 10\nWait, I double counted.\nANSWER: 8", 8),
    ("#### 5\n\\boxed{6}", 6),
    ("\\boxed{6}\nANSWER: 7", 7),
    # a marker without a number does not count
    ("ANSWER: 42\nI was asked to end with ANSWER: <n>", 42),
    ("The answer is 42.", None),
    ("ANSWER: forty-two", None),
    ("\\boxed{x+1}", None),
    ("", None),
    (None, None),
    ("<think>ANSWER: 3</think>I could not solve it.", None),
    ("<think>first try gives 9</think>\nANSWER: 10", 10),
]


@pytest.mark.parametrize(("reply", "answer"), ANSWER_REPLIES)
def test_parse_answer_reads_the_last_answer_marker(reply, answer):
    parsed = parse_answer(reply)
    assert parsed == answer
    if isinstance(answer, int):
        assert isinstance(parsed, int)


def test_format_answer_parses_back():
    assert parse_answer(format_answer(2026)) == 2026


def test_strip_thoughts_keeps_only_the_reply_after_the_last_thought():
    assert strip_thoughts("<think>a</think>b<think>c</think>d") == "d"
    assert strip_thoughts("x <think> never closed") == "x "
    assert strip_thoughts("plain") == "plain"
