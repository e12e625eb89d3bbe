"""Shared fixtures: a throwaway copy of the workflow, and a way to run Snakemake in it."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SNAKEMAKE = str(Path(sys.executable).with_name("snakemake"))
COPIED = ("workflow", "rules", "scripts", "config", "src", "profiles", "envs")


def copy_workflow(dest: Path) -> Path:
    """The workflow's files in `dest`, without results or caches, so a test can change and break them."""
    for name in COPIED:
        shutil.copytree(ROOT / name, dest / name, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    return dest


@pytest.fixture
def workflow_copy(tmp_path: Path) -> Path:
    return copy_workflow(tmp_path / "repo")


def snakemake(cwd: Path, *args: str, check: bool = True, timeout: float = 900) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONPATH=str(cwd / "src"))
    proc = subprocess.run(
        [SNAKEMAKE, *args], cwd=cwd, capture_output=True, text=True, timeout=timeout, env=env
    )
    if check and proc.returncode != 0:
        raise AssertionError(f"snakemake {' '.join(args)} failed:\n{proc.stdout[-4000:]}\n{proc.stderr[-4000:]}")
    return proc


def planned_jobs(cwd: Path, *targets: str, config: tuple[str, ...] = ()) -> dict[str, int]:
    """The job counts per rule of a dry run (Snakemake's own 'Job stats' table)."""
    args = ["-n", *targets]
    if config:
        args += ["--config", *config]
    out = snakemake(cwd, *args).stdout
    if "Nothing to be done" in out:
        return {}
    table = out.split("Job stats:")[1].split("total")[0]
    return {m.group(1): int(m.group(2)) for m in re.finditer(r"^(\S+)\s+(\d+)\s*$", table, re.M)}
