"""The rehearsal of paper scale (issue 38): its configuration derived from the paper block by one function, the
fixture server standing in for the sources' hosts and the hub, the tensor-memory count of training steps, and the
predictions REHEARSAL.md makes from what it measured."""

from __future__ import annotations

import hashlib
import importlib
import inspect
import json
import math

import pandas as pd
import pytest
import requests
import torch

from conftest import PAPERS, ROOT
from neurips26.common.config import ConfigError, derived_rehearsal, load_yaml, rehearsal_plan
from neurips26.common.fixtures import FAKE_COMMIT, FixtureServer, fixture_registry
from neurips26.common.locking import fetch_source, read_lock
from neurips26.common.rehearsal import Plan, batch_ratio, largest, rehearsal_block, work_ratio
from neurips26.common.rehearsal_report import predict
from neurips26.common.sources import Source
from neurips26.common.tensor_memory import StepCounter, TensorMemory

PAPER = {"train": {"steps": 1000, "batch": 64, "width": 512}, "seeds": [0, 1, 2], "sizes": [8, 32, 16]}
PLAN = Plan(
    budgets={"train.steps": 2, "train.batch": 4},
    sweeps={"seeds": lambda s: s[:1], "sizes": largest},
    micro_batch=("train.batch",),
)


def test_the_rehearsal_block_cuts_budgets_and_sweeps_and_keeps_every_shape():
    block = rehearsal_block(PAPER, PLAN)
    assert block == {"train": {"steps": 2, "batch": 4, "width": 512}, "seeds": [0], "sizes": [32]}
    assert PAPER["train"]["steps"] == 1000  # the paper block is not changed
    assert rehearsal_block(PAPER, PLAN, factor=2)["train"]["batch"] == 8


@pytest.mark.parametrize(
    ("plan", "match"),
    [
        (Plan(budgets={"train.epochs": 1}), "budget train.epochs: no key 'epochs'"),
        (Plan(budgets={"train.steps": 5000}), "train.steps: 5000 is not a cut of the paper's 1000"),
        (Plan(sweeps={"seeds": lambda s: s + [9, 9, 9]}), "sweep seeds"),
        (Plan(budgets={"train.batch": 40}, micro_batch=("train.batch",)), "40 x 2 passes the paper's 64"),
    ],
)
def test_a_stale_or_growing_cut_is_refused_naming_the_key(plan, match):
    factor = 2 if plan.micro_batch else 1
    with pytest.raises(ValueError, match=match):
        rehearsal_block(PAPER, plan, factor=factor)


def test_a_plan_must_say_why_it_cuts_a_shape_and_micro_batches_are_budgets():
    with pytest.raises(ValueError, match="needs its reason"):
        Plan(shapes={"train.width": (64, " ")})
    with pytest.raises(ValueError, match="not budgets"):
        Plan(micro_batch=("train.batch",))


def test_work_ratio_is_the_rules_work_at_paper_scale_over_the_rehearsals():
    plan = Plan(
        budgets=PLAN.budgets,
        micro_batch=PLAN.micro_batch,
        work={"x_train": lambda block, wc: block["train"]["steps"] * block["train"]["batch"] * int(wc["k"])},
    )
    block = rehearsal_block(PAPER, plan)
    assert work_ratio(plan, "x_train", PAPER, block, {"k": "3"}) == pytest.approx(1000 / 2 * 64 / 4)
    assert work_ratio(plan, "x_other", PAPER, block, {}) is None
    assert batch_ratio(plan, PAPER, block, ["train"]) == 16 and batch_ratio(plan, PAPER, block, ["seeds"]) == 1
    broken = Plan(budgets=PLAN.budgets, work={"x_train": lambda block, wc: 0})
    with pytest.raises(ValueError, match="x_train: work 0"):
        work_ratio(broken, "x_train", PAPER, block, {})


