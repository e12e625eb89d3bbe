"""Sources locked on first fetch: config/sources.lock.yaml, written by a file's first download and checked by
every later one.

Some sources publish no checksum (a Hugging Face dataset, SNAP's Amazon files, a ChEMBL release). For these the
registry (config/sources.yaml) says ``lock: on-first-fetch``: the first fetch records what the server delivered
(for a Hugging Face repository, the commit its revision resolved to; for every file, the address, size and
sha256) and every later fetch, on any machine, must deliver the same bytes. The values come from the server,
not from the project, and the download's log says so; committing the lock file makes them the project's pin.
A user can also pin by hand (an entry with ``origin: by hand``, or a ``hash:`` in the registry, which takes
precedence) or place files under resources/ and check or record them (:func:`verify_file`,
``tools/verify_sources.py``).

Lock file layout::

    revisions:            # Hugging Face repository -> the commit its configured revision resolved to
      synetune/bbo-pile: {revision: main, commit: 0123abcd..., recorded: 2026-12-01T22:10:00Z}
    files:                # path under resources/ -> what was fetched
      bbo_pile/bbo-pile/data.jsonl: {url: https://..., size: 123, sha256: ..., recorded: ..., origin: server}

Writers hold an exclusive lock on a sidecar file (``<lock>.lock``), so parallel download jobs do not lose each
other's entries, and replace the file atomically.
"""

from __future__ import annotations

import datetime
import fcntl
import logging
import re
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import requests
import yaml

from neurips26.common.download import DownloadError, fetch, file_hash
from neurips26.common.io import atomic_path
from neurips26.common.sources import HUGGINGFACE, LOCK, Source, huggingface_url

log = logging.getLogger("neurips26.download")

HEADER = """\
# Sources locked on first fetch (config/sources.yaml: `lock: on-first-fetch`), written by the download rule
# (neurips26.common.locking). Each value was recorded from what a server delivered on a first fetch (origin:
# server), from a file placed under resources/ (origin: local file) or by hand (origin: by hand); none comes from
# a publisher's checksum. Every later fetch is checked against it. Commit this file: it is the project's pin.
"""
ORIGINS = ("server", "local file", "by hand")
API_TIMEOUT = 30.0
API_ATTEMPTS = 3

__all__ = ["LOCK", "fetch_source", "read_lock", "resolve_revision", "verify_file"]


def _now() -> str:
    return datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def read_lock(path: str | Path = LOCK) -> dict:
    """The lock's `revisions` and `files` (both empty when the file does not exist); ValueError naming an entry
    that lacks sha256 (64 lowercase hex digits, no algorithm prefix), size or a known origin."""
    path = Path(path)
    data = (yaml.safe_load(path.read_text()) if path.exists() else None) or {}
    unknown = set(data) - {"revisions", "files"}
    if unknown:
        raise ValueError(f"{path}: unknown sections {sorted(unknown)} (expected revisions, files)")
    lock = {"revisions": data.get("revisions") or {}, "files": data.get("files") or {}}
    for name, entry in lock["files"].items():
        missing = {"sha256", "size", "origin"} - set(entry)
        if missing or entry["origin"] not in ORIGINS:
            raise ValueError(f"{path}: the entry of {name} needs sha256, size and an origin in {ORIGINS}: {entry}")
        if not re.fullmatch(r"[0-9a-f]{64}", str(entry["sha256"])):
            raise ValueError(f"{path}: the sha256 of {name} must be 64 lowercase hex digits, got {entry['sha256']!r}")
    return lock


