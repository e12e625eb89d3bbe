"""The grading harness: the results table, accuracy with Wilson intervals, the production-evaluation gap, the
unparseable-verdict rule, and the paper's numbers."""

from __future__ import annotations

import math

import pytest

from neurips26.common.claims import rate_difference, wilson
from neurips26.vair.backends import AnswerOnlyBackend, RandomBackend, Reply, RuleBackend, TextBackend
from neurips26.vair.grading import (
    ACCURACY_COLUMNS,
    GAP_COLUMNS,
    RESULT_COLUMNS,
    UnparseableVerdicts,
    accuracy_table,
    check_results_unparseable,
    check_unparseable,
    gap_table,
    grade_tasks,
    paper_numbers,
    results_frame,
    run_backend,
    solve_tasks,
    unparseable_table,
)
from test_vair_backends import make_items


@pytest.fixture(scope="module")
def items():
    first, second = make_items("p1", 3, 12, 10), make_items("p2", 4, 15, 7)
    return [*first.values(), *second.values()]


def test_rule_backend_is_right_on_every_row(items):
    results = run_backend(RuleBackend(), items)
    assert list(results.columns) == list(RESULT_COLUMNS)
    solved = results[results["task"] == "solve"]
    assert list(solved["item_id"]) == ["p1", "p2"] and set(solved["category"]) == {"problem"}
    assert list(solved["parsed"]) == [26.0, 53.0]
    assert (results["task"] == "grade").sum() == len(items)
    assert results["correct"].all() and results["parsed_ok"].all() and (results["error"] == "").all()


def test_answer_only_is_fooled_by_every_vair_item(items):
    results = run_backend(AnswerOnlyBackend(), items)
    accuracy = accuracy_table(results).set_index(["task", "category", "flaw"])
    assert list(accuracy.columns) == list(ACCURACY_COLUMNS[:1] + ACCURACY_COLUMNS[4:])
    assert accuracy.loc[("grade", "VAVR", "none"), "accuracy"] == 1.0
    assert accuracy.loc[("grade", "IAIR", "arithmetic_slip"), "accuracy"] == 1.0
    assert accuracy.loc[("grade", "VAIR", "shuffled"), "accuracy"] == 0.0
    pooled = accuracy.loc[("grade", "VAIR", "all")]
    assert pooled["n"] == 4 and pooled["correct"] == 0  # two flaws x two problems, pooled
    assert (pooled["low"], pooled["high"]) == pytest.approx(wilson(0, 4))
    assert accuracy.loc[("solve", "problem", "none"), "accuracy"] == 1.0

    gap = gap_table(results).set_index("flaw")
    assert list(gap.columns) == list(GAP_COLUMNS[:1] + GAP_COLUMNS[2:])
    assert set(gap.index) == {"missing_premise", "shuffled", "all"}
    row = gap.loc["shuffled"]
    assert (row["n_problems"], row["n_items"], row["solve_accuracy"], row["grade_accuracy"]) == (2, 2, 1.0, 0.0)
    expected = rate_difference(2, 2, 0, 2)
    assert (row["gap"], row["low"], row["high"]) == pytest.approx((1.0, expected.low, expected.high))
    assert "Newcombe" in row["interval"]


def test_the_gap_uses_only_the_problems_behind_the_flaws_items(items):
    class SolvesOnlyP1(AnswerOnlyBackend):
        def solve(self, tasks):
            return [Reply("", t.item.gt_answer if t.problem_id == "p1" else -1) for t in tasks]

    one_problem = [i for i in items if not (i.problem_id == "p2" and i.flaw == "shuffled")]
    gap = gap_table(run_backend(SolvesOnlyP1(), one_problem)).set_index("flaw")
    assert gap.loc["shuffled", "n_problems"] == 1 and gap.loc["shuffled", "solve_accuracy"] == 1.0
    assert gap.loc["missing_premise", "n_problems"] == 2 and gap.loc["missing_premise", "solve_accuracy"] == 0.5


def test_a_backend_that_does_not_solve_has_grade_rows_and_no_gap(items):
    results = run_backend(RandomBackend(seed=0), items)
    assert set(results["task"]) == {"grade"}
    assert gap_table(results).empty and list(gap_table(results).columns) == list(GAP_COLUMNS)