@pytest.mark.parametrize("slug", PAPERS)
def test_every_paper_derives_a_rehearsal_that_its_schema_and_checks_accept(slug):
    """Every paper has a plan; the derived block passes the paper's schema (derived_rehearsal) and keeps every key
    the plan does not cut at the paper's value."""
    if rehearsal_plan(slug) is None:
        pytest.fail(f"{slug} has no rehearsal plan (src/neurips26/{slug}/rehearsal.py)")
    data = load_yaml(ROOT / f"config/{slug}.yaml")
    schema = load_yaml(ROOT / f"workflow/schemas/{slug}.schema.yaml")
    block = derived_rehearsal(slug, data, schema)
    experiment = importlib.import_module(f"neurips26.{slug}.experiment")
    extra = (ROOT,) if len(inspect.signature(experiment.check_config).parameters) > 1 else ()
    experiment.check_config(block, *extra)  # what the rules run at parse time on every scale's block
    plan = rehearsal_plan(slug)
    cut = {*plan.budgets, *plan.sweeps, *plan.shapes, *plan.fixture_paths}

    def leaves(node, prefix=""):
        if isinstance(node, dict) and node:
            for key, value in node.items():
                yield from leaves(value, f"{prefix}{key}.")
        else:
            yield prefix[:-1], node

    for path, value in leaves(data["paper"]):
        if not any(path == c or path.startswith(c + ".") for c in cut):
            node = block
            for key in path.split("."):
                node = node[key]
            assert node == value, f"{slug}: {path} changed without a cut"


def test_a_paper_without_a_plan_is_a_config_error(monkeypatch):
    from neurips26.common import config

    monkeypatch.setattr(config, "rehearsal_plan", lambda slug: None)
    with pytest.raises(ConfigError, match="has no rehearsal plan"):
        config.derived_rehearsal("bird", {"paper": {}}, {})


def test_the_rehearsal_scale_outside_the_driver_says_how_to_run_it():
    from neurips26.common.config import scale_block

    with pytest.raises(ConfigError, match="make rehearse"):
        scale_block({"bird": {"paper": {}}}, "bird", "rehearsal")


# --------------------------------------------------------------------------- fixtures served as mirrors

REGISTRY = {
    "plain": {"url": "https://example.org/data/", "files": {"a.csv": {"hash": "md5:" + "0" * 32}}},
    "locked": {"url": "https://example.org/other/", "lock": "on-first-fetch", "files": {"b.bin": {}}},
    "hubbed": {
        "huggingface": {"repo": "someone/set", "type": "dataset", "revision": "main"},
        "lock": "on-first-fetch",
        "pattern": r"shard_\d+\.bin",
    },
}


def test_the_fixture_registry_pins_the_fixtures_and_keeps_locks():
    payloads = {"plain/a.csv": b"x,y\n1,2\n", "locked/b.bin": b"\x00\x01"}
    out = fixture_registry(REGISTRY, payloads)
    assert out["plain"]["files"]["a.csv"]["hash"] == "sha256:" + hashlib.sha256(payloads["plain/a.csv"]).hexdigest()
    assert out["locked"]["files"]["b.bin"] == {} and REGISTRY["plain"]["files"]["a.csv"]["hash"].startswith("md5")


