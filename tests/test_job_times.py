"""tools/job_times.py: a run's job time per paper and per rule, from its benchmark files."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tools"))

from job_times import job_times, summary  # noqa: E402

HEADER = "s\th:m:s\tmax_rss\tmax_vms\tmax_uss\tmax_pss\tio_in\tio_out\tmean_load\tcpu_time\n"


def bench(path: Path, *rows: tuple[float, float]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    lines = "".join(f"{s}\t0:00:01\t1\t1\t1\t1\t0\t0\t50\t{cpu}\n" for s, cpu in rows)
    path.write_text(HEADER + lines)


def test_job_times_sum_each_papers_and_each_rules_benchmark_files(tmp_path):
    bench(tmp_path / "bird/benchmarks/train/mnist_s0.tsv", (10.0, 8.0))
    bench(tmp_path / "bird/benchmarks/train/mnist_s1.tsv", (12.0, 9.0))
    bench(tmp_path / "bird/benchmarks/report.tsv", (1.5, 1.0))
    bench(tmp_path / "amortix/benchmarks/claims.tsv", (99.0, 1.0), (2.0, 1.5))  # a rerun: its last row counts
    times = job_times(tmp_path)
    assert sorted(times["rule"]) == ["claims", "report", "train", "train"]
    papers = summary(times, ["paper"])
    assert papers.loc["bird", "jobs"] == 3 and papers.loc["bird", "wall_s"] == pytest.approx(23.5)
    assert papers.loc["amortix", "wall_s"] == pytest.approx(2.0) and papers.loc["amortix", "cpu_s"] == 1.5
    assert papers.loc["total", "jobs"] == 4 and papers.loc["total", "cpu_s"] == pytest.approx(19.5)
    rules = summary(times, ["paper", "rule"])
    assert rules.loc[("bird", "train"), "cpu_s"] == pytest.approx(17.0)


def test_a_tree_without_benchmark_files_is_an_error(tmp_path):
    with pytest.raises(FileNotFoundError, match="no benchmark files"):
        job_times(tmp_path)
