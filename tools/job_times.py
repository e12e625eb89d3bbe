"""Job time of a run, from its rules' benchmark files, per paper (and per rule with --rules).

    python tools/job_times.py results/quick [--rules] [--papers bird amortix]

Every `benchmarks/**/*.tsv` under a paper's folder is one job (Snakemake's `benchmark:` file, one row per run):
`s` is its wall time and `cpu_time` its CPU seconds. The table gives jobs, wall seconds and CPU seconds summed,
per paper, with the total; with --rules, per rule (the benchmark file's folder under `benchmarks/`).
"""

from __future__ import annotations

import argparse
from pathlib import Path

import pandas as pd


def job_times(results: Path) -> pd.DataFrame:
    """One row per benchmark file: paper, rule folder, job, wall seconds, CPU seconds."""
    rows = []
    for path in sorted(Path(results).glob("*/benchmarks/**/*.tsv")):
        relative = path.relative_to(results)
        frame = pd.read_csv(path, sep="\t")
        rows.append(
            {
                "paper": relative.parts[0],
                "rule": relative.parts[2] if len(relative.parts) > 3 else path.stem,
                "job": str(relative),
                "wall_s": float(frame["s"].iloc[-1]),
                "cpu_s": float(frame["cpu_time"].iloc[-1]),
            }
        )
    if not rows:
        raise FileNotFoundError(f"no benchmark files under {results}/*/benchmarks")
    return pd.DataFrame(rows)


def summary(times: pd.DataFrame, by: list[str]) -> pd.DataFrame:
    table = times.groupby(by).agg(jobs=("job", "size"), wall_s=("wall_s", "sum"), cpu_s=("cpu_s", "sum"))
    total = pd.DataFrame([times.agg({"job": "size", "wall_s": "sum", "cpu_s": "sum"}).values], columns=table.columns)
    total.index = pd.Index(["total"] if len(by) == 1 else [("total", "")], name=table.index.name)
    return pd.concat([table.round(1), total.round(1)])


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("results", type=Path, help="a scale's results folder, e.g. results/quick")
    parser.add_argument("--rules", action="store_true", help="one row per rule instead of per paper")
    parser.add_argument("--papers", nargs="*", help="only these papers")
    args = parser.parse_args(argv)
    times = job_times(args.results)
    if args.papers:
        times = times[times["paper"].isin(args.papers)]
    print(summary(times, ["paper", "rule"] if args.rules else ["paper"]).to_markdown())


if __name__ == "__main__":
    main()
