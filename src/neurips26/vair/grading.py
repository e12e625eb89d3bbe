"""The grading harness: run a backend over items on both tasks of Sun, Yeo, Solar-Lezama and Zhi-Xuan (2026, arXiv
2606.01462) and summarise: accuracy per item type with Wilson intervals, the production-evaluation gap per flaw type,
and the rate of unparseable replies per backend (an external backend above 20% fails the run).

The results table is long, one row per (backend, task, item):
    item_id, problem_id, category, flaw, backend, task, raw, parsed, parsed_ok, correct, error
`task` is "solve" (one row per problem, from its VAVR item: `item_id` is the problem_id, `category` "problem",
`flaw` "none") or "grade" (one row per item). `parsed` is the parsed answer or grade (NaN when unparseable), `correct`
is False for an unparseable reply, `error` a backend failure ("" when none).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

import pandas as pd

from neurips26.common.claims import rate_difference, wilson
from neurips26.vair.backends import TASKS, Backend, GradeTask, Reply, SolveTask
from neurips26.vair.items import Item
from neurips26.vair.rubric import FLAWLESS, answer_is_correct, grade_is_correct

RESULT_COLUMNS = (
    "item_id",
    "problem_id",
    "category",
    "flaw",
    "backend",
    "task",
    "raw",
    "parsed",
    "parsed_ok",
    "correct",
    "error",
)
SOLVE_CATEGORY = "problem"  # the category of solve rows: a problem, not a solution
ALL_FLAWS = "all"  # the flaw of the rows pooling every flaw of a category
UNPARSEABLE_LIMIT = 0.2  # an external backend with more unparseable verdicts than this fails the run
GAP_INTERVAL = (
    "Newcombe (Wilson) interval of a difference of two rates (neurips26.common.claims.rate_difference), treating the"
    " arms as independent; solving and grading share their problems, so with a positive correlation between them"
    " the interval is conservative"
)


def natural_problem(item: Item) -> str:
    """The problem as shown with `item`, in natural language: its sentences and question."""
    return " ".join([*item.problem_sentences, item.question])


def natural_solution(item: Item) -> str:
    """The solution of `item` in natural language: one line per step, then its stated final answer."""
    return "\n".join([*(step.text for step in item.steps), f"Final answer: {item.answer}"])


def solve_tasks(items: Sequence[Item]) -> list[SolveTask]:
    """One solve task per problem that has a flawless (VAVR) item among `items` (its problem is the unperturbed
    one), in order of first appearance; ValueError when a problem has two VAVR items."""
    tasks: dict[str, SolveTask] = {}
    for item in items:
        if item.category != FLAWLESS:
            continue
        if item.problem_id in tasks:
            raise ValueError(
                f"problem {item.problem_id} has two VAVR items: "
                f"{tasks[item.problem_id].item.item_id} and {item.item_id}"
            )
        tasks[item.problem_id] = SolveTask(item.problem_id, natural_problem(item), item)
    return list(tasks.values())


def grade_tasks(items: Sequence[Item]) -> list[GradeTask]:
    """One grade task per item, in order."""
    return [GradeTask(item.item_id, natural_problem(item), natural_solution(item), item) for item in items]


@dataclass(frozen=True)
class TaskKind:
    """How one task runs: the tasks made from the items, each task's (item_id, category, flaw) in the results table,
    and whether a reply's value is correct for the task's item."""

    make: Callable[[Sequence[Item]], list]
    keys: Callable[[SolveTask | GradeTask], tuple[str, str, str]]
    correct: Callable[[int | float | None, Item], bool]


TASK_KINDS = {
    "solve": TaskKind(
        solve_tasks,
        lambda task: (task.problem_id, SOLVE_CATEGORY, "none"),
        lambda value, item: answer_is_correct(value, item.gt_answer),
    ),
    "grade": TaskKind(
        grade_tasks,
        lambda task: (task.item_id, task.item.category, task.item.flaw),
        lambda value, item: grade_is_correct(value, item.category),
    ),
}


def task_rows(backend: Backend, items: Sequence[Item], task: str) -> list[dict]:
    """The results rows of `backend` doing `task` ("solve" or "grade") on `items`."""
    kind = TASK_KINDS[task]
    tasks = kind.make(items)
    replies: list[Reply] = getattr(backend, task)(tasks)
    if len(replies) != len(tasks):
        raise ValueError(f"backend {backend.name!r} gave {len(replies)} {task} replies for {len(tasks)} tasks")
    rows = []
    for each, reply in zip(tasks, replies):
        item_id, category, flaw = kind.keys(each)
        rows.append(
            {
                "item_id": item_id,
                "problem_id": each.item.problem_id,
                "category": category,
                "flaw": flaw,
                "backend": backend.name,
                "task": task,
                "raw": reply.raw,
                "parsed": math.nan if reply.value is None else float(reply.value),
                "parsed_ok": reply.parsed_ok,
                "correct": kind.correct(reply.value, each.item),
                "error": reply.error,
            }
        )
    return rows


def run_backend(backend: Backend, items: Sequence[Item]) -> pd.DataFrame:
    """The results table (RESULT_COLUMNS) of `backend` on every task it does: solving the problems of `items` (those
    with a VAVR item) and grading every item."""
    rows = [row for task in TASKS if task in backend.tasks for row in task_rows(backend, items, task)]
    return results_frame(rows)


def results_frame(rows: Sequence[dict]) -> pd.DataFrame:
    """Rows as the results table, with its column types (an empty table keeps them)."""
    frame = pd.DataFrame(list(rows), columns=list(RESULT_COLUMNS))
    return frame.astype({"parsed": "float64", "parsed_ok": bool, "correct": bool}).astype(
        {c: str for c in RESULT_COLUMNS if c not in ("parsed", "parsed_ok", "correct")}
    )


def _rate_row(keys: dict, correct: int, n: int, level: float) -> dict:
    low, high = wilson(correct, n, level)
    return {**keys, "n": n, "correct": correct, "accuracy": correct / n if n else math.nan, "low": low, "high": high}


ACCURACY_COLUMNS = ("backend", "task", "category", "flaw", "n", "correct", "accuracy", "low", "high")


def accuracy_table(results: pd.DataFrame, level: float = 0.95) -> pd.DataFrame:
    """Accuracy per (backend, task, category, flaw) with its Wilson interval at `level`; a category with several
    flaws (VAIR) also gets a row pooling them (flaw "all")."""
    rows = []
    for (backend, task, category), part in results.groupby(["backend", "task", "category"], sort=True):
        keys = {"backend": backend, "task": task, "category": category}
        for flaw, cell in part.groupby("flaw", sort=True):
            rows.append(_rate_row({**keys, "flaw": flaw}, int(cell["correct"].sum()), len(cell), level))
        if part["flaw"].nunique() > 1:
            rows.append(_rate_row({**keys, "flaw": ALL_FLAWS}, int(part["correct"].sum()), len(part), level))
    return pd.DataFrame(rows, columns=list(ACCURACY_COLUMNS))


GAP_COLUMNS = (
    "backend",
    "flaw",
    "n_problems",
    "solve_accuracy",
    "n_items",
    "grade_accuracy",
    "gap",
    "low",
    "high",
    "interval",
)


def gap_table(results: pd.DataFrame, category: str = "VAIR", level: float = 0.95) -> pd.DataFrame:
    """The production-evaluation gap per backend and flaw type: the accuracy of solving the problems behind that
    flaw's `category` items minus the accuracy of grading those items, with Newcombe's interval (GAP_INTERVAL);
    flaw "all" pools the category. Backends that do not solve have no rows."""
    rows = []
    for backend, part in results.groupby("backend", sort=True):
        solved = part[part["task"] == "solve"].set_index("problem_id")["correct"]
        graded = part[(part["task"] == "grade") & (part["category"] == category)]
        if solved.empty or graded.empty:
            continue
        cells = [(flaw, cell) for flaw, cell in graded.groupby("flaw", sort=True)] + [(ALL_FLAWS, graded)]
        for flaw, cell in cells:
            problems = solved[solved.index.isin(cell["problem_id"].unique())]
            spread = rate_difference(int(problems.sum()), len(problems), int(cell["correct"].sum()), len(cell), level)
            rows.append(
                {
                    "backend": backend,
                    "flaw": flaw,
                    "n_problems": len(problems),
                    "solve_accuracy": problems.mean() if len(problems) else math.nan,
                    "n_items": len(cell),
                    "grade_accuracy": cell["correct"].mean(),
                    "gap": spread.mean,
                    "low": spread.low,
                    "high": spread.high,
                    "interval": spread.method,
                }
            )
    return pd.DataFrame(rows, columns=list(GAP_COLUMNS))


UNPARSEABLE_COLUMNS = ("backend", "task", "n", "unparseable", "rate", "errors")


def unparseable_table(results: pd.DataFrame) -> pd.DataFrame:
    """Per (backend, task): replies, unparseable replies (no value read, backend failures included), their rate, and
    how many of them were backend failures (`errors`: malformed responses, failed requests)."""
    rows = []
    for (backend, task), part in results.groupby(["backend", "task"], sort=True):
        bad = int((~part["parsed_ok"]).sum())
        errors = int((part["error"] != "").sum())
        rows.append(
            {
                "backend": backend,
                "task": task,
                "n": len(part),
                "unparseable": bad,
                "rate": bad / len(part),
                "errors": errors,
            }
        )
    return pd.DataFrame(rows, columns=list(UNPARSEABLE_COLUMNS))


class UnparseableVerdicts(ValueError):
    """An external backend returned more unparseable verdicts than the harness accepts."""


def check_unparseable(
    rate: float,
    backend: str,
    limit: float = UNPARSEABLE_LIMIT,
    external: bool = True,
    *,
    count: int | None = None,
    total: int | None = None,
) -> None:
    """Raise UnparseableVerdicts when an external backend's unparseable-verdict `rate` exceeds `limit` (the message
    gives the count when `count` and `total` are given); a local backend's rate is only reported, never raised."""
    if not 0.0 <= rate <= 1.0:
        raise ValueError(f"an unparseable rate is in [0, 1], got {rate!r} for backend {backend!r}")
    if external and rate > limit:
        counted = f"{count} of {total} verdicts" if count is not None and total is not None else "verdicts"
        raise UnparseableVerdicts(
            f"backend {backend!r}: {counted} unparseable ({rate:.1%}), above the {limit:.0%} accepted from an external "
            f"backend; the run fails (its raw replies are in the results table)"
        )


