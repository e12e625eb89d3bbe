"""The two tasks' scoring rules and the prompts built from config/vair/prompts.yaml."""

from __future__ import annotations

import copy
from pathlib import Path

import pytest
import yaml

from neurips26.vair.prompt import build_grading_prompt, build_solving_prompt, load_prompt_spec, prompt_spec_from_dict
from neurips26.vair.rubric import answer_is_correct, check_rubric, grade_is_correct
from neurips26.vair.verdicts import parse_grade

PROMPTS = Path(__file__).resolve().parents[1] / "config/vair/prompts.yaml"


@pytest.mark.parametrize(
    ("grade", "category", "correct"),
    [
        (3, "VAVR", True),
        (2, "VAVR", False),
        (0, "VAVR", False),
        (3, "VAIR", False),
        (2, "VAIR", True),
        (0, "VAIR", True),
        (3, "IAIR", False),
        (1, "IAIR", True),
        (None, "VAVR", False),
        (None, "VAIR", False),
        (None, "IAIR", False),
    ],
)
def test_a_grade_is_correct_when_3_for_flawless_and_below_3_for_flawed(grade, category, correct):
    assert grade_is_correct(grade, category) is correct


def test_grade_is_correct_refuses_unknown_categories_and_grades():
    with pytest.raises(ValueError, match="category"):
        grade_is_correct(3, "valid")
    with pytest.raises(ValueError, match="grade"):
        grade_is_correct(4, "VAIR")


def test_the_production_task_is_scored_on_the_answer_alone():
    assert answer_is_correct(18, 18) and answer_is_correct(18.0, 18)
    assert not answer_is_correct(17, 18) and not answer_is_correct(None, 18) and not answer_is_correct(18.5, 18)


def test_check_rubric_needs_exactly_the_grades_0_to_3():
    assert list(check_rubric({0: "a", 1: "b", 2: "c", 3: "d"})) == [3, 2, 1, 0]
    with pytest.raises(ValueError, match="exactly the grades"):
        check_rubric({1: "b", 2: "c", 3: "d"})
    with pytest.raises(ValueError, match="exactly the grades"):
        check_rubric({0: "a", 1: "b", 2: "c", 3: "d", 4: "e"})
    with pytest.raises(ValueError, match="grade 2 has no description"):
        check_rubric({0: "a", 1: "b", 2: " ", 3: "d"})


@pytest.fixture(scope="module")
def spec():
    return load_prompt_spec(PROMPTS)


def test_the_shipped_prompts_have_six_calibration_examples_covering_3_and_below(spec):
    grades = [example.grade for example in spec.examples]
    assert len(grades) == 6
    assert 3 in grades and min(grades) == 0 and {1, 2} <= set(grades)
    # at least one example with a correct answer but flawed reasoning: its rationale says the answer is correct
    assert any(e.grade < 3 and "is correct" in e.rationale for e in spec.examples)


def test_grading_prompt_is_system_then_six_example_turns_then_the_solution(spec):
    messages = build_grading_prompt(spec, "Tom has 3 apples. How many?", "Tom has 3 apples.\nFinal answer: 3")
    roles = [m["role"] for m in messages]
    assert roles == ["system"] + ["user", "assistant"] * 6 + ["user"]
    system = messages[0]["content"]
    assert "not just the answer" in system and "GRADE:" in system
    assert all(f"{g}: " in system for g in range(4))  # the rubric is in it
    assert "Tom has 3 apples. How many?" in messages[-1]["content"]
    assert "Final answer: 3" in messages[-1]["content"]
    # each calibration answer ends in a verdict the parser reads back as the example's grade
    answers = [m["content"] for m in messages if m["role"] == "assistant"]
    assert [parse_grade(a) for a in answers] == [e.grade for e in spec.examples]


def test_solving_prompt_asks_for_the_answer_line(spec):
    messages = build_solving_prompt(spec, "Tom has 3 apples. How many?")
    assert [m["role"] for m in messages] == ["system", "user"]
    assert "ANSWER:" in messages[0]["content"] and "Tom has 3 apples" in messages[1]["content"]


def _broken(mutate):
    data = yaml.safe_load(PROMPTS.read_text())
    data = copy.deepcopy(data)
    mutate(data)
    return data


@pytest.mark.parametrize(
    ("mutate", "message"),
    [
        (lambda d: d.pop("rubric"), "missing key rubric"),
        (lambda d: d["grading"].pop("examples"), "missing key grading.examples"),
        (lambda d: d["grading"]["examples"][2].pop("grade"), r"missing key grading.examples\[2\].grade"),
        (lambda d: d["grading"]["examples"][4].update(grade=5), r"grading.examples\[4\].grade must be one of"),
        (lambda d: d["solving"].pop("instruction"), "missing key solving.instruction"),
        (lambda d: d["grading"].update(format="End with the grade."), "keyword 'GRADE:'"),
        (lambda d: d["grading"].update(template="Problem: {problem}"), "exactly the fields"),
        (lambda d: d["rubric"].pop(2), "exactly the grades"),
    ],
)
def test_a_bad_prompt_spec_is_refused_naming_the_key(mutate, message):
    with pytest.raises(ValueError, match=message):
        prompt_spec_from_dict(_broken(mutate))


def test_load_prompt_spec_names_the_file(tmp_path):
    path = tmp_path / "prompts.yaml"
    path.write_text(yaml.safe_dump(_broken(lambda d: d.pop("solving"))))
    with pytest.raises(ValueError, match="prompts.yaml: prompt spec: missing key solving"):
        load_prompt_spec(path)
