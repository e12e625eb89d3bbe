"""Paper 05's model seeds as a batch dimension (issue 23): several seeds of one run trained in one job as a batched
ensemble give each seed its single-seed run's weights and rows (within float rounding), also where the seeds'
schedules end at different steps; a batched run killed after a checkpoint resumes to the uninterrupted result; the
members stay on the job's device; the seed groups and their files; a file of several seeds is read by seed."""

from __future__ import annotations

import logging
from dataclasses import replace

import numpy as np
import pandas as pd
import pytest
import torch
import yaml

from conftest import ROOT
from fake_gpu import fake_gpu
from neurips26.bbo_pile import experiment
from neurips26.bbo_pile.artifacts import load_decoder, save_decoder, save_decoders
from neurips26.bbo_pile.model import Decoder, DecoderConfig
from neurips26.bbo_pile.summary import model_seed_losses, seed_rows
from neurips26.bbo_pile.training import TrainSettings, batch_schedule, train_decoder, train_decoders
from neurips26.common import faults, loop

CONFIG = yaml.safe_load((ROOT / "config/bbo_pile.yaml").read_text())
TINY = dict(vocab_size=23, d_model=16, n_layers=1, n_heads=2, n_query_groups=1, head_size=8, mlp_hidden=32, context=40)
# batch 3, 500 targets: seeds 0 and 7 reach the budget in 11 steps, seed 3 in 12 (rows of 3-32 targets)
SETTINGS = TrainSettings(tokens_budget=500, batch=3, lr=3e-3, min_lr=3e-4, warmup=2, eval_every=4)
SEEDS = [0, 3, 7]
TIMING = {"seconds", "tokens_per_s"}


def counting_rows(n_rows: int, seed: int, width: int = 33) -> np.ndarray:
    """Rows of BOS (1) then a run of cyclic successors 2..22 from a random start, 3-32 targets a row, padded
    with 0: rows of unequal lengths, so that seeds reach the token budget after different numbers of steps."""
    rng = np.random.default_rng(seed)
    rows = np.zeros((n_rows, width), np.int64)
    for r in range(n_rows):
        n = rng.integers(4, width + 1)
        rows[r, 0] = 1
        rows[r, 1:n] = 2 + (rng.integers(0, 21) + np.arange(n - 1)) % 21
    return rows


TRAIN, VALID = counting_rows(24, 0), counting_rows(6, 1)


def members(seeds, **changes):
    return [DecoderConfig(seed=k, **TINY | changes) for k in seeds], [replace(SETTINGS, seed=k) for k in seeds]


def without_timing(rows: list[dict]) -> list[dict]:
    return [{k: v for k, v in row.items() if k not in TIMING} for row in rows]


@pytest.fixture(scope="module")
def batched():
    return train_decoders(TRAIN, VALID, *members(SEEDS), pad=0, device="cpu")


def test_the_seeds_schedules_end_at_different_steps():
    lengths = [len(batch_schedule(TRAIN, replace(SETTINGS, seed=k), 0)) for k in SEEDS]
    assert lengths == [11, 12, 11]


def test_each_seed_of_a_batched_run_equals_its_single_seed_run(batched):
    models, rows = batched
    assert [m.config.seed for m in models] == SEEDS
    for model, member_rows, k in zip(models, rows, SEEDS):
        config, settings = members([k])
        alone, alone_rows = train_decoder(TRAIN, VALID, config[0], settings[0], pad=0, device="cpu")
        for name, tensor in alone.state_dict().items():
            torch.testing.assert_close(model.state_dict()[name], tensor, rtol=1e-5, atol=1e-6, msg=f"seed {k} {name}")
        batched_rows, single_rows = without_timing(member_rows), without_timing(alone_rows)
        assert [(r["step"], r["tokens"]) for r in batched_rows] == [(r["step"], r["tokens"]) for r in single_rows]
        for mine, theirs in zip(batched_rows, single_rows):
            assert mine == pytest.approx(theirs, rel=1e-5), f"seed {k}"
    assert [r[-1]["step"] for r in rows] == [11, 12, 11]  # each seed stopped at its own budget
    assert len({float(m.state_dict()["wte.weight"][0, 0]) for m in models}) == 3  # the seeds differ


