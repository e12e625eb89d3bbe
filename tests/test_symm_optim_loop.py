"""Paper 07 on the common training loop: symm_optim_train (a GPU rule) keeps the model, its optimizers' states and
the batches on the job's device (a fake GPU: the meta device, where a tensor left on the CPU fails), and a run
killed after a checkpoint and resumed equals an uninterrupted one, divergence included."""

from __future__ import annotations

import logging
import math
import re

import numpy as np
import pytest
import torch

from fake_gpu import fake_gpu
from neurips26.common import faults, loop
from neurips26.symm_optim.model import LM, LMConfig
from neurips26.symm_optim.training import TrainSettings, train_lm

CONFIG = LMConfig(vocab_size=32, d_model=16, n_layers=1, n_heads=2, n_kv_heads=1, head_dim=8, d_ff=24, context=16)
MOE = LMConfig(
    vocab_size=32,
    d_model=16,
    n_layers=1,
    n_heads=2,
    n_kv_heads=1,
    head_dim=8,
    d_ff=12,
    context=16,
    n_experts=4,
    top_k=2,
)
BASE = {
    "hidden": {"name": "muon", "lr": 0.02, "exact": True},
    "mlp_gate_up": {"name": "hybrid", "lr": 0.02},
    "mlp_down": {"name": "hybrid", "lr": 0.02, "orientation": "col"},
    "vector": {"name": "adamw", "lr": 0.01},
    "embedding": {"name": "row_norm", "lr": 0.5},
    "lm_head": {"name": "right_polar", "lr": 0.05},
}
SETTINGS = TrainSettings(seq_len=16, batch_size=4, steps=10, eval_every=4, eval_tokens=64, vector_warmup=2)
TIMING = {"optimizer_seconds"}


def _stream(n: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    tokens = np.tile(np.arange(3, 11), n // 8 + 1)[:n]
    noise = rng.random(n) < 0.1
    tokens[noise] = rng.integers(0, 32, noise.sum())
    return tokens.astype(np.uint16)


@pytest.mark.parametrize(
    "config, assignment",
    [
        (CONFIG, BASE),
        (MOE, {**BASE, "router": {"name": "centered_left_polar", "lr": 0.01}}),
    ],
)
@pytest.mark.gpu_rule("symm_optim_train")
def test_training_keeps_model_optimizers_and_batches_on_the_jobs_device(config, assignment):
    two_steps = TrainSettings(seq_len=16, batch_size=2, steps=2, eval_every=1, eval_tokens=32, vector_warmup=1)
    model = LM(config)
    with fake_gpu() as device:
        result = train_lm(
            model, assignment, _stream(400, 0), _stream(100, 1), two_steps, spectrum_steps=(2,), log=lambda _: None
        )
    assert not result.diverged and len(result.steps) == 2  # both steps ran, optimizer steps included
    assert all(p.device == device for p in model.parameters())
    assert {r["kind"] for r in result.spectra} >= {"embedding", "lm_head"}


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


def _killed_then_resumed(
    tmp_path, monkeypatch, caplog, assignment, settings, kill_after: int, resumes_at: int, every: int = 3
):
    """Kill the run when step `kill_after` is done (before its own checkpoint), then run it again; the rerun must
    resume from the checkpoint at step `resumes_at` (a rerun from step 0 would give the same result)."""
    checkpoint = loop.LoopSettings(checkpoint=tmp_path / ".summary.ckpt", fingerprint="job", every_steps=every)
    done = []

    def kill():
        done.append(1)
        if len(done) == kill_after:
            raise Killed

    monkeypatch.setattr(faults, "step_done", kill)
    with caplog.at_level(logging.INFO, logger="neurips26.loop"):
        with pytest.raises(Killed):
            train_lm(
                LM(CONFIG),
                assignment,
                _stream(2000, 0),
                _stream(300, 1),
                settings,
                spectrum_steps=(6,),
                log=lambda _: None,
                loop_settings=checkpoint,
                device="cpu",
            )
        assert checkpoint.checkpoint.exists()
        assert resumed_at(caplog) == []  # the first run started afresh
        monkeypatch.setattr(faults, "step_done", lambda: None)
        model = LM(CONFIG)
        result = train_lm(
            model,
            assignment,
            _stream(2000, 0),
            _stream(300, 1),
            settings,
            spectrum_steps=(6,),
            log=lambda _: None,
            loop_settings=checkpoint,
            device="cpu",
        )
    assert resumed_at(caplog) == [resumes_at]  # the rerun resumed from the checkpoint, not from step 0
    return model, result


def _rows(result):
    return [{k: v for k, v in r.items() if k not in TIMING} for r in result.steps]


def test_a_run_killed_after_a_checkpoint_resumes_to_the_uninterrupted_result(tmp_path, monkeypatch, caplog):
    whole_model = LM(CONFIG)
    whole = train_lm(
        whole_model,
        BASE,
        _stream(2000, 0),
        _stream(300, 1),
        SETTINGS,
        spectrum_steps=(6,),
        log=lambda _: None,
        device="cpu",
    )
    model, resumed = _killed_then_resumed(tmp_path, monkeypatch, caplog, BASE, SETTINGS, kill_after=5, resumes_at=3)
    for name, tensor in whole_model.state_dict().items():
        assert torch.equal(tensor, model.state_dict()[name]), name
    assert not resumed.diverged and resumed.final_val_loss == whole.final_val_loss
    assert str(_rows(resumed)) == str(_rows(whole)) and resumed.spectra == whole.spectra  # str: NaN == NaN


def test_a_divergence_after_a_resume_is_recorded_as_in_an_uninterrupted_run(tmp_path, monkeypatch, caplog):
    bad = {**BASE, "lm_head": {"name": "row_norm", "lr": 1e36}}  # the head's weights grow until a step overflows
    whole = train_lm(LM(CONFIG), bad, _stream(2000, 0), _stream(300, 1), SETTINGS, log=lambda _: None, device="cpu")
    # the overflow's step depends on the CPU's arithmetic (4 on one machine, 8 on another): it only has to come
    # after the checkpoint the killed run resumes from (step 2)
    assert whole.diverged and whole.diverged_step > 2
    _, resumed = _killed_then_resumed(tmp_path, monkeypatch, caplog, bad, SETTINGS, kill_after=3, resumes_at=2, every=2)
    assert resumed.diverged and (resumed.diverged_step, resumed.diverged_kind, resumed.diverged_detail) == (
        whole.diverged_step,
        whole.diverged_kind,
        whole.diverged_detail,
    )
    assert str(_rows(resumed)) == str(_rows(whole)) and math.isnan(resumed.final_val_loss)
