"""An external text backend on MATH-500 items: final answers read from a boxed answer or an ANSWER line and matched
to the record's LaTeX answer, every gold solution graded as a flawless (VAVR) one, in the harness's results table."""

from __future__ import annotations

import math

from neurips26.vair.backends import Reply, TextBackend
from neurips26.vair.grading import RESULT_COLUMNS, accuracy_table
from neurips26.vair.math500 import MathItem
from neurips26.vair.math_grading import math_answer, math_results


class Scripted(TextBackend):
    """Replies given in advance, one per text, in order."""

    name = "scripted"

    def __init__(self, solves: list[Reply], grades: list[Reply]):
        self.solves, self.grades, self.seen = solves, grades, []

    def solve_texts(self, problems):
        self.seen.append(problems)
        return self.solves

    def grade_texts(self, problems, solutions):
        self.seen.append(solutions)
        return self.grades


ITEMS = [
    MathItem(
        "test/a.json/none/0", "test/a.json", "What is $1/4+1/4$?", "Half: $\\boxed{\\frac12}$.", "\\frac{1}{2}", "A", 1
    ),
    MathItem("test/b.json/none/0", "test/b.json", "What is $6 \\cdot 7$?", "$\\boxed{42}$", "42", "A", 1),
    MathItem("test/c.json/none/0", "test/c.json", "Name the vertex.", "It is $\\boxed{(1,2)}$.", "(1,2)", "B", 3),
]


def test_the_final_answer_is_the_last_boxed_else_the_last_answer_line():
    assert math_answer("First \\boxed{3}, then \\boxed{\\dfrac{1}{2}}") == "\\dfrac{1}{2}"
    assert math_answer("<think>\\boxed{9}</think>\nSo ANSWER: 42\nANSWER: 41") == "41"  # thoughts dropped
    assert math_answer("I cannot tell.") is None and math_answer(None) is None


def test_solves_are_matched_to_latex_answers_and_every_gold_solution_is_a_vavr_item():
    solves = [Reply("\\boxed{0.5}", 0.5), Reply("ANSWER: 41", 41), Reply("", None, "http 500 after 4 tries")]
    grades = [Reply("GRADE: 3", 3), Reply("GRADE: 1", 1), Reply("no verdict", None)]
    backend = Scripted(solves, grades)
    table = math_results(backend, ITEMS)
    assert list(table.columns) == list(RESULT_COLUMNS)
    solve, grade = table[table["task"] == "solve"], table[table["task"] == "grade"]
    assert solve["correct"].tolist() == [True, False, False]  # 0.5 equals 1/2; 41 is not 42; a failed request
    assert solve["parsed_ok"].tolist() == [True, True, False] and solve["parsed"].iloc[0] == 0.5
    assert solve["error"].tolist() == ["", "", "http 500 after 4 tries"] and set(solve["category"]) == {"problem"}
    assert grade["correct"].tolist() == [True, False, False] and set(grade["category"]) == {"VAVR"}
    assert math.isnan(grade["parsed"].iloc[2]) and grade["item_id"].tolist() == [i.item_id for i in ITEMS]
    assert backend.seen[1][1] == "$\\boxed{42}$\nFinal answer: 42"  # the solution as graded: with its final answer
    rates = accuracy_table(table).set_index(["task", "category"])["accuracy"]
    assert rates["grade", "VAVR"] == rates["solve", "problem"] == 1 / 3