class Flaky(TextBackend):
    """A text backend whose every other grade reply is unreadable; `external` as given."""

    def __init__(self, name: str, external: bool):
        self.name, self.external = name, external

    def grade_texts(self, problems, solutions):
        return [
            Reply("GRADE: 3", 3) if k % 2 else Reply("hmm", None, "empty content" if k == 0 else "")
            for k in range(len(problems))
        ]

    def solve_texts(self, problems):
        return [Reply("ANSWER: 26", 26) for _ in problems]


def test_unparseable_replies_are_wrong_and_counted(items):
    results = run_backend(Flaky("flaky", external=True), items)
    graded = results[results["task"] == "grade"]
    bad = graded[~graded["parsed_ok"]]
    assert len(bad) == 4 and not bad["correct"].any() and bad["parsed"].isna().all()
    table = unparseable_table(results).set_index(["backend", "task"])
    assert table.loc[("flaky", "grade"), "unparseable"] == 4 and table.loc[("flaky", "grade"), "rate"] == 0.5
    assert table.loc[("flaky", "grade"), "errors"] == 1 and table.loc[("flaky", "solve"), "rate"] == 0.0
    with pytest.raises(UnparseableVerdicts, match=r"'flaky': 4 of 8 verdicts unparseable \(50.0%\)"):
        check_results_unparseable(results, {"flaky": True})
    local = run_backend(Flaky("local", external=False), items)
    assert check_results_unparseable(local, {"local": False})["rate"].max() == 0.5  # reported, not raised


def test_check_unparseable_fails_an_external_backend_above_the_limit_only():
    check_unparseable(0.2, "m")  # at the limit: accepted
    check_unparseable(0.9, "local", external=False)
    with pytest.raises(UnparseableVerdicts, match="21 of 100 verdicts"):
        check_unparseable(0.21, "m", count=21, total=100)
    with pytest.raises(UnparseableVerdicts, match="above the 10%"):
        check_unparseable(0.15, "m", limit=0.1)
    with pytest.raises(ValueError, match="in \\[0, 1\\]"):
        check_unparseable(1.5, "m")


def test_a_backend_with_too_few_replies_is_refused(items):
    class Short(AnswerOnlyBackend):
        def grade(self, tasks):
            return super().grade(tasks)[:-1]

    with pytest.raises(ValueError, match="gave 7 grade replies for 8 tasks"):
        run_backend(Short(), items)


def test_tasks_show_the_problem_as_shown_and_the_solution_in_words(items):
    by_flaw = {task.item.flaw: task for task in grade_tasks(items[:4])}
    assert "He gives away 10 pencils." in by_flaw["none"].problem
    assert "He gives away" not in by_flaw["missing_premise"].problem  # the dropped premise stays dropped
    assert by_flaw["none"].solution.endswith("He has 36-10 = 26 pencils left.\nFinal answer: 26")
    assert [t.problem_id for t in solve_tasks(items)] == ["p1", "p2"]
    with pytest.raises(ValueError, match="two VAVR items"):
        solve_tasks([items[0], items[0]])


def test_an_empty_results_table_keeps_its_columns():
    frame = results_frame([])
    assert list(frame.columns) == list(RESULT_COLUMNS) and frame.empty
    assert accuracy_table(frame).empty and unparseable_table(frame).empty


def test_the_papers_numbers_are_fractions_with_their_source():
    table = paper_numbers()
    assert len(table) == 11 and table["source"].str.contains("2606.01462").all()
    frontier_vair = table[(table["who"] == "frontier models") & (table["category"] == "VAIR")].iloc[0]
    assert (frontier_vair["low"], frontier_vair["high"], frontier_vair["bound"]) == (0.479, 0.786, "range")
    humans = table[table["who"] == "humans"].set_index("category")["low"]
    assert humans["problem"] - humans["VAIR"] == pytest.approx(0.063)  # the paper's human gap of 6.3 points
    assert ((table["low"] > 0) & (table["low"] < 1)).all()
    assert table["high"].isna().sum() == 3 and not math.isnan(table["high"].iloc[3])