def test_the_download_code_fetches_plain_and_hub_fixtures_from_the_server(tmp_path):
    """The real download path (neurips26.common.locking.fetch_source) against the fixture server: a pinned file by
    its fixture hash, a hub file through the fake hub's revision API, locked in the test's own lock file."""
    payloads = {"plain/a.csv": b"x,y\n1,2\n", "hubbed/shard_000.bin": bytes(range(256))}
    registry = fixture_registry(REGISTRY, payloads)
    lock = tmp_path / "lock.yaml"
    with FixtureServer(payloads, registry) as server:
        mirrors = server.mirrors()
        assert requests.get(server.url + "nothing/here", timeout=5).status_code == 404
        plain = Source(
            "plain/a.csv", "https://example.org/data/a.csv", registry["plain"]["files"]["a.csv"]["hash"], None, 1
        )
        fetch_source(plain, tmp_path / "a.csv", lock, mirror=mirrors["plain"])
        hub = Source(
            "hubbed/shard_000.bin", "", None, None, 1, lock=True, huggingface=REGISTRY["hubbed"]["huggingface"]
        )
        fetch_source(hub, tmp_path / "shard_000.bin", lock, mirror=mirrors["hubbed"])
    assert (tmp_path / "a.csv").read_bytes() == payloads["plain/a.csv"]
    assert (tmp_path / "shard_000.bin").read_bytes() == payloads["hubbed/shard_000.bin"]
    entry = read_lock(lock)["files"]["hubbed/shard_000.bin"]
    assert entry["commit"] == FAKE_COMMIT and entry["size"] == 256


# --------------------------------------------------------------------------- tensor memory


def test_tensor_memory_counts_live_storages_and_their_peak():
    with TensorMemory("cpu") as memory:
        a = torch.zeros(1000)  # 4000 bytes
        b = torch.zeros(2000)  # 8000 bytes
        del a
        c = torch.zeros(10)
    assert memory.peak == 12000 and memory.current == 8040
    del b, c


def test_tensor_memory_counts_a_step_on_the_meta_device_where_nothing_is_computed():
    """One AdamW step of a 64 -> 4096 -> 64 MLP at batch 32 on the meta device: weights, gradients and both moments
    (4 x the parameters) at least, plus activations, and no more than that with every temporary kept."""
    model = torch.nn.Sequential(torch.nn.Linear(64, 4096), torch.nn.ReLU(), torch.nn.Linear(4096, 64)).to("meta")
    optimizer = torch.optim.AdamW(model.parameters())
    counter = StepCounter(torch.device("meta"), {"model": model, "optimizer": optimizer}, steps=1)

    def step():
        loss = model(torch.zeros(32, 64, device="meta")).square().mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        return loss

    counter.run(step)
    result = counter.result()
    params = sum(p.numel() for p in model.parameters()) * 4
    assert result["parameter_bytes"] == params
    assert 4 * params <= result["peak_bytes"] <= 6 * params + 3 * 32 * 4096 * 4
    assert result["flops_per_step"] == pytest.approx(3 * 2 * 32 * (64 * 4096 * 2), rel=0.35)


def test_the_loop_writes_its_count_only_when_the_rehearsal_asks(tmp_path, monkeypatch):
    from neurips26.common import loop

    model = torch.nn.Linear(8, 8)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)

    def step(_):
        loss = model(torch.ones(4, 8)).sum()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        return loss

    monkeypatch.setenv("NEURIPS26_JOB_LOG", "results/x/logs/train.log")
    monkeypatch.delenv("NEURIPS26_TENSOR_MEMORY", raising=False)
    loop.run_loop(step, 2, {"model": model, "optimizer": optimizer})
    assert not list(tmp_path.iterdir())
    monkeypatch.setenv("NEURIPS26_TENSOR_MEMORY", str(tmp_path))
    loop.run_loop(step, 3, {"model": model, "optimizer": optimizer})
    record = json.loads((tmp_path / "results__x__logs__train.log.json").read_text())["loops"][0]
    assert record["steps"] == 3 and record["steps_counted"] == 2 and record["parameter_bytes"] == 72 * 4


# --------------------------------------------------------------------------- predictions


def test_device_memory_is_extrapolated_linearly_to_the_configured_batch():
    jobs = pd.DataFrame(
        {
            "tensor_peak_mb": [100.0, 100.0],
            "tensor_peak_2x_mb": [150.0, math.nan],
            "batch_ratio": [16.0, 16.0],
            "work_ratio": [1000.0, 1000.0],
            "seconds": [6.0, 6.0],
            "host_peak_mb": [500.0, 500.0],
            "gpus": [1, 0],
            "flops_per_step": [1e12, math.nan],
            "loop_steps": [2, 2],
        }
    )
    out = predict(jobs)
    assert out["device_gb"].tolist() == pytest.approx([(100 + 50 * 15) / 1e3, 1.6])
    assert out["estimate_min"][1] == pytest.approx(6 * 1000 / 60)  # a CPU job: seconds x work ratio
    # a GPU job: the rehearsal's FLOPs (per step x its steps) x the work ratio, at the stated throughput
    assert out["estimate_min"][0] == pytest.approx(1e12 * 2 * 1000 / 67e12 / 60)


