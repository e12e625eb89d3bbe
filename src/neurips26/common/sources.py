"""The registry of pinned sources (config/sources.yaml): every file a run downloads, its url and its hash.

A file is named by its path under resources/ (``mnist/train-images-idx3-ubyte.gz``): its folder is a registry
entry, its name one of the entry's `files` or a match of its `pattern`. The one download rule
(rules/common.smk) asks :func:`lookup` for a file's url and hash; a file without a pinned hash carries the
registry's reason, and the rule refuses it with that reason before any job.

The workflow validates the registry against workflow/schemas/sources.schema.yaml when it is parsed; this module
only reads it (with PyYAML, which every environment has: paper libraries that ask :func:`is_pinned` run in
environments without jsonschema).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[3]
REGISTRY = ROOT / "config" / "sources.yaml"
SCHEMA = ROOT / "workflow" / "schemas" / "sources.schema.yaml"
DEFAULT_RUNTIME = 60  # minutes one download may take unless the registry says otherwise

__all__ = ["REGISTRY", "SCHEMA", "Source", "files", "is_pinned", "lookup", "path_pattern", "read_registry"]


@dataclass(frozen=True)
class Source:
    """One downloadable file: where it lands under resources/, where it comes from, and its pinned hash
    (``<md5|sha1|sha256>:<hex>``), or `unpinned`, the registry's reason why there is none."""

    path: str
    url: str
    known_hash: str | None
    unpinned: str | None
    runtime: int

    def checked_hash(self) -> str:
        """The pinned hash; ValueError with the registry's reason when none is pinned."""
        if self.known_hash is None:
            raise ValueError(f"resources/{self.path} has no pinned hash in config/sources.yaml: {self.unpinned}")
        return self.known_hash


def read_registry(path: str | Path = REGISTRY) -> dict[str, dict]:
    """The registry's folders, with the check its schema cannot express: a file that names no url of its own
    needs its folder's (ValueError naming them)."""
    with open(path) as handle:
        data = yaml.load(handle, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader)) or {}
    for folder, entry in data.items():
        bare = [name for name, spec in entry.get("files", {}).items() if "url" not in spec]
        if bare and "url" not in entry:
            raise ValueError(f"invalid config in {path}:\n  {folder}: {bare} name no url and the folder has none")
    return data


@lru_cache(maxsize=4)
def _registry(path: str) -> dict[str, dict]:
    return read_registry(path)


def _source(folder: str, entry: dict, name: str, spec: dict) -> Source:
    return Source(
        path=f"{folder}/{name}",
        url=spec.get("url", entry.get("url", "") + name),
        known_hash=spec.get("hash"),
        unpinned=spec.get("unpinned", entry.get("unpinned")),
        runtime=entry.get("runtime", DEFAULT_RUNTIME),
    )


def lookup(path: str, registry: str | Path = REGISTRY) -> Source:
    """The source of resources/`path`; KeyError when the registry has no such file."""
    folder, _, name = path.rpartition("/")
    entry = _registry(str(registry)).get(folder)
    if entry is not None:
        if name in entry.get("files", {}):
            return _source(folder, entry, name, entry["files"][name])
        if "pattern" in entry and re.fullmatch(entry["pattern"], name):
            return _source(folder, entry, name, {})
    raise KeyError(f"resources/{path} is not a registered source (config/sources.yaml)")


def files(folder: str, registry: str | Path = REGISTRY) -> list[str]:
    """The file names listed under `folder`, in the registry's order."""
    return list(_registry(str(registry))[folder].get("files", {}))


def is_pinned(path: str, registry: str | Path = REGISTRY) -> bool:
    """True when resources/`path` is registered with a hash (a download of it can be checked)."""
    try:
        return lookup(path, registry).known_hash is not None
    except KeyError:
        return False


def path_pattern(registry: str | Path = REGISTRY) -> str:
    """A regular expression matching exactly the registered paths (the download rule's wildcard constraint)."""
    alternatives = []
    for folder, entry in _registry(str(registry)).items():
        names = entry.get("pattern") or "|".join(re.escape(name) for name in entry["files"])
        alternatives.append(f"{re.escape(folder)}/(?:{names})")
    return "|".join(alternatives)
