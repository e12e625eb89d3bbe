"""Paper 05 (BBO-Pile) on the common training loop: the GPU rules (train, imitation, optimize) keep model and data
on the job's device (a fake GPU: the meta device, where a tensor left on the CPU fails), and a training run killed
after a checkpoint and resumed equals an uninterrupted one."""

from __future__ import annotations

import logging
import re
from dataclasses import replace

import numpy as np
import pytest
import torch

from fake_gpu import fake_gpu
from neurips26.bbo_pile.artifacts import load_decoder
from neurips26.bbo_pile.imitation import imitation_nll
from neurips26.bbo_pile.model import Decoder, DecoderConfig
from neurips26.bbo_pile.sampling import optimize_batch
from neurips26.bbo_pile.tokenizer import encode_trajectory
from neurips26.bbo_pile.training import TrainSettings, batch_schedule, pack_sequences, train_decoder
from neurips26.bbo_pile.vocabulary import make_vocabulary
from neurips26.common import faults, loop

VOCAB = make_vocabulary(["RS", "CMA"], 16)
TINY = dict(d_model=16, n_layers=1, n_heads=2, n_query_groups=1, head_size=8, mlp_hidden=32, context=96)


def trajectories(n: int, seed: int) -> list[tuple]:
    rng = np.random.default_rng(seed)
    x = rng.random((n, 4, 2))
    return [(np.zeros(2), np.ones(2), x[i], (x[i] ** 2).sum(axis=1)) for i in range(n)]


def rows(n: int, seed: int) -> np.ndarray:
    seqs = [encode_trajectory(VOCAB, algo, *t) for algo in ("RS", "CMA") for t in trajectories(n, seed)]
    return pack_sequences(seqs, 97, VOCAB.pad)


def config() -> DecoderConfig:
    return DecoderConfig(vocab_size=VOCAB.size, **TINY)


SETTINGS = TrainSettings(tokens_budget=3000, batch=4, lr=3e-3, min_lr=3e-4, warmup=2, eval_every=3, seed=1)
TIMING = {"seconds", "tokens_per_s"}


@pytest.mark.gpu_rule("bbo_pile_train")
@pytest.mark.gpu_rule("bbo_pile_train_seed")
def test_training_keeps_model_and_batches_on_the_jobs_device():
    train, valid = rows(12, 0), rows(3, 1)
    two_steps = replace(SETTINGS, tokens_budget=500, eval_every=1)  # each step evaluates too
    with fake_gpu() as device:
        model, logged = train_decoder(train, valid, config(), two_steps, pad=VOCAB.pad)
        assert model.device == device and [r["step"] for r in logged] == [1, 2]
        assert all(p.device == device for p in model.parameters())


@pytest.mark.gpu_rule("bbo_pile_imitation")
@pytest.mark.gpu_rule("bbo_pile_optimize")
@pytest.mark.gpu_rule("bbo_pile_optimize_seed")
def test_imitation_and_optimization_run_on_the_jobs_device(tmp_path):
    path = tmp_path / "model.pt"
    cpu_model = Decoder(config())
    torch.save({"config": config().__dict__, "state": cpu_model.state_dict()}, path)
    by_algo = {"RS": trajectories(2, 2), "CMA": trajectories(2, 3)}
    sphere = lambda x: (np.asarray(x) ** 2).sum(axis=1)  # noqa: E731
    with fake_gpu() as device:
        model = load_decoder(path, loop.job_device())
        assert model.device == device
        table = imitation_nll(model, VOCAB, by_algo, ["RS", "CMA"])
        assert len(table) == 2 * 2 * 2
        for constrained in (True, False):
            runs = optimize_batch(
                model, VOCAB, "CMA", [(sphere, [0, 0], [1, 1])] * 2, [0, 1], 3, constrained=constrained
            )
            assert [r.x.shape for r in runs] == [(3, 2), (3, 2)]


def test_the_schedule_draws_the_rows_of_every_step_until_the_budget():
    train = rows(12, 0)
    schedule = batch_schedule(train, SETTINGS, VOCAB.pad)
    targets = (train[:, 1:] != VOCAB.pad).sum(axis=1)
    seen = np.cumsum([targets[idx].sum() for idx in schedule])
    assert seen[-1] >= SETTINGS.tokens_budget > seen[-2] and all(len(idx) == SETTINGS.batch for idx in schedule)
    order = np.random.default_rng(SETTINGS.seed)
    permutations = np.concatenate([order.permutation(len(train)) for _ in range(len(schedule))])
    np.testing.assert_array_equal(np.concatenate(schedule), permutations[: len(schedule) * SETTINGS.batch])


class Killed(RuntimeError):
    pass


def resumed_at(caplog) -> list[int]:
    """The steps the loop logged resuming at ("<name>: resuming from checkpoint <path> at step <k> of <n>")."""
    found = (
        re.search(r": resuming from checkpoint .* at step (\d+) of \d+$", r.getMessage())
        for r in caplog.records
        if r.name == "neurips26.loop"
    )
    return [int(m.group(1)) for m in found if m]


def test_a_run_killed_after_a_checkpoint_resumes_to_the_uninterrupted_result(tmp_path, monkeypatch, caplog):
    train, valid = rows(12, 0), rows(3, 1)
    steps = len(batch_schedule(train, SETTINGS, VOCAB.pad))
    assert steps >= 8
    whole, whole_rows = train_decoder(train, valid, config(), SETTINGS, pad=VOCAB.pad, device="cpu")

    settings = loop.LoopSettings(checkpoint=tmp_path / ".model.pt.ckpt", fingerprint="job", every_steps=3)
    done = []

    def kill_at_step_5():
        done.append(1)
        if len(done) == 5:  # after the checkpoint of step 3
            raise Killed

    monkeypatch.setattr(faults, "step_done", kill_at_step_5)
    with caplog.at_level(logging.INFO, logger="neurips26.loop"):
        with pytest.raises(Killed):
            train_decoder(train, valid, config(), SETTINGS, pad=VOCAB.pad, device="cpu", loop_settings=settings)
        assert settings.checkpoint.exists()
        assert resumed_at(caplog) == []  # the first run started afresh
        monkeypatch.setattr(faults, "step_done", lambda: None)
        resumed, resumed_rows = train_decoder(
            train, valid, config(), SETTINGS, pad=VOCAB.pad, device="cpu", loop_settings=settings
        )
    assert resumed_at(caplog) == [3]  # the rerun resumed from the checkpoint of step 3, not from step 0
    for name, tensor in whole.state_dict().items():
        assert torch.equal(tensor, resumed.state_dict()[name]), name
    assert [{k: v for k, v in r.items() if k not in TIMING} for r in resumed_rows] == [
        {k: v for k, v in r.items() if k not in TIMING} for r in whole_rows
    ]
