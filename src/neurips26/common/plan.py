"""The cost of a run before it is submitted: jobs per rule, the CPU- and GPU-hours they request, the downloads,
the longest chain of jobs, which rules dominate, and, where a measured rate exists, the wall time a job will
likely take beside the time it requests.

Plain functions over job records; scripts/common/plan.py builds the records from Snakemake's DAG of a target
(with the SLURM profile's resources, as a cluster submission would request them) and writes the Markdown.

A rate is measured at quick scale: a rule's work per job (a count the rule declares, e.g. tokens times the
weights each passes through, `PLAN_WORK` in its rules file) divided by the seconds its quick jobs took (their
benchmark files). The estimate of a paper-scale CPU job is its work divided by that rate, a rough guide (quick jobs
run one thread on small inputs); a request below it is flagged as likely to hit its time limit. A GPU job is
estimated only from a rate recorded on a GPU: a CPU rate says nothing about it.
"""

from __future__ import annotations

import math
from collections import defaultdict
from dataclasses import dataclass, field

import pandas as pd

from neurips26.common.report import markdown_table

__all__ = ["JobRecord", "downloads_table", "longest_chain", "rates", "render_plan", "rules_table", "totals"]


@dataclass(frozen=True)
class JobRecord:
    """One planned job: its rule and paper, what it requests (threads, minutes, MB, GPUs), the jobs it waits for,
    the work it declares (None when its rule declares none) and, for a download, the file and its size."""

    jobid: int
    rule: str
    paper: str
    threads: int
    runtime_min: float
    mem_mb: float
    gpus: int = 0
    deps: tuple[int, ...] = ()
    work: float | None = None
    download: str | None = None
    size: int | None = None
    seconds: float | None = None  # measured (quick-scale benchmark), for the records a rate is built from
    extra: dict = field(default_factory=dict)


def rates(measured: list[JobRecord]) -> dict[str, float]:
    """Work per second per rule, from jobs that declare work and have a measured time (quick scale)."""
    work, seconds = defaultdict(float), defaultdict(float)
    for job in measured:
        if job.work is not None and job.seconds is not None and job.seconds > 0 and job.work > 0:
            work[job.rule] += job.work
            seconds[job.rule] += job.seconds
    return {rule: work[rule] / seconds[rule] for rule in work}


def _estimate_min(job: JobRecord, rate: dict[str, float], gpu_rate: dict[str, float]) -> float:
    """Minutes from the job's work: the rehearsal's estimate of its rule where one exists (`extra`), else a CPU
    job at its rule's CPU rate, a GPU job only at a rate recorded on a GPU (a CPU rate says nothing about a GPU
    job's time)."""
    if math.isfinite(job.extra.get("estimate_min", math.nan)):
        return job.extra["estimate_min"]
    rates_here = gpu_rate if job.gpus else rate
    if job.work is None or job.rule not in rates_here:
        return math.nan
    return job.work / rates_here[job.rule] / 60.0


