"""The prompts of the external backends, built from data (config/vair/prompts.yaml) as chat messages.

Grading (the paper's evaluation task, Sun et al. 2026, arXiv 2606.01462): a system message with the instruction
("grade the reasoning, not just the answer"), the 0-3 rubric and the verdict format line; then the six calibration
examples as earlier turns (user: problem and solution; assistant: a short rationale and its ``GRADE: n`` line), then
the solution to grade. Solving (the production task): a system message with the instruction and the answer format
line, then the problem.
"""

from __future__ import annotations

import string
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

import yaml

from neurips26.vair.rubric import GRADES, check_rubric
from neurips26.vair.verdicts import ANSWER_KEYWORD, GRADE_KEYWORD, format_grade

Message = dict[str, str]  # {"role": "system" | "user" | "assistant", "content": text}


@dataclass(frozen=True)
class CalibrationExample:
    problem: str
    solution: str
    rationale: str
    grade: int


@dataclass(frozen=True)
class PromptSpec:
    """Everything the prompts say; `grading_template` has the fields {problem} and {solution}, `solving_template`
    the field {problem}."""

    rubric: dict[int, str]
    grading_instruction: str
    grading_format: str
    grading_template: str
    examples: tuple[CalibrationExample, ...]
    solving_instruction: str
    solving_format: str
    solving_template: str


def _get(data: Mapping, key: str, where: str):
    if not isinstance(data, Mapping):
        raise ValueError(f"prompt spec: {where or 'the top level'} must be a mapping, got {type(data).__name__}")
    if key not in data:
        raise ValueError(f"prompt spec: missing key {where + '.' if where else ''}{key}")
    return data[key]


def _text(data: Mapping, key: str, where: str) -> str:
    value = _get(data, key, where)
    if not isinstance(value, str) or not value.strip():
        raise ValueError(f"prompt spec: {where}.{key} must be non-empty text, got {value!r}")
    return value.strip()


def _template(data: Mapping, key: str, where: str, fields: set[str]) -> str:
    value = _text(data, key, where)
    used = {name for _, name, _, _ in string.Formatter().parse(value) if name is not None}
    if used != fields:
        raise ValueError(f"prompt spec: {where}.{key} must use exactly the fields {sorted(fields)}, got {sorted(used)}")
    return value


def _format_line(data: Mapping, where: str, keyword: str) -> str:
    value = _text(data, "format", where)
    if f"{keyword}:" not in value:
        raise ValueError(f"prompt spec: {where}.format must ask for the verdict keyword '{keyword}:', got {value!r}")
    return value


def _example(data: Mapping, where: str) -> CalibrationExample:
    grade = _get(data, "grade", where)
    if isinstance(grade, bool) or grade not in GRADES:
        raise ValueError(f"prompt spec: {where}.grade must be one of {list(GRADES)}, got {grade!r}")
    return CalibrationExample(
        problem=_text(data, "problem", where),
        solution=_text(data, "solution", where),
        rationale=_text(data, "rationale", where),
        grade=grade,
    )


def prompt_spec_from_dict(data: Mapping) -> PromptSpec:
    """A validated PromptSpec from the YAML's mapping; ValueError naming the first missing or bad key."""
    grading, solving = _get(data, "grading", ""), _get(data, "solving", "")
    examples = _get(grading, "examples", "grading")
    if not isinstance(examples, list) or not examples:
        raise ValueError("prompt spec: grading.examples must be a non-empty list")
    return PromptSpec(
        rubric=check_rubric(_get(data, "rubric", "")),
        grading_instruction=_text(grading, "instruction", "grading"),
        grading_format=_format_line(grading, "grading", GRADE_KEYWORD),
        grading_template=_template(grading, "template", "grading", {"problem", "solution"}),
        examples=tuple(_example(e, f"grading.examples[{i}]") for i, e in enumerate(examples)),
        solving_instruction=_text(solving, "instruction", "solving"),
        solving_format=_format_line(solving, "solving", ANSWER_KEYWORD),
        solving_template=_template(solving, "template", "solving", {"problem"}),
    )


def load_prompt_spec(path: str | Path) -> PromptSpec:
    """The prompt spec in the YAML file `path` (config/vair/prompts.yaml), validated."""
    with open(path) as handle:
        data = yaml.safe_load(handle)
    try:
        return prompt_spec_from_dict(data)
    except ValueError as error:
        raise ValueError(f"{path}: {error}") from None


def grading_system_message(spec: PromptSpec) -> str:
    rubric = "\n".join(f"{grade}: {text}" for grade, text in spec.rubric.items())
    return f"{spec.grading_instruction}\n\nRubric:\n{rubric}\n\n{spec.grading_format}"


def build_grading_prompt(spec: PromptSpec, problem_text: str, solution_text: str) -> list[Message]:
    """The chat messages that ask a model to grade `solution_text` as a solution of `problem_text` (0-3)."""
    messages = [{"role": "system", "content": grading_system_message(spec)}]
    for example in spec.examples:
        messages.append(
            {
                "role": "user",
                "content": spec.grading_template.format(problem=example.problem, solution=example.solution),
            }
        )
        messages.append({"role": "assistant", "content": f"{example.rationale}\n{format_grade(example.grade)}"})
    messages.append(
        {"role": "user", "content": spec.grading_template.format(problem=problem_text, solution=solution_text)}
    )
    return messages


def build_solving_prompt(spec: PromptSpec, problem_text: str) -> list[Message]:
    """The chat messages that ask a model to solve `problem_text` and state its final answer."""
    return [
        {"role": "system", "content": f"{spec.solving_instruction}\n\n{spec.solving_format}"},
        {"role": "user", "content": spec.solving_template.format(problem=problem_text)},
    ]