def check_results_unparseable(
    results: pd.DataFrame, external: Mapping[str, bool], limit: float = UNPARSEABLE_LIMIT, task: str = "grade"
) -> pd.DataFrame:
    """check_unparseable on every backend's `task` replies (`external`: backend name -> whether it is an external
    model; a backend not named there counts as external); returns the unparseable table."""
    table = unparseable_table(results)
    for row in table[table["task"] == task].itertuples(index=False):
        check_unparseable(
            row.rate, row.backend, limit, external.get(row.backend, True), count=row.unparseable, total=row.n
        )
    return table


PAPER = "Sun, Yeo, Solar-Lezama and Zhi-Xuan (2026), An Enigma of Artificial Reason, arXiv 2606.01462"
PAPER_COLUMNS = ("who", "task", "category", "low", "high", "bound", "note")
# (who, task, category, low, high, bound, note): accuracies as fractions. "at least": the lowest over the frontier
# models; "range": lowest and highest; "point": one value (low == high).
PAPER_NUMBERS = (
    ("frontier models", "solve", SOLVE_CATEGORY, 0.947, math.nan, "at least", "every frontier model tested"),
    ("frontier models", "grade", "VAVR", 0.919, math.nan, "at least", "every frontier model tested"),
    ("frontier models", "grade", "IAIR", 0.958, math.nan, "at least", "every frontier model tested"),
    ("frontier models", "grade", "VAIR", 0.479, 0.786, "range", "lowest and highest model; 1,001 VAIR items"),
    ("humans", "solve", SOLVE_CATEGORY, 0.808, 0.808, "point", "195 participants, 240 GSM8K items"),
    ("humans", "grade", "VAVR", 0.831, 0.831, "point", "195 participants, 240 GSM8K items"),
    ("humans", "grade", "IAIR", 0.803, 0.803, "point", "195 participants, 240 GSM8K items"),
    ("humans", "grade", "VAIR", 0.745, 0.745, "point", "195 participants, 240 GSM8K items"),
    (
        "PRM Qwen2.5-Math-PRM-7B",
        "grade",
        "IAIR",
        0.938,
        0.938,
        "point",
        "invalid when the running minimum step score < 0.5",
    ),
    (
        "PRM Qwen2.5-Math-PRM-7B",
        "grade",
        "VAVR",
        0.793,
        0.793,
        "point",
        "invalid when the running minimum step score < 0.5",
    ),
    (
        "PRM Qwen2.5-Math-PRM-7B",
        "grade",
        "VAIR",
        0.678,
        0.678,
        "point",
        "invalid when the running minimum step score < 0.5",
    ),
)


def paper_numbers() -> pd.DataFrame:
    """The paper's accuracies (PAPER_NUMBERS, from PAPER) as a table, for the report to show beside ours."""
    frame = pd.DataFrame(list(PAPER_NUMBERS), columns=list(PAPER_COLUMNS))
    frame["source"] = PAPER
    return frame
