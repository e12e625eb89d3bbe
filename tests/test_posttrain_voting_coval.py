"""CoVal's reader (the schema neurips26.posttrain_voting.coval assumes): the rehearsal's fixture served from
127.0.0.1 and read back as one profile per prompt, one voter per (prompt, annotator), ties kept; what is malformed is
skipped and counted, or refused naming the line. The paper-scale source: the registry's entry fetched by the download
code from a fake hub on 127.0.0.1, locked on its first fetch and checked against the lock after, and the paper-scale
DAG that downloads it once for both ranking blocks."""

from __future__ import annotations

import functools
import http.server
import json
import urllib.request

import numpy as np
import pytest

from conftest import planned_jobs
from neurips26.common.download import DownloadError
from neurips26.common.fixtures import FAKE_COMMIT, FixtureServer
from neurips26.common.local_http import LocalServer
from neurips26.common.locking import fetch_source, read_lock
from neurips26.common.sources import lookup, read_registry
from neurips26.posttrain_voting.coval import load_profiles, profiles_table, read_rankings
from neurips26.posttrain_voting.profiles import pairwise_matrix
from neurips26.posttrain_voting.rehearsal import coval_lines, fixtures

NAME = "merged_comparisons_annotators.jsonl"
SOURCE = f"posttrain_voting/coval/{NAME}"


def test_the_fixture_served_from_localhost_is_read_as_profiles(tmp_path):
    served = tmp_path / "served"
    served.mkdir()
    (served / NAME).write_bytes(fixtures(1)[f"posttrain_voting/coval/{NAME}"])
    handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=str(served))
    with LocalServer(handler) as server:
        with urllib.request.urlopen(f"{server.url}/{NAME}") as response:
            (tmp_path / NAME).write_bytes(response.read())
    rows, skipped = read_rankings(tmp_path / NAME, "world")
    assert skipped == {"duplicate": 2, "malformed": 2}  # prompts 0 and 10 of 12: one repeated, one bad ranking each
    assert not rows.duplicated(["prompt_id", "annotator_id"]).any()
    table = profiles_table(rows, min_voters=3)
    assert len(table) == 12 and (table["voters"] >= 3).all() and table["ties"].sum() > 0
    profiles = load_profiles(table)
    assert all(p.m == 4 and p.n_voters == v for (_, p), v in zip(profiles, table["voters"]))
    P = pairwise_matrix(profiles[0][1])
    assert np.allclose(P + P.T, 1)
    personal, _ = read_rankings(tmp_path / NAME, "personal")
    assert 0 < len(personal) < len(rows)


def test_ties_count_half_and_duplicates_keep_the_first(tmp_path):
    lines = [
        {"prompt_id": "p", "annotator_id": "a", "ranking_blocks": {"world": [{"ranking": "A>B=C>D"}]}},
        {"prompt_id": "p", "annotator_id": "a", "ranking_blocks": {"world": [{"ranking": "D>C>B>A"}]}},
        {"prompt_id": "p", "annotator_id": "b", "ranking_blocks": {"world": [{"ranking": "B>A>C>D"}]}},
        {"prompt_id": "p", "annotator_id": "c", "ranking_blocks": {"world": []}},
    ]
    path = tmp_path / NAME
    path.write_text("\n".join(json.dumps(x) for x in lines) + "\n")
    rows, skipped = read_rankings(path, "world")
    assert list(rows["ranking"]) == ["A>B=C>D", "B>A>C>D"] and skipped == {"duplicate": 1, "empty": 1}
    ((_, profile),) = load_profiles(profiles_table(rows, 2))
    P = pairwise_matrix(profile)
    assert P[1, 2] == pytest.approx(0.75) and P[0, 1] == pytest.approx(0.5)  # B=C for one voter counts 1/2


def test_a_record_without_the_assumed_fields_is_refused_naming_the_line(tmp_path):
    path = tmp_path / NAME
    path.write_text(json.dumps({"prompt_id": "p", "rankings": "A>B>C>D"}) + "\n")
    with pytest.raises(ValueError, match=":1: missing fields"):
        read_rankings(path, "world")
    with pytest.raises(ValueError, match="world' or 'personal"):
        read_rankings(path, "unacceptable")


def test_the_fixture_is_deterministic_and_grows_with_items():
    assert coval_lines(3) == coval_lines(3)
    assert len(fixtures(2)[f"posttrain_voting/coval/{NAME}"]) > len(fixtures(1)[f"posttrain_voting/coval/{NAME}"])


def test_the_registry_fetches_coval_from_the_hub_at_a_locked_commit(tmp_path):
    """The download rule's code (fetch_source) on the registry's own entry: the hub's resolve address of openai/coval
    at main; the first fetch, from a fake hub on 127.0.0.1, records the commit main resolved to and the file's
    sha256; a later fetch is checked against that record, and a server whose bytes changed is refused."""
    source = lookup(SOURCE)
    assert source.url == f"https://huggingface.co/datasets/openai/coval/resolve/main/{NAME}"
    assert source.lock and source.known_hash is None and source.huggingface["repo"] == "openai/coval"
    payload = fixtures(1)[SOURCE]
    lock = tmp_path / "lock.yaml"
    with FixtureServer({SOURCE: payload}, read_registry()) as server:
        mirror = server.mirrors()["posttrain_voting/coval"]
        fetch_source(source, tmp_path / "first" / NAME, lock, mirror=mirror)
        fetch_source(source, tmp_path / "again" / NAME, lock, mirror=mirror)
    entry = read_lock(lock)["files"][SOURCE]
    assert entry["commit"] == FAKE_COMMIT and entry["size"] == len(payload) and entry["origin"] == "server"
    assert entry["url"] == f"https://huggingface.co/datasets/openai/coval/resolve/{FAKE_COMMIT}/{NAME}"
    revision = read_lock(lock)["revisions"]["openai/coval"]
    assert revision["revision"] == "main" and revision["commit"] == FAKE_COMMIT
    assert (tmp_path / "again" / NAME).read_bytes() == payload
    rows, _ = read_rankings(tmp_path / "again" / NAME, "world")
    assert rows["prompt_id"].nunique() == 12
    with FixtureServer({SOURCE: payload.replace(b"A>B>C>D", b"D>C>B>A")}, read_registry()) as server:
        with pytest.raises(DownloadError, match="does not match its lock"):
            fetch_source(source, tmp_path / "changed" / NAME, lock, mirror=server.mirrors()["posttrain_voting/coval"])
    assert not (tmp_path / "changed" / NAME).exists()


def test_the_paper_scale_dag_downloads_coval_once_for_both_ranking_blocks(workflow_copy):
    """A dry run in a copy without resources/ (a checkout that already holds the files plans no download): CoVal's
    two files and the base model's six, each once; one scoring job serves both ranking blocks."""
    jobs = planned_jobs(workflow_copy, "results/paper/posttrain_voting/report.md")
    assert jobs.get("download") == 2 + 6 and jobs.get("posttrain_voting_coval") == 2, jobs
    assert jobs.get("posttrain_voting_base_model") == 1, jobs
    assert jobs.get("posttrain_voting_axioms") == 2, jobs  # world, personal (synthetic profiles: adversarial)
