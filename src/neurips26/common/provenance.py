"""Where a result came from: git commit, config hash, seed, package versions."""

from __future__ import annotations

import hashlib
import json
import platform
import subprocess
from functools import lru_cache
from importlib import metadata
from pathlib import Path

PACKAGES = ("numpy", "scipy", "pandas", "pyarrow", "torch", "pot", "scikit-learn", "snakemake")


@lru_cache(maxsize=1)
def git_commit(repo: str | Path | None = None) -> str:
    """The commit of the working tree, with '-dirty' when it has uncommitted changes."""
    cwd = str(repo or Path(__file__).resolve().parents[3])
    try:
        commit = subprocess.run(
            ["git", "rev-parse", "HEAD"], cwd=cwd, capture_output=True, text=True, timeout=10
        ).stdout.strip()
        dirty = subprocess.run(
            ["git", "status", "--porcelain", "--untracked-files=no"],
            cwd=cwd,
            capture_output=True,
            text=True,
            timeout=10,
        ).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return "unknown"
    if not commit:
        return "unknown"
    return commit + ("-dirty" if dirty else "")


def config_hash(block: dict) -> str:
    """A short, order-independent hash of a config block."""
    text = json.dumps(block, sort_keys=True, default=str)
    return hashlib.sha256(text.encode()).hexdigest()[:12]


def package_versions(names: tuple[str, ...] = PACKAGES) -> dict[str, str]:
    versions = {"python": platform.python_version()}
    for name in names:
        try:
            versions[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            versions[name] = "absent"
    return versions


def provenance(config_block: dict, seed: int | None) -> dict:
    return {
        "git_commit": git_commit(),
        "config_hash": config_hash(config_block),
        "seed": seed,
        "packages": package_versions(),
    }


def provenance_line(prov: dict) -> str:
    """One Markdown line that says how a table was made."""
    packages = ", ".join(f"{k} {v}" for k, v in prov["packages"].items())
    return (
        f"_Provenance: commit `{prov['git_commit']}`, config hash `{prov['config_hash']}`, "
        f"seed {prov['seed']}; {packages}._"
    )
