"""Tests for neurips26.common.download; a local HTTP server stands in for the internet."""

from __future__ import annotations

import hashlib
import io
import socket
import tarfile
import threading
import time
import zipfile
from collections import Counter
from functools import partial
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from neurips26.common.download import (
    DownloadError,
    UnsafeArchiveError,
    fetch,
    file_hash,
    md5sum,
    safe_extract,
)

PAYLOAD = b"1 2 3\n4 5 6\n"
MD5 = "md5:" + hashlib.md5(PAYLOAD).hexdigest()
SHA256 = "sha256:" + hashlib.sha256(PAYLOAD).hexdigest()


class _Handler(SimpleHTTPRequestHandler):
    """Serves a directory, counts GETs per path, and answers /boom with a 500."""

    def do_GET(self) -> None:  # noqa: N802
        self.server.hits[self.path] += 1  # type: ignore[attr-defined]
        if self.path == "/boom":
            self.send_error(500)
            return
        super().do_GET()

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def server(tmp_path: Path):
    """(base_url, served_dir, hits) for a ThreadingHTTPServer on 127.0.0.1:<ephemeral>."""
    root = tmp_path / "srv"
    root.mkdir()
    (root / "data.txt").write_bytes(PAYLOAD)
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), partial(_Handler, directory=str(root)))
    httpd.hits = Counter()  # type: ignore[attr-defined]
    thread = threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}", root, httpd.hits  # type: ignore[attr-defined]
    finally:
        httpd.shutdown()
        httpd.server_close()
        thread.join(5)


# ----------------------------------------------------------------------------- fetch


@pytest.mark.parametrize("known_hash", [MD5, SHA256])
def test_good_file_downloads_once(server, tmp_path, known_hash):
    base, _, hits = server
    dest = tmp_path / "dl"
    path = fetch(f"{base}/data.txt", known_hash, dest)
    assert path == (dest / "data.txt").resolve()
    assert path.read_bytes() == PAYLOAD
    assert md5sum(path) == MD5.split(":")[1]
    assert file_hash(path) == SHA256.split(":")[1]
    assert hits["/data.txt"] == 1

    again = fetch(f"{base}/data.txt", known_hash, dest)
    assert again == path
    assert hits["/data.txt"] == 1  # served from the local copy
    assert sorted(p.name for p in dest.iterdir()) == ["data.txt"]


def test_custom_fname(server, tmp_path):
    base, _, _ = server
    path = fetch(f"{base}/data.txt", MD5, tmp_path / "dl", fname="renamed.txt")
    assert path.name == "renamed.txt" and path.read_bytes() == PAYLOAD


def test_hash_mismatch_leaves_nothing(server, tmp_path):
    base, _, hits = server
    dest = tmp_path / "dl"
    wrong = "md5:" + "0" * 32
    with pytest.raises(DownloadError) as err:
        fetch(f"{base}/data.txt", wrong, dest)
    msg = str(err.value)
    assert "data.txt" in msg
    assert wrong in msg
    assert MD5.split(":")[1] in msg
    assert not dest.exists() or list(dest.iterdir()) == []
    assert hits["/data.txt"] == 1  # a mismatch is not retried


def test_hash_mismatch_removes_stale_copy(server, tmp_path):
    base, _, _ = server
    dest = tmp_path / "dl"
    dest.mkdir()
    (dest / "data.txt").write_bytes(b"stale")
    with pytest.raises(DownloadError):
        fetch(f"{base}/data.txt", "sha256:" + "f" * 64, dest)
    assert list(dest.iterdir()) == []


@pytest.mark.timeout(30)
def test_404_raises_after_bounded_attempts(server, tmp_path):
    base, _, hits = server
    dest = tmp_path / "dl"
    start = time.monotonic()
    with pytest.raises(DownloadError) as err:
        fetch(f"{base}/missing.txt", MD5, dest, retries=2)
    assert time.monotonic() - start < 5
    msg = str(err.value)
    assert "404" in msg and f"{base}/missing.txt" in msg and "attempt" in msg
    assert 1 <= hits["/missing.txt"] <= 2
    assert not dest.exists() or list(dest.iterdir()) == []


