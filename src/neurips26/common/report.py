"""Markdown pieces shared by every paper's report and the scoreboard."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd


def markdown_table(frame: pd.DataFrame, digits: int = 4) -> str:
    """A GitHub-flavoured Markdown table; floats to `digits` significant digits."""

    def cell(value) -> str:
        if isinstance(value, (float, np.floating)):
            return "n/a" if not np.isfinite(value) else f"{value:.{digits}g}"
        return str(value).replace("|", "\\|")

    head = "| " + " | ".join(map(str, frame.columns)) + " |"
    rule = "|" + "|".join("---" for _ in frame.columns) + "|"
    body = ["| " + " | ".join(cell(v) for v in row) + " |" for row in frame.itertuples(index=False)]
    return "\n".join([head, rule, *body])


def read_benchmarks(folder: str | Path) -> pd.DataFrame:
    """Every Snakemake benchmark file under `folder`: job (path stem), seconds, max RSS (MB)."""
    rows = []
    for path in sorted(Path(folder).rglob("*.tsv")):
        table = pd.read_csv(path, sep="\t")
        rows.append({
            "job": str(path.relative_to(folder).with_suffix("")),
            "seconds": float(table["s"].mean()),
            "max_rss_mb": float(pd.to_numeric(table["max_rss"], errors="coerce").max()),
        })
    return pd.DataFrame(rows, columns=["job", "seconds", "max_rss_mb"])


def claims_markdown(claims: pd.DataFrame) -> str:
    shown = claims.assign(
        holds=claims["holds"].map({True: "yes", False: "**no**"}),
        check=claims["comparison"] + " " + claims["threshold"].map(lambda t: f"{t:g}"),
    )[["claim_id", "kind", "statement", "metric", "value", "check", "holds", "paper_value", "note"]]
    return markdown_table(shown)