def rules_table(
    jobs: list[JobRecord], rate: dict[str, float] | None = None, gpu_rate: dict[str, float] | None = None
) -> pd.DataFrame:
    """One row per rule: jobs, requested CPU-hours and GPU-hours (threads or GPUs x runtime), the share of the
    total, the largest request per job, the estimated minutes of its longest job and how many jobs would run past
    their request; sorted by requested hours (GPU-hours first). `rate` is measured on CPU (for CPU jobs),
    `gpu_rate` recorded on a GPU (for GPU jobs)."""
    rate, gpu_rate = rate or {}, gpu_rate or {}
    rows = []
    by_rule = defaultdict(list)
    for job in jobs:
        by_rule[job.rule].append(job)
    cpu_total = sum(j.threads * j.runtime_min for j in jobs) / 60 or 1.0
    gpu_total = sum(j.gpus * j.runtime_min for j in jobs) / 60 or 1.0
    for rule, group in by_rule.items():
        cpu_h = sum(j.threads * j.runtime_min for j in group) / 60
        gpu_h = sum(j.gpus * j.runtime_min for j in group) / 60
        estimates = [_estimate_min(j, rate, gpu_rate) for j in group]
        known = [(e, j) for e, j in zip(estimates, group, strict=True) if not math.isnan(e)]
        rows.append(
            {
                "rule": rule,
                "paper": ", ".join(sorted({j.paper for j in group})),
                "jobs": len(group),
                "GPUs/job": max(j.gpus for j in group),
                "requested min/job (max)": max(j.runtime_min for j in group),
                "CPU-h": cpu_h,
                "GPU-h": gpu_h,
                "share of CPU-h": cpu_h / cpu_total,
                "share of GPU-h": gpu_h / gpu_total,
                "rate measured": ("rehearsal (GPU: a lower bound)" if group[0].gpus else "rehearsal")
                if "estimate_min" in group[0].extra
                else (
                    "GPU"
                    if group[0].gpus and group[0].rule in gpu_rate
                    else ("CPU, quick" if not group[0].gpus and group[0].rule in rate else "")
                ),
                "estimated min/job (max)": max((e for e, _ in known), default=math.nan),
                "jobs past their request": sum(e > j.runtime_min for e, j in known) if known else "",
            }
        )
    table = pd.DataFrame(rows)
    if table.empty:
        return table
    return table.sort_values(["GPU-h", "CPU-h", "rule"], ascending=[False, False, True]).reset_index(drop=True)


def longest_chain(jobs: list[JobRecord]) -> tuple[float, list[JobRecord]]:
    """The chain of dependent jobs with the largest total requested runtime (minutes): the wall time with
    unlimited parallel slots if every job used its whole request once (retries can add attempts)."""
    by_id = {job.jobid: job for job in jobs}
    best: dict[int, tuple[float, int | None]] = {}

    def visit(jobid: int) -> float:  # iterative over the DAG: depth can exceed Python's recursion limit
        stack = [(jobid, False)]
        while stack:
            current, expanded = stack.pop()
            if current in best:
                continue
            deps = [d for d in by_id[current].deps if d in by_id]
            if not expanded:
                stack.append((current, True))
                stack.extend((d, False) for d in deps if d not in best)
                continue
            prior = max(((best[d][0], d) for d in deps), default=(0.0, None))
            best[current] = (prior[0] + by_id[current].runtime_min, prior[1])
        return best[jobid][0]

    if not jobs:
        return 0.0, []
    for job in jobs:
        visit(job.jobid)
    end = max(best, key=lambda j: best[j][0])
    chain, current = [], end
    while current is not None:
        chain.append(by_id[current])
        current = best[current][1]
    return best[end][0], chain[::-1]


def downloads_table(jobs: list[JobRecord]) -> pd.DataFrame:
    """The files a run downloads, per registry folder: files, stated bytes (where the source states a size) and
    how many files have no stated size."""
    rows = defaultdict(lambda: {"files": 0, "GB stated": 0.0, "files without a stated size": 0})
    for job in jobs:
        if job.download is None:
            continue
        row = rows[job.download.rpartition("/")[0]]
        row["files"] += 1
        if job.size is None:
            row["files without a stated size"] += 1
        else:
            row["GB stated"] += job.size / 1e9
    return pd.DataFrame([{"folder": folder, **row} for folder, row in sorted(rows.items())])


def totals(jobs: list[JobRecord]) -> dict[str, float]:
    """Jobs, CPU-hours, GPU-hours, the longest chain (hours) and the downloads (files, stated GB)."""
    chain_min, _ = longest_chain(jobs)
    downloads = [j for j in jobs if j.download is not None]
    return {
        "jobs": len(jobs),
        "cpu_hours": sum(j.threads * j.runtime_min for j in jobs) / 60,
        "gpu_hours": sum(j.gpus * j.runtime_min for j in jobs) / 60,
        "longest_chain_hours": chain_min / 60,
        "downloads": len(downloads),
        "download_gb_stated": sum(j.size or 0 for j in downloads) / 1e9,
        "downloads_without_size": sum(j.size is None for j in downloads),
    }