@pytest.mark.timeout(30)
def test_500_is_retried(server, tmp_path):
    base, _, hits = server
    start = time.monotonic()
    with pytest.raises(DownloadError) as err:
        fetch(f"{base}/boom", MD5, tmp_path / "dl", retries=3)
    assert time.monotonic() - start < 5
    assert hits["/boom"] == 3
    msg = str(err.value)
    assert "500" in msg and "3 attempt" in msg


@pytest.mark.timeout(30)
def test_server_down(tmp_path):
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    url = f"http://127.0.0.1:{port}/data.txt"
    start = time.monotonic()
    with pytest.raises(DownloadError) as err:
        fetch(url, MD5, tmp_path / "dl", retries=2, timeout=2)
    assert time.monotonic() - start < 10
    msg = str(err.value)
    assert url in msg and "2 attempt" in msg and "refused" in msg.lower()


def test_no_known_hash_fetches_unchecked_for_the_caller_to_record(server, tmp_path):
    base, _, hits = server
    path = fetch(f"{base}/data.txt", None, tmp_path / "dl")  # a first fetch of a source locked on first fetch
    assert path.read_bytes() == PAYLOAD and file_hash(path) == SHA256.split(":")[1] and hits["/data.txt"] == 1


@pytest.mark.parametrize(
    "bad",
    [
        "",
        "d41d8cd98f00b204e9800998ecf8427e",
        "md5:xyz",
        "md5:" + "0" * 31,
        "crc32:" + "0" * 8,
        "sha256:" + "0" * 32,
    ],
)
def test_malformed_known_hash(tmp_path, bad):  # None is no hash at all: a first fetch of a locked source
    with pytest.raises(ValueError, match="known_hash"):
        fetch("http://127.0.0.1:9/data.txt", bad, tmp_path)  # type: ignore[arg-type]
    assert list(tmp_path.iterdir()) == []


# ----------------------------------------------------------------------------- safe_extract


def _tar(path: Path, members: list[tuple[tarfile.TarInfo, bytes | None]]) -> Path:
    with tarfile.open(path, "w:gz") as tar:
        for info, data in members:
            if data is not None:
                info.size = len(data)
            tar.addfile(info, io.BytesIO(data) if data is not None else None)
    return path


def _file(name: str, data: bytes = b"x") -> tuple[tarfile.TarInfo, bytes]:
    return tarfile.TarInfo(name), data


def _link(name: str, target: str, kind: bytes = tarfile.SYMTYPE) -> tuple[tarfile.TarInfo, None]:
    info = tarfile.TarInfo(name)
    info.type, info.linkname = kind, target
    return info, None


def _zip(path: Path, names: list[str]) -> Path:
    with zipfile.ZipFile(path, "w") as zf:
        for name in names:
            info = zipfile.ZipInfo("placeholder")
            info.filename = name  # bypass any sanitising on write
            zf.writestr(info, b"x")
    return path


def test_extract_good_tar(tmp_path):
    d = tarfile.TarInfo("pkg")
    d.type = tarfile.DIRTYPE
    archive = _tar(
        tmp_path / "good.tar.gz",
        [
            (d, None),
            _file("pkg/a.txt", b"aaa"),
            _file("./pkg/sub/b.txt", b"bb"),
            _link("pkg/link.txt", "a.txt"),
            _link("pkg/sub/up.txt", "../a.txt"),
        ],
    )
    dest = tmp_path / "out"
    files = safe_extract(archive, dest)
    assert sorted(p.relative_to(dest).as_posix() for p in files) == [
        "pkg/a.txt",
        "pkg/link.txt",
        "pkg/sub/b.txt",
        "pkg/sub/up.txt",
    ]
    assert (dest / "pkg/a.txt").read_bytes() == b"aaa"
    assert (dest / "pkg/sub/b.txt").read_bytes() == b"bb"
    assert (dest / "pkg/link.txt").read_bytes() == b"aaa"
    assert (dest / "pkg/sub/up.txt").read_bytes() == b"aaa"


