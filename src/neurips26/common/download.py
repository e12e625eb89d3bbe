"""The project's single download helper: hash-checked fetches (pooch) and safe archive extraction."""

from __future__ import annotations

import logging
import os
import posixpath
import re
import tarfile
import time
import zipfile
from http import HTTPStatus
from pathlib import Path, PurePosixPath, PureWindowsPath
from typing import Any
from urllib.parse import unquote, urlparse

import pooch
import requests

log = logging.getLogger("neurips26.download")

_HASH_RE = re.compile(r"^(md5|sha1|sha256):([0-9a-fA-F]+)$")
_HASH_LEN = {"md5": 32, "sha1": 40, "sha256": 64}
_TAR_SUFFIXES = (".tar", ".tar.gz", ".tgz", ".tar.xz")
_MAX_BACKOFF_S = 1.0


class DownloadError(RuntimeError):
    """A download failed for good (after retries), or its hash did not match."""


class UnsafeArchiveError(ValueError):
    """An archive member would land outside the destination, or is a device/fifo."""


def file_hash(path: str | Path, alg: str = "sha256") -> str:
    """Hex digest of `path` with `alg` (md5, sha1, sha256)."""
    return pooch.file_hash(str(path), alg=alg)


def md5sum(path: str | Path) -> str:
    """Hex MD5 digest of `path`."""
    return file_hash(path, "md5")


def _parse_hash(known_hash: object) -> tuple[str, str]:
    m = _HASH_RE.match(known_hash) if isinstance(known_hash, str) else None
    if m is None or len(m[2]) != _HASH_LEN[m[1]]:
        raise ValueError(f"known_hash must look like '<md5|sha1|sha256>:<hex digest>', got {known_hash!r}")
    return m[1], m[2].lower()


class _Downloader:
    """Wraps pooch's HTTPDownloader to log, remember its temp files and hash what it fetched."""

    def __init__(self, timeout: float, alg: str, attempt: str) -> None:
        self._http = pooch.HTTPDownloader(timeout=timeout, progressbar=False)
        self._alg, self._attempt = alg, attempt
        self.tmp_files: list[str] = []
        self.actual: str | None = None

    def __call__(self, url: str, output_file: Any, pup: Any, check_only: bool = False) -> Any:
        if isinstance(output_file, (str, os.PathLike)):
            self.tmp_files.append(os.fspath(output_file))
        log.info("downloading %s (attempt %s)", url, self._attempt)
        result = self._http(url, output_file, pup, check_only=check_only)
        if self.tmp_files:
            self.actual = file_hash(self.tmp_files[-1], self._alg)
        return result

    def cleanup(self) -> None:
        for tmp in self.tmp_files:
            Path(tmp).unlink(missing_ok=True)


def _describe(exc: BaseException, timeout: float) -> str:
    if isinstance(exc, requests.HTTPError) and exc.response is not None:
        code = exc.response.status_code
        try:
            return f"HTTP {code} {HTTPStatus(code).phrase}"
        except ValueError:
            return f"HTTP {code} {exc.response.reason}"
    if isinstance(exc, requests.Timeout):
        return f"timed out (timeout={timeout}s): {exc}"
    if "connection refused" in str(exc).lower():
        return "connection refused"
    return f"{type(exc).__name__}: {exc}"


def _retryable(exc: requests.RequestException) -> bool:
    if isinstance(exc, requests.HTTPError) and exc.response is not None:
        code = exc.response.status_code
        return code >= 500 or code in (408, 429)
    return True  # connection errors, timeouts, broken streams


def fetch(
    url: str,
    known_hash: str | None,
    dest_dir: str | Path,
    fname: str | None = None,
    retries: int = 3,
    timeout: float = 30.0,
) -> Path:
    """Download `url` to `dest_dir/fname` unless a file with `known_hash` is already there.

    Retries connection errors, timeouts and HTTP 5xx/408/429 up to `retries` attempts in all;
    raises DownloadError when they run out or the hash does not match (nothing is left behind).
    `known_hash=None` only for the first fetch of a source locked on first fetch (neurips26.common.locking),
    which records the sha256 of what arrived.
    """
    alg, expected = _parse_hash(known_hash) if known_hash is not None else ("sha256", None)
    if retries < 1:
        raise ValueError(f"retries must be >= 1, got {retries!r}")
    fname = fname or posixpath.basename(unquote(urlparse(url).path))
    if not fname:
        raise ValueError(f"cannot derive a file name from url {url!r}; pass fname")
    dest = Path(dest_dir).expanduser()
    target = dest.resolve() / fname

    last: requests.RequestException | None = None
    attempt = 0
    for attempt in range(1, retries + 1):
        dl = _Downloader(timeout, alg, f"{attempt}/{retries}")
        try:
            out = Path(pooch.retrieve(url, known_hash=known_hash, fname=fname, path=dest, downloader=dl))
        except requests.RequestException as exc:
            dl.cleanup()
            last = exc
            if not _retryable(exc) or attempt == retries:
                break
            wait = min(0.25 * 2 ** (attempt - 1), _MAX_BACKOFF_S)
            log.warning("download of %s failed (%s); retrying in %.2fs", url, _describe(exc, timeout), wait)
            time.sleep(wait)
            continue
        except ValueError as exc:
            dl.cleanup()
            if dl.actual is None or dl.actual == expected:
                raise
            target.unlink(missing_ok=True)  # a stale copy that pooch meant to replace
            raise DownloadError(
                f"hash mismatch for {fname} from {url}: expected {known_hash}, "
                f"got {alg}:{dl.actual}; the download was discarded"
            ) from exc
        except BaseException:
            dl.cleanup()
            raise
        if dl.tmp_files:
            log.info("downloaded %s -> %s (%d bytes)", url, out, out.stat().st_size)
        else:
            log.debug("using cached %s", out)
        return out
    assert last is not None
    raise DownloadError(f"failed to download {url} after {attempt} attempt(s): {_describe(last, timeout)}") from last