# --------------------------------------------------------------------------- the plan's checks


def test_planned_seeds_take_the_longest_seed_list_times_its_seeds_per_job():
    from neurips26.common.plan_checks import planned_seeds

    assert planned_seeds({"train": {"seeds": [0, 1], "seeds_per_job": 3}, "fit_seeds": [0, 1, 2, 3]}) == 6
    assert planned_seeds({"jobs": [{"seeds": [0]}, {"seeds": [0, 1, 2]}]}) == 3
    assert planned_seeds({"steps": 10}) == 0 and planned_seeds({"runs": 200, "seeds": [0]}) == 200


def test_four_runs_per_cell_cannot_separate_two_events_from_none():
    """The issue's example: 2 of 4 diverging runs against 0 of 4 is no evidence (Fisher p = 0.21); only 4 of 4 is."""
    from neurips26.common.plan_checks import separating_count, t_multiplier

    assert separating_count(4) == 4 and separating_count(8) == 4 and separating_count(2) is None
    assert t_multiplier(2) == pytest.approx(12.706, abs=1e-3) and t_multiplier(1) == math.inf


def test_a_claim_whose_planned_runs_fall_short_of_its_minimum_is_listed_as_undecidable():
    from types import SimpleNamespace

    from neurips26.common.plan_checks import claims_table

    claim = lambda cid, kind, runs: SimpleNamespace(claim_id=cid, kind=kind, min_runs=runs)  # noqa: E731
    definitions = {
        "p": [claim("C1", "hard", 3), claim("C2", "soft", 8), claim("K1", "check", 9), claim("C3", "hard", 1)]
    }
    rehearsed = pd.DataFrame({"paper": ["p", "p"], "claim_id": ["C1", "C2"], "runs": [1, 2]})
    table = claims_table(definitions, rehearsed, {"p": (4, 1)}).set_index("claim")
    assert list(table.index) == ["C1", "C2", "C3"]  # checks are not claims
    assert table.loc["C1", "planned runs"] == 4 and table.loc["C1", "decidable"] == "can decide"
    assert table.loc["C2", "planned runs"] == 8 and table.loc["C2", "decidable"] == "can decide"
    assert table.loc["C3", "from"] == "seeds" and table.loc["C3", "planned runs"] == 4
    short = claims_table({"p": [claim("C1", "hard", 5)]}, rehearsed, {"p": (4, 1)})
    assert short["decidable"].iloc[0].startswith("**cannot decide**: 4 < 5")
    unknown = claims_table({"p": [claim("C9", "hard", 2)]}, rehearsed, {"p": (0, 0)})
    assert unknown["decidable"].iloc[0].startswith("unknown")  # no evidence is not a verdict either way
    guessed = claims_table({"p": [claim("C9", "hard", 5)]}, rehearsed, {"p": (4, 1)})
    assert guessed["decidable"].iloc[0].startswith("**likely cannot decide**")