def test_the_seeds_initialisations_and_batches_are_their_own():
    """A seed's first update depends on its own initialisation and rows only: trained beside other seeds or
    alone, one step gives the same weights."""
    one_step = replace(SETTINGS, tokens_budget=1)
    pairs = train_decoders(
        TRAIN, VALID, [c for c in members([5, 1])[0]], [replace(one_step, seed=k) for k in (5, 1)], pad=0
    )
    alone = train_decoders(TRAIN, VALID, members([1])[0], [replace(one_step, seed=1)], pad=0)
    for name, tensor in alone[0][0].state_dict().items():
        torch.testing.assert_close(pairs[0][1].state_dict()[name], tensor, rtol=1e-5, atol=1e-7)
    assert not torch.equal(Decoder(members([5])[0][0]).wte.weight, Decoder(members([1])[0][0]).wte.weight)


class Killed(RuntimeError):
    pass


def test_a_batched_run_killed_after_a_checkpoint_resumes_to_the_uninterrupted_result(
    batched, tmp_path, monkeypatch, caplog
):
    settings = loop.LoopSettings(checkpoint=tmp_path / ".model.pt.ckpt", fingerprint="job", every_steps=4)
    done = []

    def kill_at_step_6():
        done.append(1)
        if len(done) == 6:  # after the checkpoint of step 4
            raise Killed

    monkeypatch.setattr(faults, "step_done", kill_at_step_6)
    with caplog.at_level(logging.INFO, logger="neurips26.loop"):
        with pytest.raises(Killed):
            train_decoders(TRAIN, VALID, *members(SEEDS), pad=0, device="cpu", loop_settings=settings)
        monkeypatch.setattr(faults, "step_done", lambda: None)
        resumed, resumed_rows = train_decoders(
            TRAIN, VALID, *members(SEEDS), pad=0, device="cpu", loop_settings=settings
        )
    assert any("resuming from checkpoint" in r.getMessage() and "at step 4" in r.getMessage() for r in caplog.records)
    models, rows = batched
    for whole, again in zip(models, resumed):
        for name, tensor in whole.state_dict().items():
            assert torch.equal(tensor, again.state_dict()[name]), name
    assert [without_timing(r) for r in resumed_rows] == [without_timing(r) for r in rows]


@pytest.mark.gpu_rule("bbo_pile_train_seed")
def test_a_batched_run_keeps_its_members_on_the_jobs_device():
    two_steps = replace(SETTINGS, tokens_budget=40, eval_every=1)
    with fake_gpu() as device:
        models, rows = train_decoders(
            TRAIN, VALID, members([0, 1])[0], [replace(two_steps, seed=k) for k in (0, 1)], pad=0
        )
        assert all(p.device == device for m in models for p in m.parameters())
        assert all(len(r) >= 1 for r in rows)


@pytest.mark.parametrize(
    "configs, settings, message",
    [
        (members([0, 1], dropout=0.1)[0], members([0, 1])[1], "dropout 0.1 trains one seed per run"),
        (
            [DecoderConfig(seed=0, **TINY), DecoderConfig(seed=1, **TINY | {"d_model": 8})],
            members([0, 1])[1],
            "seeds only",
        ),
        (members([0, 1])[0], [SETTINGS, replace(SETTINGS, seed=1, lr=1e-3)], "seeds only"),
        (members([0, 0])[0], members([0, 0])[1], "repeat"),
        (members([0, 1])[0], members([0])[1], "one TrainSettings per DecoderConfig"),
    ],
)
def test_members_that_differ_in_more_than_their_seeds_are_refused(configs, settings, message):
    with pytest.raises(ValueError, match=message):
        train_decoders(TRAIN, VALID, configs, settings, pad=0)


