"""The scoreboard's rows: per paper, the verdicts of its claims by kind, its checks, seeds and job time."""

from __future__ import annotations

import pandas as pd

VERDICTS = ("holds", "fails", "inconclusive")
KIND_COLUMNS = {"hard": "hard claims", "soft": "soft claims", "info": "info claims"}


def _counts(claims: pd.DataFrame, kind: str) -> dict[str, int]:
    verdicts = claims.loc[claims["kind"] == kind, "verdict"]
    return {v: int((verdicts == v).sum()) for v in VERDICTS}


def _triple(counts: dict[str, int]) -> str:
    return "/".join(str(counts[v]) for v in VERDICTS)


def paper_row(slug: str, claims: pd.DataFrame, bench: pd.DataFrame) -> dict:
    """One paper: `hard claims` etc. as holds/fails/inconclusive, checks passed/total, the range of runs the
    hard and soft claims rest on, jobs and their summed time. The raw counts ride along for the totals."""
    row: dict = {"paper": slug}
    for kind, column in KIND_COLUMNS.items():
        counts = _counts(claims, kind)
        row[column] = _triple(counts)
        row.update({f"{kind}_{v}": counts[v] for v in VERDICTS})
    checks = claims[claims["kind"] == "check"]
    row["checks passed"] = f"{int((checks['verdict'] == 'holds').sum())}/{len(checks)}"
    row["checks_holds"], row["checks_total"] = int((checks["verdict"] == "holds").sum()), len(checks)
    decided = claims[claims["kind"].isin(["hard", "soft"])]["runs"]
    row["runs per claim"] = (
        "n/a"
        if decided.empty
        else (f"{decided.min()}" if decided.min() == decided.max() else f"{decided.min()}-{decided.max()}")
    )
    row["jobs"] = len(bench)
    row["job time (s)"] = round(float(bench["seconds"].sum()), 1)
    row["slowest job"] = bench.sort_values("seconds").iloc[-1]["job"] if len(bench) else "n/a"
    return row


def totals_row(table: pd.DataFrame) -> dict:
    """The sums over papers, in the same columns."""
    row: dict = {"paper": "all papers"}
    for kind, column in KIND_COLUMNS.items():
        counts = {v: int(table[f"{kind}_{v}"].sum()) for v in VERDICTS}
        row[column] = _triple(counts)
        row.update({f"{kind}_{v}": counts[v] for v in VERDICTS})
    row["checks_holds"], row["checks_total"] = int(table["checks_holds"].sum()), int(table["checks_total"].sum())
    row["checks passed"] = f"{row['checks_holds']}/{row['checks_total']}"
    row["runs per claim"] = ""
    row["jobs"] = int(table["jobs"].sum())
    row["job time (s)"] = round(float(table["job time (s)"].sum()), 1)
    row["slowest job"] = ""
    return row


def totals_sentence(table: pd.DataFrame) -> str:
    """The top line: hard and soft claims across papers, and checks."""
    total = (
        table[table["paper"] == "all papers"].iloc[0] if (table["paper"] == "all papers").any() else totals_row(table)
    )
    papers = int((table["paper"] != "all papers").sum())
    return (
        f"**{papers} papers. Hard claims: {total['hard_holds']} hold, {total['hard_fails']} fail, "
        f"{total['hard_inconclusive']} inconclusive. Soft claims: {total['soft_holds']} hold, "
        f"{total['soft_fails']} fail, {total['soft_inconclusive']} inconclusive. "
        f"Implementation checks: {total['checks_holds']}/{total['checks_total']} passed.**"
    )


SHOWN = [
    "paper",
    "hard claims",
    "soft claims",
    "info claims",
    "checks passed",
    "runs per claim",
    "jobs",
    "job time (s)",
    "slowest job",
]
