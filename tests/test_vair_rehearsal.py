"""Paper 08's rehearsal: the block derived from the paper block passes the paper's checks at the paper's model size
with the http backend pointed at the stub; the fixtures are read by the paper's own readers as GSM8K and MATH-500
are; the HTTP backend talks to the stub chat-completions server over 127.0.0.1 as to a real one."""

from __future__ import annotations

import re

import pytest

from conftest import ROOT
from neurips26.common.config import derived_rehearsal, load_yaml
from neurips26.vair import experiment, rehearsal
from neurips26.vair.gsm8k import read_gsm8k
from neurips26.vair.http_backend import make_http_backend
from neurips26.vair.math500 import read_math500

DATA = load_yaml(ROOT / "config/vair.yaml")
SCHEMA = load_yaml(ROOT / "workflow/schemas/vair.schema.yaml")
PROMPTS = ROOT / "config/vair/prompts.yaml"


@pytest.mark.parametrize("factor", [1, 2])
def test_the_rehearsal_block_keeps_the_papers_model_and_points_http_at_the_stub(factor):
    block = derived_rehearsal("vair", DATA, SCHEMA, factor)
    paper = DATA["paper"]
    experiment.check_config(block)
    assert block["model"] == paper["model"] and block["datasets"] == paper["datasets"]
    assert block["train"]["steps"] == 2 and block["train"]["batch_size"] == 4 * factor
    assert block["seeds"] == [max(paper["seeds"])] and len(experiment.members(block)) == 5
    assert list(block["external"]) == ["http"] and block["external"]["http"]["base_url"] == rehearsal.STUB_URL
    assert {k: v for k, v in block["external"]["http"].items() if k != "base_url"} == {
        k: v for k, v in paper["external"]["http"].items() if k != "base_url"
    }


def test_the_fixtures_are_read_by_the_papers_readers():
    payloads = rehearsal.fixtures()
    assert sorted(payloads) == ["vair/gsm8k/test.jsonl", "vair/math500/test.jsonl"]
    problems, skipped = read_gsm8k(payloads["vair/gsm8k/test.jsonl"].decode().splitlines())
    assert len(problems) == rehearsal.GSM8K_RECORDS - 1 and skipped == {"non_integer_step": 1}
    assert all(p.problem.source == "gsm8k" and len(p.steps) >= 2 for p in problems)
    items, skipped = read_math500(payloads["vair/math500/test.jsonl"].decode().splitlines())
    assert len(items) == rehearsal.MATH_RECORDS and skipped == {}
    assert items[-1].answer == "\\frac12"  # matched to its boxed \frac{1}{2}
    doubled = rehearsal.fixtures(items=2)
    assert doubled["vair/gsm8k/test.jsonl"].count(b"\n") == 2 * rehearsal.GSM8K_RECORDS


def test_the_http_backend_grades_and_solves_through_the_stub_server():
    problems = [f"Ava has {n} apples. She buys 3 more apples. How many apples does Ava have now?" for n in range(60)]
    with rehearsal.chat_server(rehearsal.STUB_URL) as url:
        assert re.fullmatch(r"http://127\.0\.0\.1:\d+/v1", url)
        backend = make_http_backend(url, "stub-model", PROMPTS, retries=0, timeout_s=5.0)
        grades = backend.grade_texts(problems, ["Ava has 5 + 3 = 8 apples.\nFinal answer: 8"] * len(problems))
        answers = backend.solve_texts(problems[:3])
    assert all(reply.error == "" for reply in grades)  # every reply well formed
    parsed = [reply.value for reply in grades if reply.parsed_ok]
    assert set(parsed) <= {0, 1, 2, 3} and len(set(parsed)) > 1
    assert len(grades) - len(parsed) == 2  # every 25th reply without a verdict: 4%, under the 20% limit
    assert [reply.value for reply in answers] == [0, 1, 2]  # the first number of each problem
    assert rehearsal.stub_reply({"messages": [{"content": "GRADE"}, {"content": "x"}]}, 0).endswith("GRADE: 3")


def test_another_base_url_is_passed_through_and_no_server_starts():
    with rehearsal.chat_server("http://127.0.0.1:8000/v1") as url:
        assert url == "http://127.0.0.1:8000/v1"
    with rehearsal.chat_server(None) as url:
        assert url is None


def test_the_plan_names_rules_of_the_papers_rules_file():
    rules = set(re.findall(r"^rule (\w+):", (ROOT / "rules/vair.smk").read_text(), re.M))
    named = {*rehearsal.PLAN.work, *rehearsal.PLAN.not_rehearsed, *(k.partition(":")[0] for k in rehearsal.DATA_GROWTH)}
    assert named <= rules, named - rules
