"""Sources locked on first fetch (neurips26.common.locking), against a local server on 127.0.0.1 that plays a
plain host and the Hugging Face hub (its revision API and resolve addresses)."""

from __future__ import annotations

import hashlib
import json
import logging
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
import yaml

from neurips26.common.download import DownloadError
from neurips26.common.locking import fetch_source, read_lock, verify_file
from neurips26.common.sources import Source

COMMIT = "0123456789abcdef0123456789abcdef01234567"
REPO = "someone/some-data"


class Hub:
    """What the server holds: plain files by path, and the hub's files of REPO at COMMIT ("main" resolves to it)."""

    def __init__(self) -> None:
        self.plain = {"/files/reviews.json.gz": b"plain bytes\n"}
        self.repo = {"shard_000000.bin": b"\x00\x01" * 100, "README.md": b"# card\n"}
        self.lfs = {"shard_000000.bin"}  # files the hub lists with an LFS sha256
        self.served: dict[str, bytes] = {}  # bytes the resolve address serves instead of what the API lists
        self.hits: list[str] = []


def _handler(hub: Hub):
    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # noqa: N802
            path = self.path.split("?")[0]
            hub.hits.append(path)
            body = None
            if path in (f"/api/datasets/{REPO}/revision/main", f"/api/datasets/{REPO}/revision/{COMMIT}"):
                siblings = [
                    {
                        "rfilename": name,
                        "size": len(data),
                        **(
                            {"lfs": {"sha256": hashlib.sha256(data).hexdigest(), "size": len(data)}}
                            if name in hub.lfs
                            else {}
                        ),
                    }
                    for name, data in hub.repo.items()
                ]
                body = json.dumps({"id": REPO, "sha": COMMIT, "siblings": siblings}).encode()
            elif path.startswith(f"/datasets/{REPO}/resolve/{COMMIT}/"):
                name = path.rsplit("/", 1)[1]
                body = hub.served.get(name, hub.repo.get(name))
            else:
                body = hub.plain.get(path)
            if body is None:
                self.send_error(404)
                return
            self.send_response(200)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: object) -> None:
            pass

    return Handler


@pytest.fixture
def hub():
    state = Hub()
    server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(state))
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    try:
        yield state, f"http://127.0.0.1:{server.server_address[1]}/"
    finally:
        server.shutdown()
        server.server_close()
        thread.join(5)


def plain_source(**kw) -> Source:
    spec = dict(path="toys/reviews.json.gz", url="https://example.org/files/reviews.json.gz", known_hash=None)
    return Source(**{**spec, "unpinned": None, "runtime": 5, "lock": True, **kw})


def hub_source(name="shard_000000.bin") -> Source:
    return Source(
        path=f"data/{name}",
        url=f"https://huggingface.co/datasets/{REPO}/resolve/main/{name}",
        known_hash=None,
        unpinned=None,
        runtime=5,
        lock=True,
        huggingface={"repo": REPO, "type": "dataset", "revision": "main"},
    )


def leftovers(folder):
    return sorted(p.name for p in folder.iterdir()) if folder.exists() else []


def test_a_first_fetch_writes_the_lock_and_says_the_values_come_from_the_server(hub, tmp_path, caplog):
    state, base = hub
    lock, dest = tmp_path / "sources.lock.yaml", tmp_path / "resources/toys/reviews.json.gz"
    with caplog.at_level(logging.WARNING, logger="neurips26.download"):
        fetch_source(plain_source(), dest, lock, mirror=base + "files/")
    data = state.plain["/files/reviews.json.gz"]
    entry = read_lock(lock)["files"]["toys/reviews.json.gz"]
    assert entry["sha256"] == hashlib.sha256(data).hexdigest() and entry["size"] == len(data)
    assert entry["origin"] == "server" and entry["url"] == "https://example.org/files/reviews.json.gz"
    assert "come from the server, not from the project" in caplog.text
    assert lock.read_text().startswith("# Sources locked on first fetch")


def test_a_later_fetch_is_checked_against_the_lock_and_a_changed_file_is_refused(hub, tmp_path):
    state, base = hub
    lock, dest = tmp_path / "sources.lock.yaml", tmp_path / "resources/toys/reviews.json.gz"
    fetch_source(plain_source(), dest, lock, mirror=base + "files/")
    before = lock.read_text()
    dest.unlink()
    fetch_source(plain_source(), dest, lock, mirror=base + "files/")  # same bytes: verified
    assert dest.read_bytes() == state.plain["/files/reviews.json.gz"] and lock.read_text() == before
    dest.unlink()
    state.plain["/files/reviews.json.gz"] = b"other bytes\n"
    with pytest.raises(DownloadError) as error:
        fetch_source(plain_source(), dest, lock, mirror=base + "files/")
    message = str(error.value)
    expected = read_lock(lock)["files"]["toys/reviews.json.gz"]["sha256"]
    assert "resources/toys/reviews.json.gz" in message and expected in message
    assert hashlib.sha256(b"other bytes\n").hexdigest() in message
    assert leftovers(dest.parent) == [] and lock.read_text() == before  # nothing half-written, lock unchanged


