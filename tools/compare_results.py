"""Compare the tables of two result trees, e.g. a quick run before and after a refactor.

    python tools/compare_results.py BEFORE/results/quick AFTER/results/quick [--papers bird amortix]

Every Parquet and CSV table and every .npz archive under each paper's folder is read in both trees;
provenance columns (commit, config hash) are dropped; wall-clock columns (their names say seconds, time,
ms, rss, throughput) are listed but not compared, and neither are the wall-clock rows of a long table
(its `metric` names a timing), since they differ between any two runs. Column types must agree. Each table is
`identical`, `close` (numbers within --rtol, with the largest relative difference) or `differs`
(with the first differing columns). The exit status is 1 when any table differs or is missing.
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

import numpy as np
import pandas as pd

PROVENANCE = {"git_commit", "config_hash"}
TIMING = re.compile(r"second|(?:^|_)s$|_ms$|(?:^|_)ms_|time|rss|throughput|per_s(?:ec)?$|speed|wall|elapsed", re.I)


def read(path: Path) -> pd.DataFrame:
    """A table without provenance columns; a long table's wall-clock rows (a `metric` column naming a timing,
    such as t_pred_ms or train_seconds) are dropped too, so they cannot hide a change of the other rows."""
    if path.suffix == ".npz":
        with np.load(path, allow_pickle=False) as archive:
            return pd.DataFrame(
                {"array": name, "values": str(archive[name].dtype) + repr(archive[name].tolist())}
                for name in sorted(archive.files)
                if not TIMING.search(name)  # a stored wall-clock value (seconds)
            )
    frame = pd.read_parquet(path) if path.suffix == ".parquet" else pd.read_csv(path)
    frame = frame.drop(columns=[c for c in frame.columns if c in PROVENANCE])
    if "metric" in frame.columns and not pd.api.types.is_numeric_dtype(frame["metric"]):
        frame = frame[~frame["metric"].astype(str).str.contains(TIMING)]
        # a long table's rows are matched by their keys, not by the order the jobs were collected in
        keys = [np.array([str(v) for v in frame[c]]) for c in frame.columns if c != "value"]
        frame = frame.iloc[np.lexsort(keys[::-1])].reset_index(drop=True)
    return frame


def compare(before: pd.DataFrame, after: pd.DataFrame, rtol: float) -> tuple[str, str]:
    if list(before.columns) != list(after.columns):
        return "differs", f"columns {list(before.columns)} -> {list(after.columns)}"
    if len(before) != len(after):
        return "differs", f"{len(before)} -> {len(after)} rows"
    kinds = [c for c in before.columns if before[c].dtype.kind != after[c].dtype.kind]
    if kinds:
        return "differs", f"column types {[(c, str(before[c].dtype), str(after[c].dtype)) for c in kinds]}"
    timing = [c for c in before.columns if TIMING.search(str(c))]
    worst, bad = 0.0, []
    for column in before.columns:
        if column in timing:
            continue
        a, b = before[column], after[column]
        if pd.api.types.is_numeric_dtype(a) and pd.api.types.is_numeric_dtype(b):
            x, y = a.to_numpy(float), b.to_numpy(float)
            same_nan = np.isnan(x) == np.isnan(y)
            diff = np.abs(x - y) / np.maximum(np.maximum(np.abs(x), np.abs(y)), 1e-300)
            diff = np.where(np.isnan(x) & np.isnan(y), 0.0, diff)
            if not same_nan.all() or (np.nan_to_num(diff, nan=np.inf) > rtol).any():
                bad.append(column)
            else:
                worst = max(worst, float(np.nanmax(diff, initial=0.0)))
        elif not a.astype(str).equals(b.astype(str)):
            bad.append(column)
    untimed = f"; not compared (wall clock): {timing}" if timing else ""
    if bad and "claim_id" in before.columns:  # name the claims, so a wall-clock claim can be told apart
        rows = np.zeros(len(before), dtype=bool)
        for column in bad:
            a, b = before[column], after[column]
            rows |= ~((a == b).fillna(False).to_numpy(bool) | (a.isna() & b.isna()).to_numpy())
        return "differs", f"columns {bad[:6]} of claims {list(before.loc[rows, 'claim_id'])}{untimed}"
    if bad:
        return "differs", f"columns {bad[:6]}{untimed}"
    if worst == 0.0:
        return "identical", untimed.lstrip("; ")
    return "close", f"largest relative difference {worst:.2e}{untimed}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("before", type=Path)
    parser.add_argument("after", type=Path)
    parser.add_argument("--papers", nargs="*", help="paper folders to compare (default: all in BEFORE)")
    parser.add_argument("--rtol", type=float, default=1e-6)
    args = parser.parse_args(argv)
    chosen = [p for item in args.papers or [] for p in item.split(",") if p]
    papers = chosen or sorted(p.name for p in args.before.iterdir() if p.is_dir() and p.name != "logs")
    failed = 0
    for paper in papers:
        tables = sorted(
            p.relative_to(args.before)
            for p in (args.before / paper).rglob("*")
            if p.suffix in (".parquet", ".csv", ".npz") and "benchmarks" not in p.parts
        )
        for table in tables:
            if not (args.after / table).exists():
                status, detail = "missing", ""
            else:
                status, detail = compare(read(args.before / table), read(args.after / table), args.rtol)
            failed += status in ("differs", "missing")
            print(f"{status:9s} {table} {detail}".rstrip())
    print(f"{failed} table(s) differ or are missing")
    return int(failed > 0)


if __name__ == "__main__":
    sys.exit(main())