# --------------------------------------------------------------------------- extraction


def _is_absolute(name: str) -> bool:
    return name.startswith(("/", "\\")) or bool(PureWindowsPath(name).drive)


def _resolve(path: str, links: dict[str, str], depth: int = 0) -> list[str] | None:
    """Parts of `path` (relative to the destination) after following the archive's own
    symlinks, or None if it would leave the destination at any step."""
    parts: list[str] = []
    for comp in path.split("/"):
        if comp in ("", "."):
            continue
        if comp == "..":
            if not parts:
                return None
            parts.pop()
            continue
        parts.append(comp)
        target = links.get("/".join(parts))
        if target is not None:
            if depth > 32 or _is_absolute(target):
                return None
            resolved = _resolve("/".join([*parts[:-1], target]), links, depth + 1)
            if resolved is None:
                return None
            parts = resolved
    return parts


def _archive_kind(archive: Path) -> str:
    name = archive.name.lower()
    if name.endswith(_TAR_SUFFIXES):
        return "tar"
    if name.endswith(".zip"):
        return "zip"
    raise ValueError(f"unknown archive type for {archive} (want {', '.join(_TAR_SUFFIXES)} or .zip)")


def _check_tar(archive: Path, members: list[tarfile.TarInfo]) -> None:
    def refuse(m: tarfile.TarInfo, why: str) -> UnsafeArchiveError:
        return UnsafeArchiveError(f"refusing to extract {archive}: member {m.name!r} {why}")

    links = {posixpath.normpath(m.name): m.linkname for m in members if m.issym()}
    for m in members:
        if _is_absolute(m.name):
            raise refuse(m, "has an absolute path")
        if m.isdev():
            raise refuse(m, "is a device or fifo")
        if m.issym() and (
            _is_absolute(m.linkname) or _resolve(posixpath.join(posixpath.dirname(m.name), m.linkname), links) is None
        ):
            raise refuse(m, f"is a symlink to {m.linkname!r}, outside the destination")
        if m.islnk() and (_is_absolute(m.linkname) or _resolve(m.linkname, links) is None):
            raise refuse(m, f"is a hardlink to {m.linkname!r}, outside the destination")
        if _resolve(m.name, links) is None:
            raise refuse(m, "would be written outside the destination")


def _check_zip(archive: Path, names: list[str]) -> None:
    for name in names:
        if _is_absolute(name):
            raise UnsafeArchiveError(f"refusing to extract {archive}: member {name!r} has an absolute path")
        if _resolve(name, {}) is None:
            raise UnsafeArchiveError(
                f"refusing to extract {archive}: member {name!r} would be written outside the destination"
            )


def safe_extract(archive: str | Path, dest_dir: str | Path) -> list[Path]:
    """Extract a .tar/.tar.gz/.tgz/.tar.xz/.zip into `dest_dir` and return the extracted files.

    Every member is checked first; an unsafe one raises UnsafeArchiveError and nothing is written.
    """
    archive, dest = Path(archive), Path(dest_dir)
    kind = _archive_kind(archive)
    log.info("extracting %s -> %s", archive, dest)
    if kind == "tar":
        with tarfile.open(archive, "r:*") as tar:
            members = tar.getmembers()
            _check_tar(archive, members)
            dest.mkdir(parents=True, exist_ok=True)
            tar.extractall(dest, members=members, filter="data")
        names = [m.name for m in members if not m.isdir()]
    else:
        with zipfile.ZipFile(archive) as zf:
            infos = zf.infolist()
            _check_zip(archive, [i.filename for i in infos])
            dest.mkdir(parents=True, exist_ok=True)
            zf.extractall(dest)
        names = [i.filename for i in infos if not i.is_dir()]
    files = list(dict.fromkeys(dest / PurePosixPath(posixpath.normpath(n)) for n in names))
    log.info("extracted %d file(s) from %s", len(files), archive)
    return files