def test_a_hugging_face_file_is_fetched_at_the_resolved_commit_and_checked_against_the_hubs_lfs_hash(hub, tmp_path):
    state, base = hub
    lock, dest = tmp_path / "sources.lock.yaml", tmp_path / "resources/data/shard_000000.bin"
    fetch_source(hub_source(), dest, lock, mirror=base)
    recorded = read_lock(lock)
    assert recorded["revisions"][REPO]["commit"] == COMMIT and recorded["revisions"][REPO]["revision"] == "main"
    entry = recorded["files"]["data/shard_000000.bin"]
    assert entry["commit"] == COMMIT
    assert entry["url"] == f"https://huggingface.co/datasets/{REPO}/resolve/{COMMIT}/shard_000000.bin"
    assert entry["sha256"] == hashlib.sha256(state.repo["shard_000000.bin"]).hexdigest()
    assert f"/datasets/{REPO}/resolve/{COMMIT}/shard_000000.bin" in state.hits  # never the moving branch
    # a second file of the repository uses the recorded commit, without asking what "main" is now
    state.hits.clear()
    fetch_source(hub_source("README.md"), tmp_path / "resources/data/README.md", lock, mirror=base)
    assert f"/api/datasets/{REPO}/revision/main" not in state.hits


def test_a_hugging_face_file_that_does_not_match_the_hubs_own_lfs_hash_is_refused_on_first_fetch(hub, tmp_path):
    state, base = hub
    lock, dest = tmp_path / "sources.lock.yaml", tmp_path / "resources/data/shard_000000.bin"
    original = state.repo["shard_000000.bin"]
    state.served["shard_000000.bin"] = b"corrupted on the way"
    with pytest.raises(DownloadError, match=hashlib.sha256(original).hexdigest()):
        fetch_source(hub_source(), dest, lock, mirror=base)
    assert "data/shard_000000.bin" not in read_lock(lock)["files"] and leftovers(dest.parent) == []


def test_a_pinned_hash_takes_precedence_and_a_source_neither_pinned_nor_locked_is_refused(hub, tmp_path):
    state, base = hub
    data = state.plain["/files/reviews.json.gz"]
    pinned = plain_source(known_hash="sha256:" + hashlib.sha256(data).hexdigest(), lock=False)
    lock = tmp_path / "sources.lock.yaml"
    fetch_source(pinned, tmp_path / "a/reviews.json.gz", lock, mirror=base + "files/")
    assert read_lock(lock)["files"] == {}  # a pinned file needs no lock entry
    with pytest.raises(ValueError, match="no pinned hash.*publishes nothing"):
        fetch_source(plain_source(lock=False, unpinned="the host publishes nothing"), tmp_path / "b/x", lock)


def test_a_file_placed_by_hand_is_checked_against_the_lock_or_recorded(tmp_path):
    lock = tmp_path / "sources.lock.yaml"
    placed = tmp_path / "reviews.json.gz"
    placed.write_bytes(b"placed by a user\n")
    assert verify_file(plain_source(), placed, lock) == "unchecked"
    assert verify_file(plain_source(), placed, lock, record=True) == "recorded"
    assert read_lock(lock)["files"]["toys/reviews.json.gz"]["origin"] == "local file"
    assert verify_file(plain_source(), placed, lock) == "locked"
    placed.write_bytes(b"changed\n")
    with pytest.raises(ValueError, match="expected sha256:.*got sha256:"):
        verify_file(plain_source(), placed, lock)
    with pytest.raises(DownloadError, match="exists but resources/other/x has no lock entry"):
        fetch_source(plain_source(path="other/x"), placed, lock)


def test_a_lock_entry_without_hash_or_with_an_unknown_origin_is_refused(tmp_path):
    lock = tmp_path / "sources.lock.yaml"
    lock.write_text(yaml.safe_dump({"files": {"a/b": {"sha256": "00", "size": 1, "origin": "a friend"}}}))
    with pytest.raises(ValueError, match="a/b needs sha256, size and an origin"):
        read_lock(lock)


def test_the_verify_tool_checks_placed_files_and_records_unlocked_ones(tmp_path, capsys):
    import importlib.util

    from conftest import ROOT

    spec = importlib.util.spec_from_file_location("verify_sources", ROOT / "tools" / "verify_sources.py")
    tool = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(tool)
    resources, lock = tmp_path / "resources", tmp_path / "lock.yaml"
    (resources / "seqrec_audit").mkdir(parents=True)
    (resources / "seqrec_audit" / "meta_Toys_and_Games.json.gz").write_bytes(b"placed\n")  # locked on first fetch
    args = ["--resources", str(resources), "--lock", str(lock)]
    assert tool.main(args) == 0 and "unchecked  resources/seqrec_audit/meta_Toys" in capsys.readouterr().out
    assert tool.main([*args, "--record"]) == 0 and read_lock(lock)["files"]["seqrec_audit/meta_Toys_and_Games.json.gz"]
    (resources / "seqrec_audit" / "ml-1m.zip").write_bytes(b"not movielens\n")  # pinned: a mismatch
    assert tool.main(args) == 1
    out = capsys.readouterr().out
    assert "MISMATCH   resources/seqrec_audit/ml-1m.zip: expected sha256:a6898adb" in out and "locked     " in out