def test_a_file_of_several_seeds_is_read_by_seed(tmp_path):
    configs = members([0, 2])[0]
    models = [Decoder(c) for c in configs]
    save_decoders(tmp_path / "group.pt", models, configs)
    for model, config in zip(models, configs):
        loaded = load_decoder(tmp_path / "group.pt", seed=config.seed)
        assert loaded.config == config and torch.equal(loaded.wte.weight, model.wte.weight)
    with pytest.raises(ValueError, match=r"holds the seeds \[0, 2\]: name one"):
        load_decoder(tmp_path / "group.pt")
    with pytest.raises(ValueError, match="no decoder of seed 1"):
        load_decoder(tmp_path / "group.pt", seed=1)
    save_decoder(tmp_path / "one.pt", models[0], configs[0])  # one seed: the single-model file
    save_decoders(tmp_path / "one_too.pt", models[:1], configs[:1])
    assert set(torch.load(tmp_path / "one_too.pt", weights_only=True)) == {"config", "state"}
    assert load_decoder(tmp_path / "one.pt", seed=0).config == configs[0]
    with pytest.raises(ValueError, match="no decoder of seed 2"):
        load_decoder(tmp_path / "one.pt", seed=2)


def test_seed_groups_batch_the_model_seeds_when_asked_and_keep_one_job_per_seed_at_quick_and_paper():
    # quick runs one job per seed (batched, the seeds measured no cheaper on the 2-core CPU); a batched variant
    quick, paper = (
        {**CONFIG["quick"], "model_seeds": {**CONFIG["quick"]["model_seeds"], "batch": True}},
        CONFIG["paper"],
    )
    assert not CONFIG["quick"]["model_seeds"]["batch"] and CONFIG["smoke"]["model_seeds"]["batch"]
    assert experiment.seed_groups(CONFIG["quick"]) == [[1], [2]]
    assert experiment.seed_groups(quick) == [[0, 1, 2]] and experiment.seed_groups(paper) == [[1], [2]]
    assert experiment.seed_group(quick, "d64_t2", "0-1-2") == [0, 1, 2]
    with pytest.raises(ValueError, match="not one of the model seeds' jobs"):
        experiment.seed_group(quick, "d64_t2", "1")
    with pytest.raises(ValueError, match="not one of the model seeds' jobs"):
        experiment.seed_group(quick, "d96_t2", "0-1-2")
    for k in (0, 1, 2):
        assert experiment.run_file(quick, "d64_t2", k, "model") == "seeds/d64_t2/seed0-1-2/model.pt"
    assert experiment.run_file(quick, "d96_t2", 0, "training") == "training/d96_t2.parquet"
    # paper scale: the layout of one job per seed (the scaling run's own files hold the first copy)
    assert experiment.run_file(paper, "q30m_t2", 0, "model") == "models/q30m_t2.pt"
    assert experiment.run_file(paper, "q30m_t2", 2, "training") == "seeds/q30m_t2/seed2/training.parquet"
    with pytest.raises(ValueError, match="trained with seed 0 only"):
        experiment.run_file(quick, "d96_t2", 1, "model")


def test_a_seed_groups_log_gives_the_scaling_rows_and_each_seeds_final_loss(tmp_path):
    log = pd.DataFrame(
        {
            "model_seed": [0, 0, 1, 1, 2, 2],
            "flops": [1.0, 2.0] * 3,
            "val_loss": [3.0, 2.0, 3.1, 2.2, 3.2, 2.5],
            "run": "d64_t2",
        }
    )
    path = tmp_path / "seeds/d64_t2/seed0-1-2/training.parquet"
    path.parent.mkdir(parents=True)
    log.to_parquet(path)
    assert list(seed_rows(log, 0)["val_loss"]) == [3.0, 2.0]
    runs = pd.DataFrame({"run": ["d64_t2"], "val_loss": [2.0]})
    assert model_seed_losses(runs, "d64_t2", 0, [str(path)]) == {0: 2.0, 1: 2.2, 2: 2.5}
