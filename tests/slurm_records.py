"""What Slurm and Snakemake say about a cluster run: Slurm's accounting records (sacct) of the jobs a
workflow copy submitted, and the resources Snakemake plans for each job (its dry run)."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pandas as pd

CLUSTER_PROFILE = ("--profile", "profiles/slurm", "--workflow-profile", "profiles/slurm-local")
FIELDS = (
    "JobID",
    "JobName",
    "State",
    "ExitCode",
    "Partition",
    "Account",
    "ReqMem",
    "Timelimit",
    "ReqCPUS",
    "ReqTRES",
    "Comment",
    "WorkDir",
    "Elapsed",
)


def slurm_call(*args: str, timeout: float = 30) -> str:
    return subprocess.run(args, check=True, capture_output=True, text=True, timeout=timeout).stdout


def slurm_jobs(workdir: Path) -> pd.DataFrame:
    """One row per Slurm job (allocations, not steps) submitted from `workdir`, in submission order."""
    out = slurm_call("sacct", "-X", "-P", "-n", "-a", "-S", "now-1days", "-o", ",".join(FIELDS))
    rows = [line.split("|") for line in out.splitlines() if line.strip()]
    frame = pd.DataFrame(rows, columns=list(FIELDS))
    frame = frame[frame["WorkDir"] == str(workdir)].copy()
    frame["JobID"] = frame["JobID"].astype(int)
    return frame.sort_values("JobID").reset_index(drop=True)


def minutes(timelimit: str) -> int:
    """Slurm's [D-]HH:MM:SS as minutes."""
    days, _, clock = timelimit.rpartition("-")
    h, m, s = (int(x) for x in clock.split(":"))
    return int(days or 0) * 1440 + h * 60 + m + (s > 0)


def megabytes(reqmem: str) -> int:
    value, unit = float(reqmem[:-1]), reqmem[-1]
    return int(value * {"K": 1 / 1024, "M": 1, "G": 1024, "T": 1024**2}[unit])


def gpus(reqtres: str) -> int:
    found = re.search(r"gres/gpu=(\d+)", reqtres)
    return int(found.group(1)) if found else 0


def slurm_comment(rule: str, wildcards: dict[str, str]) -> str:
    """The --comment the SLURM executor plugin gives a job: how a Slurm record names its rule."""
    return f"rule_{rule}_wildcards_{'_'.join(wildcards.values())}" if wildcards else f"rule_{rule}"


def planned_resources(dry_run_output: str) -> dict[str, dict]:
    """{Slurm comment: {rule, threads, resources}} for every job of a Snakemake dry run."""
    planned = {}
    for block in re.split(r"\n(?=(?:local)?rule \S+:\n)", dry_run_output):
        head = re.match(r"(?:local)?rule (\S+):\n", block)
        if not head:
            continue
        fields = dict(re.findall(r"^    (\w+): (.*)$", block, re.M))
        wildcards = dict(kv.split("=", 1) for kv in fields.get("wildcards", "").split(", ") if kv)
        resources = dict(kv.split("=", 1) for kv in fields.get("resources", "").split(", ") if kv)
        key = slurm_comment(head.group(1), wildcards)
        planned[key] = {"rule": head.group(1), "threads": int(fields.get("threads", 1)), "resources": resources}
    return planned
