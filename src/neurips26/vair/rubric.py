"""The two tasks of "An Enigma of Artificial Reason" (Sun, Yeo, Solar-Lezama, Zhi-Xuan 2026, arXiv 2606.01462).

- Production: solve the unperturbed problem; scored on the final answer alone.
- Evaluation: grade a given solution 0-3 with a holistic rubric (3 = fully correct reasoning and answer). A grade
  is correct when it is 3 for a flawless solution (VAVR: valid answer, valid reasoning) and below 3 for a flawed
  one (VAIR: valid answer, invalid reasoning; IAIR: invalid answer). An unparseable grade (None) is never correct.

The paper publishes the rubric's top level (3 = fully correct) and the correctness rule, not the wording of the
lower grades: the descriptions of 2, 1 and 0 in config/vair/prompts.yaml are our reconstruction in the paper's
spirit. Since correctness only asks "3 or below 3", the split among 0-2 never changes an accuracy here.
"""

from __future__ import annotations

from collections.abc import Mapping

GRADES = (0, 1, 2, 3)
FULL_GRADE = 3  # fully correct reasoning and answer
FLAWLESS = "VAVR"
FLAWED = ("VAIR", "IAIR")
CATEGORIES = (FLAWLESS, *FLAWED)


def grade_is_correct(grade: int | None, category: str) -> bool:
    """Whether `grade` is the right verdict on a solution of `category` (3 for VAVR, below 3 for VAIR and IAIR);
    an unparseable grade (None) counts as wrong."""
    if category not in CATEGORIES:
        raise ValueError(f"category must be one of {list(CATEGORIES)}, got {category!r}")
    if grade is None:
        return False
    if grade not in GRADES:
        raise ValueError(f"a grade is one of {list(GRADES)} or None, got {grade!r}")
    return (grade == FULL_GRADE) == (category == FLAWLESS)


def answer_is_correct(answer: float | None, truth: int) -> bool:
    """The production task's score: the stated final answer equals the ground truth (None counts as wrong)."""
    return answer is not None and answer == truth


def check_rubric(rubric: Mapping) -> dict[int, str]:
    """The rubric as {grade: description} when it describes exactly the grades 0-3, each with non-empty text;
    ValueError naming what is missing or extra otherwise."""
    keys = {int(k) if isinstance(k, int | str) and str(k).isdigit() else k for k in rubric}
    if keys != set(GRADES):
        raise ValueError(f"the rubric must describe exactly the grades {list(GRADES)}, got {sorted(map(str, keys))}")
    out = {int(k): v for k, v in rubric.items()}
    for grade, text in out.items():
        if not isinstance(text, str) or not text.strip():
            raise ValueError(f"rubric grade {grade} has no description")
    return {grade: out[grade].strip() for grade in sorted(out, reverse=True)}
