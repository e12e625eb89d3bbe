"""The scoreboard's rows: per paper, the verdicts of its claims by kind, the share of its hard and soft claims
decided, its checks, seeds and job time.

Papers that were not found (claims files marked `reconstruction: true`) test our reconstruction of their model, not
the paper's: their rows go in a table of their own, with their own totals, and the top line counts only the claims
of found papers as reproduced (`split_reconstructions`, `totals_sentence`).
"""

from __future__ import annotations

import pandas as pd

from neurips26.common.report import is_reconstruction, markdown_table

VERDICTS = ("holds", "fails", "inconclusive")
KIND_COLUMNS = {"hard": "hard claims", "soft": "soft claims", "info": "info claims"}
FOUND, RECONSTRUCTED = "all found papers", "all reconstructions"


def _counts(claims: pd.DataFrame, kind: str) -> dict[str, int]:
    verdicts = claims.loc[claims["kind"] == kind, "verdict"]
    return {v: int((verdicts == v).sum()) for v in VERDICTS}


def _triple(counts: dict[str, int]) -> str:
    return "/".join(str(counts[v]) for v in VERDICTS)


def decided_share(row: dict) -> str:
    """Of the hard and soft claims, how many are decided (hold or fail): `decided/total (percent)`, n/a for none."""
    decided = sum(int(row[f"{kind}_{v}"]) for kind in ("hard", "soft") for v in ("holds", "fails"))
    total = decided + sum(int(row[f"{kind}_inconclusive"]) for kind in ("hard", "soft"))
    return f"{decided}/{total} ({100 * decided / total:.0f}%)" if total else "n/a"


def paper_row(slug: str, claims: pd.DataFrame, bench: pd.DataFrame) -> dict:
    """One paper: `hard claims` etc. as holds/fails/inconclusive, checks passed/total, the range of runs the
    hard and soft claims rest on, jobs and their summed time, and whether it is a reconstruction. The raw counts
    ride along for the totals."""
    row: dict = {"paper": slug, "reconstruction": is_reconstruction(claims)}
    for kind, column in KIND_COLUMNS.items():
        counts = _counts(claims, kind)
        row[column] = _triple(counts)
        row.update({f"{kind}_{v}": counts[v] for v in VERDICTS})
    row["decided"] = decided_share(row)
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


def totals_row(table: pd.DataFrame, label: str = "all papers") -> dict:
    """The sums over the papers of `table`, in the same columns."""
    row: dict = {"paper": label}
    for kind, column in KIND_COLUMNS.items():
        counts = {v: int(table[f"{kind}_{v}"].sum()) for v in VERDICTS}
        row[column] = _triple(counts)
        row.update({f"{kind}_{v}": counts[v] for v in VERDICTS})
    row["decided"] = decided_share(row)
    row["checks_holds"], row["checks_total"] = int(table["checks_holds"].sum()), int(table["checks_total"].sum())
    row["checks passed"] = f"{row['checks_holds']}/{row['checks_total']}"
    row["runs per claim"] = ""
    row["jobs"] = int(table["jobs"].sum())
    row["job time (s)"] = round(float(table["job time (s)"].sum()), 1)
    row["slowest job"] = ""
    return row


def _papers(table: pd.DataFrame) -> pd.DataFrame:
    """The paper rows of a table, without totals rows."""
    return table[~table["paper"].isin(["all papers", FOUND, RECONSTRUCTED])]


def _reconstructed(table: pd.DataFrame) -> pd.Series:
    if "reconstruction" not in table.columns:
        return pd.Series(False, index=table.index)
    return table["reconstruction"].fillna(False).astype(bool)


