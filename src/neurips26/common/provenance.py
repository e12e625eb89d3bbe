"""Where a result came from: git commit, config hash, seed, and the versions of python, snakemake and every
package the job imported."""

from __future__ import annotations

import hashlib
import inspect
import json
import platform
import subprocess
import sys
from functools import lru_cache
from importlib import metadata
from pathlib import Path

PROJECT = "neurips26"  # the project's own distribution: its code is named by the git commit, not a version
ALWAYS = ("snakemake",)  # recorded even when a job (or a test) has not imported it


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


def _header(dist: metadata.Distribution) -> tuple[str, str]:
    """(Name, Version) from the head of a distribution's METADATA: parsing all of it, as `dist.metadata` does,
    costs half a second for a full environment."""
    fields: dict[str, str] = {}
    for line in (dist.read_text("METADATA") or dist.read_text("PKG-INFO") or "").splitlines():
        if not line:
            break
        key, _, value = line.partition(":")
        if key in ("Name", "Version"):
            fields.setdefault(key, value.strip())
    return fields.get("Name", ""), fields.get("Version", "absent")


def _top_level(dist: metadata.Distribution) -> set[str]:
    """The top-level modules a distribution installs: its top_level.txt, else the first part of each path in
    its RECORD, as importlib.metadata.packages_distributions() of Python 3.12 infers them (compiled modules
    included), without building a PackagePath per file, which takes seconds for a full environment."""
    declared = dist.read_text("top_level.txt")
    if declared:
        return set(declared.split())
    names = set()
    for line in (dist.read_text("RECORD") or "").splitlines():
        path = line.rsplit(",", 2)[0]
        top, _, rest = path.partition("/")
        names.add(top if rest else inspect.getmodulename(top) or top)
    return {name for name in names if name.isidentifier() and name != "__pycache__"}


@lru_cache(maxsize=1)
def _module_owners() -> dict[str, dict[str, str]]:
    """Top-level module -> {distribution: version} of the distributions that install it (read once per process)."""
    owners: dict[str, dict[str, str]] = {}
    for dist in metadata.distributions():
        name, version = _header(dist)
        for module in _top_level(dist):
            owners.setdefault(module, {}).setdefault(name, version)
    return owners


def imported_packages() -> dict[str, str]:
    """{distribution: version} of every distribution whose top-level modules are in sys.modules now (the
    standard library and the project excluded)."""
    top_level = {name.partition(".")[0] for name in list(sys.modules)} - set(sys.stdlib_module_names)
    owners = _module_owners()
    found = {dist: version for module in top_level for dist, version in owners.get(module, {}).items()}
    found.pop(PROJECT, None)
    return found


def package_versions() -> dict[str, str]:
    """Python's version, then snakemake's and that of every distribution the process has imported so far,
    sorted by name."""
    versions = imported_packages()
    for name in ALWAYS:
        if name not in versions:
            try:
                versions[name] = metadata.version(name)
            except metadata.PackageNotFoundError:
                versions[name] = "absent"
    return {"python": platform.python_version(), **dict(sorted(versions.items(), key=lambda item: item[0].lower()))}


def provenance(config_block: dict, seed: int | None) -> dict:
    """Commit, config hash, seed and package versions; take it when the job has imported what it uses (as a
    table is written), so that the versions name every package the result depends on."""
    return {
        "git_commit": git_commit(),
        "config_hash": config_hash(config_block),
        "seed": seed,
        "packages": package_versions(),
    }


def provenance_line(prov: dict) -> str:
    """One Markdown line that says how a table was made (packages as name==version)."""
    packages = ", ".join(f"{k}=={v}" for k, v in prov["packages"].items())
    return (
        f"_Provenance: commit `{prov['git_commit']}`, config hash `{prov['config_hash']}`, "
        f"seed {prov['seed']}; {packages}._"
    )
