"""The registry of sources (config/sources.yaml): every file a run downloads, its url and how it is checked.

A file is named by its path under resources/ (``mnist/train-images-idx3-ubyte.gz``): its folder is a registry
entry, its name one of the entry's `files` or a match of its `pattern`. The one download rule
(rules/download.smk) asks :func:`lookup` for a file's url and hash. A file is checked in one of two ways:
- pinned: the registry holds its hash (``hash:``, from the publisher or a verified fetch);
- locked on first fetch (``lock: on-first-fetch``): no hash is published, so the first fetch records the
  revision, size and sha256 the server delivered in config/sources.lock.yaml (:mod:`.locking`), and every later
  fetch is checked against that record. Hugging Face folders (``huggingface:``) are fetched at a commit.
A file that is neither carries the registry's reason (``unpinned:``), and the rule refuses it before any job.

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
HUGGINGFACE = "https://huggingface.co/"  # the hub's endpoint (a folder's mirror replaces it)
LOCK = ROOT / "config" / "sources.lock.yaml"  # what first fetches recorded (neurips26.common.locking)

__all__ = [
    "HUGGINGFACE",
    "LOCK",
    "REGISTRY",
    "SCHEMA",
    "Source",
    "files",
    "huggingface_url",
    "is_fetchable",
    "is_pinned",
    "lookup",
    "path_pattern",
    "read_registry",
]


@dataclass(frozen=True)
class Source:
    """One downloadable file: where it lands under resources/, where it comes from, and how it is checked: its
    pinned hash (``<md5|sha1|sha256>:<hex>``), or `lock` (locked on first fetch), or neither, with `unpinned`, the
    registry's reason. `huggingface` is ``{repo, type, revision}`` for a file of a Hugging Face repository (its
    `url` then names the registry's revision; the fetch uses the commit it resolves to). `size` in bytes where the
    registry states it."""

    path: str
    url: str
    known_hash: str | None
    unpinned: str | None
    runtime: int
    lock: bool = False
    huggingface: dict | None = None
    size: int | None = None
    remote: str | None = None

    @property
    def name(self) -> str:
        """The file's path inside its Hugging Face repository (`remote:` in the registry, default: its name)."""
        return self.remote or self.path.rpartition("/")[2]

    def check_fetchable(self) -> None:
        """ValueError with the registry's reason when the file is neither pinned nor locked on first fetch."""
        if self.known_hash is None and not self.lock:
            raise ValueError(f"resources/{self.path} has no pinned hash in config/sources.yaml: {self.unpinned}")

    def checked_hash(self) -> str | None:
        """The pinned hash (None for a file locked on first fetch); ValueError with the registry's reason when
        the file is neither."""
        self.check_fetchable()
        return self.known_hash


def read_registry(path: str | Path = REGISTRY) -> dict[str, dict]:
    """The registry's folders, with the check its schema cannot express: a file that names no url of its own
    needs its folder's (ValueError naming them)."""
    with open(path) as handle:
        data = yaml.load(handle, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader)) or {}
    for folder, entry in data.items():
        bare = [name for name, spec in entry.get("files", {}).items() if "url" not in spec]
        if bare and "url" not in entry and "huggingface" not in entry:
            raise ValueError(f"invalid config in {path}:\n  {folder}: {bare} name no url and the folder has none")
        unchecked = [
            name
            for name, spec in entry.get("files", {}).items()
            if not {"hash", "lock", "unpinned"} & (set(spec) | set(entry))
        ]
        if unchecked:
            raise ValueError(
                f"invalid config in {path}:\n  {folder}: {unchecked} have no hash, no lock and no reason why not"
            )
    return data


@lru_cache(maxsize=4)
def _registry(path: str) -> dict[str, dict]:
    return read_registry(path)


def huggingface_url(endpoint: str, hub: dict, revision: str, name: str) -> str:
    """The hub's resolve address of file `name` of repository `hub` at `revision` (a branch, tag or commit)."""
    kind = {"dataset": "datasets/", "model": "", "space": "spaces/"}[hub.get("type", "dataset")]
    return f"{endpoint.rstrip('/')}/{kind}{hub['repo']}/resolve/{revision}/{name}"


def _source(folder: str, entry: dict, name: str, spec: dict) -> Source:
    hub = entry.get("huggingface")
    if hub is not None:
        url = huggingface_url(HUGGINGFACE, hub, hub.get("revision", "main"), spec.get("remote", name))
    else:
        url = spec.get("url", entry.get("url", "") + name)
    return Source(
        path=f"{folder}/{name}",
        url=url,
        known_hash=spec.get("hash"),
        unpinned=spec.get("unpinned", entry.get("unpinned")),
        runtime=entry.get("runtime", DEFAULT_RUNTIME),
        lock=spec.get("lock", entry.get("lock")) == "on-first-fetch" and "hash" not in spec,
        huggingface=hub,
        size=spec.get("size", entry.get("size")),
        remote=spec.get("remote"),
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
    """True when resources/`path` is registered with a pinned hash."""
    try:
        return lookup(path, registry).known_hash is not None
    except KeyError:
        return False


def is_fetchable(path: str, registry: str | Path = REGISTRY) -> bool:
    """True when resources/`path` can be downloaded and checked: pinned, or locked on first fetch."""
    try:
        source = lookup(path, registry)
    except KeyError:
        return False
    return source.known_hash is not None or source.lock


def path_pattern(registry: str | Path = REGISTRY) -> str:
    """A regular expression matching exactly the registered paths (the download rule's wildcard constraint)."""
    alternatives = []
    for folder, entry in _registry(str(registry)).items():
        names = entry.get("pattern") or "|".join(re.escape(name) for name in entry["files"])
        alternatives.append(f"{re.escape(folder)}/(?:{names})")
    return "|".join(alternatives)