def test_the_plan_attaches_each_rules_largest_prediction_and_flags_what_does_not_fit():
    from neurips26.common.plan import JobRecord
    from neurips26.common.plan_checks import attach_rehearsal, memory_table

    jobs = [
        JobRecord(1, "x_train", "x", 4, 600, 16000, gpus=1),
        JobRecord(2, "x_train", "x", 4, 600, 16000, gpus=1),
        JobRecord(3, "x_data", "x", 1, 60, 4000),
        JobRecord(4, "x_plot", "x", 1, 10, 1000),
    ]
    measured = pd.DataFrame(
        {
            "rule": ["x_train", "x_train", "x_data"],
            "status": ["ok", "ok", "ok"],
            "estimate_min": [100.0, 300.0, 5.0],
            "device_gb": [90.0, 20.0, math.nan],
            "host_mb": [9000.0, 12000.0, 6000.0],
        }
    )
    table = memory_table(attach_rehearsal(jobs, measured)).set_index("rule")
    assert table.loc["x_train", "predicted device GB"] == 90 and table.loc["x_train", "device fits"].startswith(
        "**no**"
    )
    assert table.loc["x_train", "host fits"] == "yes" and table.loc["x_data", "host fits"] == "**no**"
    assert table.loc["x_plot", "rehearsal"] == "not rehearsed"


def test_only_the_work_beyond_the_papers_start_up_is_scaled():
    """Start-up (interpreter, imports) does not grow with the work: the paper's fastest job stands for it."""
    jobs = pd.DataFrame(
        {
            "paper": ["p", "p"],
            "seconds": [2.0, 12.0],
            "work_ratio": [1.0, 10.0],
            "batch_ratio": [1.0, 1.0],
            "gpus": [0, 0],
        }
    )
    out = predict(jobs)
    assert out["estimate_min"].tolist() == pytest.approx([2 / 60, (2 + 10 * 10) / 60])


def test_a_job_whose_time_is_all_start_up_or_a_cut_shape_gets_no_prediction_and_is_flagged():
    from neurips26.common.rehearsal_report import problems

    jobs = pd.DataFrame(
        {
            "paper": ["p", "p", "q"],
            "rule": ["p_split", "p_train", "q_train"],
            "wildcards": ["", "", ""],
            "status": ["ok", "ok", "ok"],
            "seconds": [1.0, 30.0, 30.0],
            "work_ratio": [1e6, 10.0, 10.0],
            "batch_ratio": [1.0, 16.0, 16.0],
            "gpus": [0, 1, 1],
            "tensor_peak_mb": [math.nan, 100.0, 100.0],
            "tensor_peak_2x_mb": [math.nan, 150.0, 150.0],
            "shape_cut": [False, False, True],
            "request_mem_mb": [4000.0, 16000.0, 16000.0],
            "request_min": [60.0, 60.0, 60.0],
        }
    )
    out = predict(jobs)
    assert math.isnan(out["estimate_min"][0]) and math.isnan(out["device_gb"][2]) and out["device_gb"][1] > 0
    found = problems(out).set_index("rule")["problem"]
    assert "time not estimated" in found["p_split"] and "cut shape" in found["q_train"]
    assert "p_train" not in found


def test_a_fresh_rehearsal_asks_for_the_host_memory_the_plan_declares_and_a_later_one_for_what_it_measured(
    tmp_path, monkeypatch
):
    """Two 15 GB CPU-run jobs of paper 07 were started side by side on a 23 GB machine (the rules ask for their GPU
    jobs' host memory) and killed: the first run asks for the plan's number, later runs for the measured peak."""
    with pytest.raises(ValueError, match="host_mb.train"):
        Plan(host_mb={"train": (15000, " ")})
    monkeypatch.syspath_prepend(str(ROOT / "tools"))
    rehearse = importlib.import_module("rehearse")
    declared = rehearse.host_memory(tmp_path, ["symm_optim"])
    assert "symm_optim_train:mem_mb=15000" in declared and "symm_optim_step_time:mem_mb=15000" in declared
    pd.DataFrame({"rule": ["symm_optim_train", "symm_optim_train"], "host_peak_mb": [9000.0, 10000.0]}).to_csv(
        tmp_path / "jobs.csv", index=False
    )
    measured = rehearse.host_memory(tmp_path, ["symm_optim"])
    assert "symm_optim_train:mem_mb=12200" in measured and "symm_optim_step_time:mem_mb=15000" in measured