@contextmanager
def _exclusive(path: Path) -> Iterator[dict]:
    """The lock's content, held exclusively; whatever the block leaves in it is written back atomically."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path.parent / f"{path.name}.lock", "w") as guard:
        fcntl.flock(guard, fcntl.LOCK_EX)
        try:
            lock = read_lock(path)
            yield lock
            text = HEADER + yaml.safe_dump(
                {"revisions": dict(sorted(lock["revisions"].items())), "files": dict(sorted(lock["files"].items()))},
                sort_keys=False,
                width=120,
            )
            with atomic_path(path) as tmp:
                tmp.write_text(text)
        finally:
            fcntl.flock(guard, fcntl.LOCK_UN)


def resolve_revision(endpoint: str, hub: dict, revision: str) -> tuple[str, dict[str, dict]]:
    """Ask the hub (``GET <endpoint>/api/<type>s/<repo>/revision/<revision>?blobs=true``) for the commit a
    revision names and its files: (commit, {path: {"size": bytes, "sha256": LFS sha256 or None}})."""
    kind = hub.get("type", "dataset")
    url = f"{endpoint.rstrip('/')}/api/{kind}s/{hub['repo']}/revision/{revision}"
    for attempt in range(1, API_ATTEMPTS + 1):  # the hub answers 429 and 5xx under load: retried like downloads
        try:
            response = requests.get(url, params={"blobs": "true"}, timeout=API_TIMEOUT)
            retry = response.status_code >= 500 or response.status_code == 429
            if not retry or attempt == API_ATTEMPTS:
                response.raise_for_status()
                info = response.json()
                break
        except requests.ConnectionError as error:
            if attempt == API_ATTEMPTS:
                raise DownloadError(f"could not resolve {hub['repo']}@{revision} at {url}: {error}") from error
        except (requests.RequestException, ValueError) as error:
            raise DownloadError(f"could not resolve {hub['repo']}@{revision} at {url}: {error}") from error
        time.sleep(min(0.25 * 2 ** (attempt - 1), 2.0))
    if not isinstance(info, dict) or not isinstance(info.get("sha"), str) or "siblings" not in info:
        raise DownloadError(f"{url} answered without a commit sha and a file list: {str(info)[:200]}")
    listing = {
        sibling["rfilename"]: {"size": sibling.get("size"), "sha256": (sibling.get("lfs") or {}).get("sha256")}
        for sibling in info["siblings"]
    }
    return info["sha"], listing


def _hub_commit(source: Source, endpoint: str, lock_path: Path) -> str:
    """The commit of the source's repository: from the lock, or resolved now and recorded (under the lock, so
    parallel first fetches of one repository agree on it)."""
    hub = source.huggingface
    revision = hub.get("revision", "main")
    with _exclusive(lock_path) as lock:
        entry = lock["revisions"].get(hub["repo"])
        if entry is not None:
            if entry.get("revision") != revision:
                raise DownloadError(
                    f"{hub['repo']}: config/sources.yaml names revision {revision!r}, the lock ({lock_path}) commit "
                    f"{entry['commit']} of revision {entry.get('revision')!r}. To move to the new revision, delete the"
                    f" repository's entry under `revisions` and every entry of its files under `files`"
                )
            return entry["commit"]
        commit, _ = resolve_revision(endpoint, hub, revision)
        lock["revisions"][hub["repo"]] = {"revision": revision, "commit": commit, "recorded": _now()}
        log.warning(
            "%s: revision %s resolved to commit %s by the server (recorded in %s)",
            hub["repo"],
            revision,
            commit,
            lock_path,
        )
        return commit


def _mismatch(source: Source, error: DownloadError, lock_path: Path) -> DownloadError:
    return DownloadError(
        f"resources/{source.path} does not match its lock ({lock_path}): {error}. If the source changed on purpose,"
        " delete the file's entry from the lock to record the new content (and say so in the commit)"
    )


def fetch_source(source: Source, dest: str | Path, lock_path: str | Path = LOCK, mirror: str | None = None) -> Path:
    """Download `source` to `dest` (a file path) and check it: against its pinned hash (which takes precedence
    over a lock entry), or against its lock entry, or, on a first fetch, record what arrived in the lock.
    `mirror` (config `mirrors:`, ending in "/") replaces the host: the file is fetched from mirror + file name,
    or, for a Hugging Face folder, the mirror stands in for the hub's endpoint. DownloadError names the file, the
    expected and the actual hash on a mismatch; nothing is left at `dest` then and the lock is unchanged."""
    source.check_fetchable()
    dest, lock_path = Path(dest), Path(lock_path)
    hub = source.huggingface
    endpoint = mirror if hub is not None and mirror else HUGGINGFACE
    url = mirror + source.name if hub is None and mirror else None
    entry = read_lock(lock_path)["files"].get(source.path)
    if source.known_hash is not None:  # pinned: the registry's hash decides; a disagreeing lock entry is stale
        if hub is not None and url is None:
            url = huggingface_url(endpoint, hub, hub.get("revision", "main"), source.name)
        out = fetch(url or source.url, source.known_hash, dest.parent, fname=dest.name)
        if entry is not None and file_hash(out) != entry["sha256"]:
            log.warning("resources/%s: its lock entry (%s) is stale: the pinned hash decides", source.path, lock_path)
        return out
    if entry is None:
        return _first_fetch(source, dest, lock_path, url, endpoint)
    if hub is not None and url is None:
        commit = _hub_commit(source, endpoint, lock_path)
        if entry.get("commit") not in (None, commit):
            raise DownloadError(
                f"resources/{source.path} was locked at commit {entry['commit']} of {hub['repo']}, the repository's"
                f" recorded commit is {commit} ({lock_path}): delete the file's entry too, or restore the commit"
            )
        url = huggingface_url(endpoint, hub, commit, source.name)
    try:  # the registry's address (a moved url is corrected there), the lock's hash
        return fetch(url or source.url, f"sha256:{entry['sha256']}", dest.parent, fname=dest.name)
    except DownloadError as error:
        if "hash mismatch" not in str(error):
            raise
        raise _mismatch(source, error, lock_path) from error


def _first_fetch(source: Source, dest: Path, lock_path: Path, url: str | None, endpoint: str) -> Path:
    if dest.exists():  # a file placed by hand: check or record it, never relabel it as the server's
        raise DownloadError(
            f"{dest} exists but resources/{source.path} has no lock entry: record it with"
            " tools/verify_sources.py --record, or delete it to fetch it"
        )
    hub, stated = source.huggingface, None
    record: dict = {}
    if hub is not None:
        commit = _hub_commit(source, endpoint, lock_path)
        _, listing = resolve_revision(endpoint, hub, commit)
        if source.name not in listing:
            shown = ", ".join(sorted(listing)[:20]) + (" ..." if len(listing) > 20 else "")
            raise DownloadError(
                f"{hub['repo']} at commit {commit} has no file {source.name} (set its path in the repository as"
                f" `remote:` in config/sources.yaml); the repository holds: {shown}"
            )
        stated = listing[source.name]
        url = url or huggingface_url(endpoint, hub, commit, source.name)
        record = {"url": huggingface_url(HUGGINGFACE, hub, commit, source.name), "commit": commit}
    address = url or source.url
    expected = f"sha256:{stated['sha256']}" if stated and stated.get("sha256") else None
    out = fetch(address, expected, dest.parent, fname=dest.name)
    try:  # from here on, a file without its lock entry must not stay behind
        size, sha256 = out.stat().st_size, file_hash(out)
        if stated and stated.get("size") not in (None, size):
            raise DownloadError(f"resources/{source.path}: the server stated {stated['size']} bytes, {size} arrived")
        with _exclusive(lock_path) as lock:
            if source.path in lock["files"] and lock["files"][source.path]["sha256"] != sha256:
                raise DownloadError(
                    f"resources/{source.path}: another job locked sha256 {lock['files'][source.path]['sha256']}"
                    f" while this one fetched {sha256}"
                )
            lock["files"][source.path] = {
                "url": record.get("url", source.url),
                **({"commit": record["commit"]} if "commit" in record else {}),
                **({"via": address} if address != record.get("url", source.url) else {}),  # a mirror
                "size": size,
                "sha256": sha256,
                "recorded": _now(),
                "origin": "server",
            }
    except BaseException:
        out.unlink(missing_ok=True)
        raise
    log.warning(
        "resources/%s locked on first fetch: sha256 %s, %d bytes, from %s. These values come from the server, not"
        " from the project (%s); commit %s to make them the pin every later fetch is checked against",
        source.path,
        sha256,
        size,
        address,
        "the server's own LFS sha256 matched" if expected else "the server states no checksum",
        lock_path,
    )
    return out


def verify_file(source: Source, path: str | Path, lock_path: str | Path = LOCK, record: bool = False) -> str:
    """Check a file placed under resources/ by hand: against its pinned hash or its lock entry. Without either,
    record it in the lock (``origin: local file``) when `record`, else report it unchecked. Returns what was
    done ("pinned", "locked", "recorded", "unchecked"); ValueError naming file, expected and actual on a
    mismatch."""
    path, lock_path = Path(path), Path(lock_path)
    if source.known_hash is not None:
        alg, _, expected = source.known_hash.partition(":")
        actual = file_hash(path, alg)
        if actual != expected:
            raise ValueError(f"resources/{source.path}: expected {source.known_hash}, got {alg}:{actual}")
        return "pinned"
    entry = read_lock(lock_path)["files"].get(source.path)
    actual = file_hash(path)
    if entry is not None:
        if actual != entry["sha256"]:
            raise ValueError(
                f"resources/{source.path}: expected sha256:{entry['sha256']} ({lock_path}), got sha256:{actual}"
            )
        return "locked"
    if not record:
        return "unchecked"
    with _exclusive(lock_path) as lock:
        if source.path in lock["files"]:  # a download job recorded it in the meantime: check against that
            if lock["files"][source.path]["sha256"] != actual:
                raise ValueError(
                    f"resources/{source.path}: expected sha256:{lock['files'][source.path]['sha256']} ({lock_path}),"
                    f" got sha256:{actual}"
                )
            return "locked"
        lock["files"][source.path] = {
            "url": source.url,
            "size": path.stat().st_size,
            "sha256": actual,
            "recorded": _now(),
            "origin": "local file",
        }
    return "recorded"