def render_plan(
    title: str,
    jobs: list[JobRecord],
    rate: dict[str, float],
    note: str = "",
    gpu_rate: dict[str, float] | None = None,
    sections: tuple[str, ...] = (),
) -> str:
    """The plan as Markdown: totals, per-paper totals, rules by requested hours, downloads, the longest chain, then
    `sections` (Markdown, e.g. the rehearsal's checks: neurips26.common.plan_checks)."""
    t = totals(jobs)
    chain_min, chain = longest_chain(jobs)
    papers = pd.DataFrame(
        [
            {"paper": paper, **{k: v for k, v in totals([j for j in jobs if j.paper == paper]).items()}}
            for paper in sorted({j.paper for j in jobs})
        ]
    )
    rules = rules_table(jobs, rate, gpu_rate)
    n_estimated = int(rules["estimated min/job (max)"].notna().sum()) if not rules.empty else 0
    flagged = rules[rules["jobs past their request"].map(lambda v: isinstance(v, int | float) and v > 0)]
    chain_rows = pd.DataFrame(
        [{"step": i + 1, "rule": j.rule, "requested min": j.runtime_min, "GPUs": j.gpus} for i, j in enumerate(chain)]
    )
    downloads = downloads_table(jobs)
    lines = [
        f"# {title}",
        "",
        note,
        "",
        f"**{t['jobs']} jobs** requesting **{t['cpu_hours']:.1f} CPU-hours** (threads x runtime) and "
        f"**{t['gpu_hours']:.1f} GPU-hours**; the longest chain of dependent jobs requests "
        f"**{chain_min / 60:.1f} hours** (the wall time with unlimited slots if each job used its whole request "
        f"once; retries add attempts). Estimates from a measured rate: {n_estimated} of {len(rules)} rules. "
        f"Downloads: {t['downloads']} "
        f"files, {t['download_gb_stated']:.2f} GB where the source states a size "
        f"({t['downloads_without_size']} files without a stated size).",
        "",
        "## Per paper",
        "",
        markdown_table(papers, digits=3) if not papers.empty else "No jobs.",
        "",
        "## Rules, by requested GPU-hours then CPU-hours",
        "",
        "Requests are the rules' resources with the SLURM profile's `set-resources` applied "
        "(profiles/slurm/config.yaml), as a cluster submission asks for them. The estimate is the rehearsal's where "
        "one exists (`make rehearse`: the rule's representative job at real shapes, its seconds times the ratio of "
        "paper to rehearsal budgets on the CPU, its counted FLOPs at a stated throughput on a GPU); otherwise it "
        "divides a job's declared work (`PLAN_WORK` in the rules) by its rule's rate: for a CPU job the rate "
        "measured at quick scale (quick work / the quick jobs' CPU seconds, from their benchmark files), for a "
        f"GPU job only a rate recorded on a GPU ({len(gpu_rate or {})} recorded). Empty where the rule declares no "
        "work or no rate applies.",
        "",
        markdown_table(rules, digits=3) if not rules.empty else "No jobs.",
        "",
        "## Requests that look too small",
        "",
        (
            markdown_table(flagged[["rule", "jobs", "requested min/job (max)", "estimated min/job (max)"]], digits=3)
            if not flagged.empty
            else "None of the jobs with an estimate would run past its requested time."
        ),
        "",
        "## Downloads",
        "",
        markdown_table(downloads, digits=3) if not downloads.empty else "None.",
        "",
        "## The longest chain",
        "",
        markdown_table(chain_rows, digits=4) if not chain_rows.empty else "None.",
        "",
        *sections,
    ]
    return "\n".join(lines)
