"""What the plan of paper scale checks before anything is submitted, from the rehearsal's measurements
(results/rehearsal/jobs.csv, written by tools/rehearse.py): the memory of every job against its request and the
GPU, the jobs that will not fit or will not run, and the claims the planned seeds cannot decide.

The rehearsal runs one representative job per rule (the largest of its sweeps), so a rule's prediction is that
job's, applied to every job of the rule: an upper bound for the smaller members of a sweep.
"""

from __future__ import annotations

import dataclasses
import math

import pandas as pd
from scipy import stats

from neurips26.common.plan import JobRecord
from neurips26.common.rehearsal_report import GPU_MEMORY_GB

__all__ = [
    "attach_rehearsal",
    "claims_table",
    "memory_table",
    "not_fitting",
    "planned_seeds",
    "separating_count",
    "t_multiplier",
]

_PREDICTED = ("estimate_min", "device_gb", "host_mb")


def attach_rehearsal(jobs: list[JobRecord], measured: pd.DataFrame) -> list[JobRecord]:
    """The jobs with their rule's rehearsal predictions in `extra` (the largest over the rule's rehearsal jobs)."""
    if measured.empty:
        return jobs
    by_rule = measured.groupby("rule")
    known = set(measured["rule"])
    out = []
    for job in jobs:
        if job.rule not in known:
            out.append(job)
            continue
        group = by_rule.get_group(job.rule)
        extra = dict(job.extra, status=",".join(sorted(set(group["status"]))))
        for column in _PREDICTED:
            values = group[column].dropna() if column in group else pd.Series(dtype=float)
            if not values.empty:
                extra[column] = float(values.max())
        out.append(dataclasses.replace(job, extra=extra))
    return out


def memory_table(jobs: list[JobRecord], gpu_gb: float = GPU_MEMORY_GB) -> pd.DataFrame:
    """Per rule: the requested host memory beside the predicted peak, and for jobs that train in the loop the
    predicted device memory beside the GPU's (or, for a CPU job, the tensors that add to its host memory)."""
    rows = []
    for rule in sorted({j.rule for j in jobs}):
        group = [j for j in jobs if j.rule == rule]
        first = group[0]
        host, device = first.extra.get("host_mb", math.nan), first.extra.get("device_gb", math.nan)
        request = max(j.mem_mb for j in group)
        rows.append(
            {
                "rule": rule,
                "paper": first.paper,
                "jobs": len(group),
                "GPU": "yes" if first.gpus else "",
                "requested MB": request,
                "predicted host MB": host,
                "host fits": "" if math.isnan(host) else ("yes" if host <= request else "**no**"),
                "predicted device GB": device,
                "device fits": ""
                if math.isnan(device) or not first.gpus
                else ("yes" if device <= gpu_gb else f"**no** (> {gpu_gb:.0f} GB)"),
                "rehearsal": first.extra.get("status", "not rehearsed"),
            }
        )
    return pd.DataFrame(rows)


def not_fitting(measured: pd.DataFrame) -> pd.DataFrame:
    """The rehearsal's jobs that failed, did not run, or are predicted past their request or the GPU."""
    from neurips26.common.rehearsal_report import problems

    return problems(measured)


def planned_seeds(block) -> int:
    """The most seeds a design runs: the longest list under a key ending in `seeds` anywhere in the config block,
    times its `seeds_per_job` where the same mapping has one (seeds batched into one job), or an integer `runs`
    (independent replicates, as Monte Carlo runs)."""
    best = 0
    if isinstance(block, dict):
        for key, value in block.items():
            if key.endswith("seeds") and isinstance(value, list):
                best = max(best, len(value) * int(block.get("seeds_per_job", 1) or 1))
            if key == "runs" and isinstance(value, int) and not isinstance(value, bool):
                best = max(best, value)
            best = max(best, planned_seeds(value))
    elif isinstance(block, list):
        for value in block:
            best = max(best, planned_seeds(value))
    return best


def t_multiplier(runs: int) -> float:
    """The half-width of a 95% t-interval over `runs` seeds, in standard errors (inf below 2 runs)."""
    return float(stats.t.ppf(0.975, runs - 1)) if runs >= 2 else math.inf


def separating_count(runs: int, alpha: float = 0.05) -> int | None:
    """The fewest events out of `runs` that a one-sided Fisher exact test separates from 0 of `runs` at `alpha`
    (e.g. divergences of noised against clean runs); None when even `runs` of `runs` does not."""
    for k in range(1, runs + 1):
        if stats.fisher_exact([[k, runs - k], [0, runs]], alternative="greater")[1] < alpha:
            return k
    return None


def claims_table(definitions: dict[str, list], rehearsed: pd.DataFrame, seeds: dict[str, tuple[int, int]]):
    """Per claim (hard and soft): its minimum runs, the runs the paper-scale design gives, and whether that can
    decide it. `definitions`: paper -> claim definitions; `rehearsed`: the rehearsal's claims (paper, claim_id,
    runs); `seeds`: paper -> (planned seeds at paper scale, seeds in the rehearsal). Planned runs are the
    rehearsal's runs times paper seeds / rehearsal seeds (exact for claims over seeds; for claims over cells that
    do not grow with the seeds, an overestimate), or the planned seeds where the rehearsal gave no runs."""
    rows = []
    for paper, items in definitions.items():
        paper_seeds, rehearsal_seeds = seeds[paper]
        for item in items:
            if item.kind not in ("hard", "soft"):
                continue
            match = rehearsed[(rehearsed["paper"] == paper) & (rehearsed["claim_id"] == item.claim_id)]
            runs_rehearsed = float(match["runs"].iloc[0]) if not match.empty else math.nan
            if math.isfinite(runs_rehearsed) and runs_rehearsed > 0 and rehearsal_seeds > 0:
                planned = int(round(runs_rehearsed * paper_seeds / rehearsal_seeds))
                basis = "rehearsal"
            else:
                planned, basis = paper_seeds, "seeds"
            if planned == 0:
                verdict = "unknown: the design names no seeds and the rehearsal gave no run count"
            elif planned < item.min_runs and basis == "seeds":
                verdict = f"**likely cannot decide**: {planned} seeds < {item.min_runs} runs (if its runs are seeds)"
            elif planned < item.min_runs:
                verdict = f"**cannot decide**: {planned} < {item.min_runs} runs"
            elif planned < 2:
                verdict = "**cannot decide**: one run has no seed spread"
            elif basis == "seeds":
                verdict = "likely can decide (if its runs are seeds: the rehearsal gave no run count)"
            else:
                verdict = "can decide"
            rows.append(
                {
                    "paper": paper,
                    "claim": item.claim_id,
                    "kind": item.kind,
                    "min_runs": item.min_runs,
                    "planned runs": planned,
                    "from": basis,
                    "95% interval (x se)": t_multiplier(planned),
                    "events that separate from 0": separating_count(planned) or "none",
                    "decidable": verdict,
                }
            )
    return pd.DataFrame(rows)