def split_reconstructions(rows: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(found papers, reconstructions): the paper rows of each kind, each followed by its own totals row (a kind
    with no paper gives an empty table)."""
    papers = _papers(rows)
    marked = _reconstructed(papers)
    parts = []
    for part, label in ((papers[~marked], FOUND), (papers[marked], RECONSTRUCTED)):
        if part.empty:
            parts.append(part.reset_index(drop=True))
        else:
            parts.append(pd.concat([part, pd.DataFrame([totals_row(part, label)])], ignore_index=True))
    return parts[0], parts[1]


def _sentence(total: dict | pd.Series) -> str:
    return (
        f"Hard claims: {total['hard_holds']} hold, {total['hard_fails']} fail, "
        f"{total['hard_inconclusive']} inconclusive. Soft claims: {total['soft_holds']} hold, "
        f"{total['soft_fails']} fail, {total['soft_inconclusive']} inconclusive. "
        f"Decided (hold or fail): {decided_share(total)} of the hard and soft claims. "
        f"Implementation checks: {total['checks_holds']}/{total['checks_total']} passed."
    )


def totals_sentence(table: pd.DataFrame) -> str:
    """The top line: hard and soft claims across found papers, and checks; then, apart, those of the papers whose
    model is our reconstruction (never added to the found papers' counts)."""
    papers = _papers(table)
    marked = _reconstructed(papers)
    found, rebuilt = papers[~marked], papers[marked]
    head = f"**{len(found)} papers. {_sentence(totals_row(found))}**"
    if rebuilt.empty:
        return head
    return (
        f"{head} Counted apart, {len(rebuilt)} paper(s) not found, whose model is our reconstruction (their claims "
        f"test our model, not the paper's): {_sentence(totals_row(rebuilt))}"
    )


SHOWN = [
    "paper",
    "hard claims",
    "soft claims",
    "decided",
    "info claims",
    "checks passed",
    "runs per claim",
    "jobs",
    "job time (s)",
    "slowest job",
]


def _linked(part: pd.DataFrame) -> pd.DataFrame:
    """The shown columns, each paper's name a link to its report (totals rows unlinked)."""
    totals = part["paper"].isin(["all papers", FOUND, RECONSTRUCTED])
    return part.assign(paper=[p if t else f"[{p}]({p}/report.md)" for p, t in zip(part["paper"], totals)])[SHOWN]


def board_markdown(rows: pd.DataFrame) -> str:
    """The scoreboard's head: the top line, the table of found papers with their totals and, where any ran, the
    reconstructions' table with theirs, under its own heading."""
    found, rebuilt = split_reconstructions(rows)
    lines = [totals_sentence(rows), "", markdown_table(_linked(found)) if len(found) else "No found paper ran.", ""]
    if len(rebuilt):
        lines += [
            "## Reconstructions (counted apart)",
            "",
            "These papers were not found: each model is our reconstruction from the abstract and related work, so "
            "their claims test our model, not the paper's, and are never added to the reproduced claims above.",
            "",
            markdown_table(_linked(rebuilt)),
            "",
        ]
    return "\n".join(lines)


def _list_table(part: pd.DataFrame) -> list[str]:
    """reStructuredText list-table of the shown columns (cells as literal text: no markup in names)."""
    lines = [".. list-table::", "   :header-rows: 1", ""]
    for cells in [SHOWN, *part[SHOWN].astype(str).values.tolist()]:
        lines += [f"   {'*' if i == 0 else ' '} - {_rst_cell(cell)}" for i, cell in enumerate(cells)]
    return lines


def _rst_cell(text: str) -> str:
    """A cell's text with reStructuredText's inline markup characters escaped (`|`, `*`, `` ` ``, `_`)."""
    escaped = "".join("\\" + c if c in "|*`_\\" else c for c in str(text))
    return escaped if escaped.strip() else "\\ "


def board_rst(rows: pd.DataFrame, scale: str) -> str:
    """The HTML report's landing page (workflow/report/workflow.rst includes it): the top line, the found papers'
    table and the reconstructions' table; each paper's results are under its category, "Paper NN: title"."""
    found, rebuilt = split_reconstructions(rows)
    title = f"Scoreboard, scale {scale}"
    lines = [title, "=" * len(title), "", totals_sentence(rows), ""]
    lines += [*_list_table(found), ""] if len(found) else ["No found paper ran.", ""]
    if len(rebuilt):
        head = "Reconstructions (counted apart)"
        lines += [head, "-" * len(head), "", "These papers were not found: their claims test our reconstruction of "
                  "the model, never added to the reproduced claims above.", "", *_list_table(rebuilt), ""]  # fmt: skip
    lines += [
        "Columns: hard, soft and info claims as holds/fails/inconclusive; ``decided``: the share of hard and soft "
        "claims that hold or fail; checks are properties our own code guarantees, counted apart. Each paper's "
        'claims, figures and tables are in the menu under *Results*, one category per paper ("Paper NN: title"); '
        "the full scoreboard with every claim is the file REPORT.md beside this report's results.",
        "",
    ]
    return "\n".join(lines)


def board_csv(rows: pd.DataFrame) -> pd.DataFrame:
    """scoreboard.csv: the shown columns of both tables and their totals, with a `reconstruction` column."""
    found, rebuilt = split_reconstructions(rows)
    table = pd.concat([found.assign(reconstruction=False), rebuilt.assign(reconstruction=True)], ignore_index=True)
    return table[[*SHOWN, "reconstruction"]]