def test_a_pinned_hash_decides_even_over_a_stale_lock_entry(hub, tmp_path, caplog):
    state, base = hub
    data = state.plain["/files/reviews.json.gz"]
    lock = tmp_path / "sources.lock.yaml"
    lock.write_text(
        yaml.safe_dump({"files": {"toys/reviews.json.gz": {"sha256": "0" * 64, "size": 1, "origin": "by hand"}}})
    )
    pinned = plain_source(known_hash="sha256:" + hashlib.sha256(data).hexdigest(), lock=False)
    with caplog.at_level(logging.WARNING, logger="neurips26.download"):
        out = fetch_source(pinned, tmp_path / "a/reviews.json.gz", lock, mirror=base + "files/")
    assert out.read_bytes() == data and "is stale: the pinned hash decides" in caplog.text


def test_a_mirror_is_recorded_beside_the_canonical_address(hub, tmp_path):
    _, base = hub
    lock = tmp_path / "sources.lock.yaml"
    fetch_source(plain_source(), tmp_path / "r/reviews.json.gz", lock, mirror=base + "files/")
    entry = read_lock(lock)["files"]["toys/reviews.json.gz"]
    assert (
        entry["url"] == "https://example.org/files/reviews.json.gz" and entry["via"] == base + "files/reviews.json.gz"
    )


def test_a_changed_revision_or_a_file_locked_at_another_commit_is_refused(hub, tmp_path):
    _, base = hub
    lock, dest = tmp_path / "sources.lock.yaml", tmp_path / "resources/data/shard_000000.bin"
    fetch_source(hub_source(), dest, lock, mirror=base)
    dest.unlink()
    moved = hub_source()
    moved = Source(**{**moved.__dict__, "huggingface": {**moved.huggingface, "revision": "v2"}})
    with pytest.raises(DownloadError, match="names revision 'v2'.*of revision 'main'"):
        fetch_source(moved, dest, lock, mirror=base)
    data = yaml.safe_load(lock.read_text())
    data["files"]["data/shard_000000.bin"]["commit"] = "f" * 40
    lock.write_text(yaml.safe_dump(data))
    with pytest.raises(DownloadError, match=f"locked at commit {'f' * 40}.*recorded commit is {COMMIT}"):
        fetch_source(hub_source(), dest, lock, mirror=base)
    assert leftovers(dest.parent) == []


def test_a_file_missing_from_the_repository_names_what_it_holds(hub, tmp_path):
    _, base = hub
    with pytest.raises(DownloadError, match=r"has no file train.txt \(set its path.*holds: README.md, shard_000000"):
        fetch_source(hub_source("train.txt"), tmp_path / "resources/data/train.txt", tmp_path / "l.yaml", mirror=base)


def test_a_size_other_than_the_hub_states_leaves_neither_file_nor_entry(hub, tmp_path):
    state, base = hub
    state.lfs.clear()  # no LFS hash to catch it on the way: the size check must
    state.served["shard_000000.bin"] = b"short"
    lock, dest = tmp_path / "sources.lock.yaml", tmp_path / "resources/data/shard_000000.bin"
    with pytest.raises(DownloadError, match="the server stated 200 bytes, 5 arrived"):
        fetch_source(hub_source(), dest, lock, mirror=base)
    assert leftovers(dest.parent) == [] and read_lock(lock)["files"] == {}


def test_a_hand_pin_with_an_algorithm_prefix_is_refused_with_the_format(tmp_path):
    lock = tmp_path / "sources.lock.yaml"
    entry = {"sha256": "sha256:" + "a" * 64, "size": 1, "origin": "by hand"}
    lock.write_text(yaml.safe_dump({"files": {"a/b": entry}}))
    with pytest.raises(ValueError, match="sha256 of a/b must be 64 lowercase hex digits"):
        read_lock(lock)


def _first_fetch_in_a_process(args):
    base, lock, dest, name = args
    source = plain_source(path=f"toys/{name}", url=f"https://example.org/files/{name}")
    fetch_source(source, dest, lock, mirror=base + "files/")
    return name


def test_parallel_first_fetches_into_one_lock_keep_every_entry(hub, tmp_path):
    import multiprocessing

    state, base = hub
    names = [f"part{i}.gz" for i in range(6)]
    for i, name in enumerate(names):
        state.plain[f"/files/{name}"] = f"part {i}\n".encode()
    lock = tmp_path / "sources.lock.yaml"
    jobs = [(base, lock, tmp_path / "resources" / name, name) for name in names]
    with multiprocessing.get_context("fork").Pool(6) as pool:
        assert sorted(pool.map(_first_fetch_in_a_process, jobs)) == names
    files = read_lock(lock)["files"]
    assert sorted(files) == [f"toys/{name}" for name in names]
    for i, name in enumerate(names):
        assert files[f"toys/{name}"]["sha256"] == hashlib.sha256(f"part {i}\n".encode()).hexdigest()