def test_extract_good_zip(tmp_path):
    archive = tmp_path / "good.zip"
    with zipfile.ZipFile(archive, "w") as zf:
        zf.writestr("pkg/", b"")
        zf.writestr("pkg/a.txt", b"aaa")
        zf.writestr("pkg/sub/b.txt", b"bb")
    dest = tmp_path / "out"
    files = safe_extract(archive, dest)
    assert sorted(p.relative_to(dest).as_posix() for p in files) == ["pkg/a.txt", "pkg/sub/b.txt"]
    assert (dest / "pkg/a.txt").read_bytes() == b"aaa"
    assert (dest / "pkg/sub/b.txt").read_bytes() == b"bb"


def _fifo(name: str) -> tuple[tarfile.TarInfo, None]:
    info = tarfile.TarInfo(name)
    info.type = tarfile.FIFOTYPE
    return info, None


def _chr(name: str) -> tuple[tarfile.TarInfo, None]:
    info = tarfile.TarInfo(name)
    info.type, info.devmajor, info.devminor = tarfile.CHRTYPE, 1, 3
    return info, None


BAD_TARS = {
    "absolute": lambda out: [_file(str(out / "evil_abs"))],
    "dotdot": lambda out: [_file("../evil")],
    "nested_dotdot": lambda out: [_file("a/../../evil")],
    "symlink_abs": lambda out: [_link("passwd", "/etc/passwd")],
    "symlink_up": lambda out: [_link("sub/x", "../../x")],
    "hardlink_abs": lambda out: [_link("passwd", "/etc/passwd", tarfile.LNKTYPE)],
    "hardlink_up": lambda out: [_link("h", "../outside.txt", tarfile.LNKTYPE)],
    # lexically harmless, but "here" -> "." makes "here/../evil" land beside the destination
    "through_symlink": lambda out: [_link("here", "."), _file("here/../evil")],
    "symlink_chain": lambda out: [_link("a", "b/.."), _link("b", "."), _file("a/evil")],
    "fifo": lambda out: [_fifo("pipe")],
    "chardev": lambda out: [_chr("null")],
}


@pytest.mark.parametrize("case", sorted(BAD_TARS))
def test_unsafe_tar_refused(tmp_path, case):
    outside = tmp_path / "outside"
    outside.mkdir()
    dest = tmp_path / "dest"
    members = [_file("ok.txt")] + BAD_TARS[case](outside)
    archive = _tar(tmp_path / "bad.tgz", members)
    before = sorted(p.name for p in tmp_path.iterdir())
    with pytest.raises(UnsafeArchiveError) as err:
        safe_extract(archive, dest)
    msg = str(err.value)
    assert "bad.tgz" in msg
    assert any(repr(info.name) in msg for info, _ in members[1:])  # names the offending member
    assert not dest.exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == before
    assert list(outside.iterdir()) == []


@pytest.mark.parametrize("name", ["/tmp/evil_zip_abs", "../evil", "a/../../evil"])
def test_unsafe_zip_refused(tmp_path, name):
    dest = tmp_path / "dest"
    archive = _zip(tmp_path / "bad.zip", ["ok.txt", name])
    with pytest.raises(UnsafeArchiveError) as err:
        safe_extract(archive, dest)
    assert "bad.zip" in str(err.value) and name in str(err.value)
    assert not dest.exists()
    assert not (tmp_path / "evil").exists()


def test_unknown_archive_type(tmp_path):
    archive = tmp_path / "data.rar"
    archive.write_bytes(b"not an archive")
    with pytest.raises(ValueError, match="data.rar"):
        safe_extract(archive, tmp_path / "dest")
    assert not (tmp_path / "dest").exists()
