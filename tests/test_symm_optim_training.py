"""Paper 07's training loop: the reference's schedules, learning, spikes, divergence named by step and role, spectra."""

from __future__ import annotations

import math

import numpy as np
import pytest

from neurips26.symm_optim.model import LM, LMConfig
from neurips26.symm_optim.training import TrainSettings, matrix_lr_scale, spike_flags, train_lm, vector_lr_scale

CONFIG = LMConfig(vocab_size=32, d_model=16, n_layers=1, n_heads=2, n_kv_heads=1, head_dim=8, d_ff=24, context=16)
BASE = {
    "hidden": {"name": "muon", "lr": 0.02, "exact": True},
    "mlp_gate_up": {"name": "hybrid", "lr": 0.02},
    "mlp_down": {"name": "hybrid", "lr": 0.02, "orientation": "col"},
    "vector": {"name": "adamw", "lr": 0.01},
    "embedding": {"name": "row_norm", "lr": 0.5},
    "lm_head": {"name": "row_norm", "lr": 0.05},
}
SETTINGS = TrainSettings(seq_len=16, batch_size=8, steps=40, eval_every=20, eval_tokens=256, vector_warmup=4)


def _stream(n: int, seed: int) -> np.ndarray:
    """A learnable stream: a fixed cycle of 8 tokens with 10% random replacements."""
    rng = np.random.default_rng(seed)
    tokens = np.tile(np.arange(3, 11), n // 8 + 1)[:n]
    noise = rng.random(n) < 0.1
    tokens[noise] = rng.integers(0, 32, noise.sum())
    return tokens.astype(np.uint16)


def test_schedules_are_the_references():
    assert matrix_lr_scale(0, 100, 0.4) == 1.0 and matrix_lr_scale(60, 100, 0.4) == 1.0
    assert matrix_lr_scale(80, 100, 0.4) == pytest.approx(0.5) and matrix_lr_scale(100, 100, 0.4) < 1e-9
    assert vector_lr_scale(0, 100, 10) == 0.0 and vector_lr_scale(5, 100, 10) == 0.5
    assert vector_lr_scale(10, 100, 10) == 1.0 and vector_lr_scale(55, 100, 10) == pytest.approx(0.5)


def test_spikes_are_losses_above_the_factor_times_the_moving_average():
    losses = [5.0, 4.0, 3.0, 3.0, 9.0, 3.0, math.nan, 3.1]
    assert spike_flags(losses, 1.5, 0.5, 0) == [False, False, False, False, True, False, False, False]
    assert not any(spike_flags(losses, 1.5, 0.5, 5))  # within the skipped steps


def test_training_learns_and_records_spectra():
    result = train_lm(
        LM(CONFIG), BASE, _stream(4000, 0), _stream(600, 1), SETTINGS, spectrum_steps=(40,), log=lambda _: None
    )
    assert not result.diverged and len(result.steps) == 40
    evals = [r["val_loss"] for r in result.steps if not math.isnan(r["val_loss"])]
    assert len(evals) == 2 and result.final_val_loss == evals[-1] < math.log(32) - 1.0
    kinds = {(r["kind"], r["matrix"]) for r in result.spectra}
    assert kinds == {(k, m) for k in ("embedding", "lm_head") for m in ("gradient", "update")}
    # a row-normalised update of the head: every row of the direction has norm 1, so its singular values
    # have squared sum = number of rows with a non-zero gradient (up to eps)
    head = np.array([r["sigma"] for r in result.spectra if r["kind"] == "lm_head" and r["matrix"] == "update"])
    assert np.sum(head**2) == pytest.approx(32, rel=1e-3)


def test_a_non_finite_weight_stops_the_run_naming_the_step_and_its_role():
    model = LM(CONFIG)
    model.lm_head.weight.data[5, 2] = math.inf
    result = train_lm(model, BASE, _stream(4000, 0), _stream(600, 1), SETTINGS, log=lambda _: None)
    assert result.diverged and result.diverged_step == 1 and result.diverged_kind == "lm_head"
    assert math.isnan(result.final_val_loss) and len(result.steps) == 1


def test_an_overflowing_loss_stops_the_run_and_reports_the_largest_weights():
    bad = {**BASE, "lm_head": {"name": "row_norm", "lr": 1e38}}  # finite weights, overflowing logits
    result = train_lm(LM(CONFIG), bad, _stream(4000, 0), _stream(600, 1), SETTINGS, log=lambda _: None)
    assert result.diverged and result.diverged_step == 2 and result.diverged_kind == "loss"
    assert result.diverged_detail.startswith("largest |weight| per role: lm_head "), result.diverged_detail
    assert float(result.diverged_detail.split(",")[0].split()[-1]) > 1e37


def test_mismatched_vocabulary_and_context_are_refused():
    with pytest.raises(ValueError, match="beyond the model's vocabulary of 32: the tokenizer and the model disagree"):
        train_lm(LM(CONFIG), BASE, _stream(4000, 0) + 40, _stream(600, 1), SETTINGS)
    with pytest.raises(ValueError, match="seq_len 32 exceeds the model's context 16"):
        train_lm(
            LM(CONFIG),
            BASE,
            _stream(4000, 0),
            _stream(600, 1),
            TrainSettings(seq_len=32, batch_size=2, steps=1, eval_every=1, eval_tokens=64),
        )
    with pytest.raises(ValueError, match="cannot be updated by the matrix optimizer 'row_norm'"):
        train_lm(
            LM(CONFIG), {**BASE, "vector": {"name": "row_norm", "lr": 0.1}}, _stream(4000, 0), _stream(600, 1), SETTINGS
        )
