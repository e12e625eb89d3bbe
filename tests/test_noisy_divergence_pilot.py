"""Paper 09's edge-of-stability pilot (issue 40's review): it ran from a file outside the repository; now a rule whose
outcomes per run (the detector's verdict, the largest rise of the smoothed loss, a failure to learn) are tested here."""

from __future__ import annotations

import copy
import math

import numpy as np
import pytest

from conftest import ROOT
from neurips26.common.config import load_yaml
from neurips26.noisy_divergence import experiment
from neurips26.noisy_divergence.pilot import UNIGRAM_MARGIN, VARIANTS, outcome, unigram_entropy
from neurips26.noisy_divergence.training import TrainSettings, lr_at

CONFIG = load_yaml(ROOT / "config/noisy_divergence.yaml")
DETECT = {"delta": 0.5, "ema_beta": 0.9, "window_frac": 0.1}


def test_a_spike_that_recovers_shows_in_the_largest_rise_not_in_the_verdict():
    losses = np.concatenate([np.linspace(6, 4, 100), np.full(20, 9.0), np.full(80, 3.5)])
    row = outcome(losses, unigram=5.3, **DETECT)
    assert not row["diverged"] and row["largest_rise"] > 2.0 and not row["failed_to_learn"]


def test_a_loss_left_at_the_unigram_level_failed_to_learn_and_a_non_finite_one_diverged():
    flat = outcome(np.full(200, 5.3 - UNIGRAM_MARGIN / 2), unigram=5.3, **DETECT)
    assert flat["failed_to_learn"] and not flat["diverged"] and flat["largest_rise"] == pytest.approx(0.0)
    broken = outcome([6.0, 5.0, math.nan], unigram=5.3, **DETECT, non_finite_step=3)
    assert broken["diverged"] and broken["kind"] == "non_finite" and math.isnan(broken["final_loss"])
    assert broken["largest_rise"] == pytest.approx(0.0) and not broken["failed_to_learn"]


def test_the_unigram_entropy_of_uniform_tokens_is_log_v():
    assert unigram_entropy(np.tile(np.arange(8), 50), 16) == pytest.approx(math.log(8))


def test_the_variants_are_the_reviews_levers():
    s = TrainSettings(**{"seq_len": 8, "batch_size": 2, "steps": 100, "warmup": 20, "lr": 1.0, **VARIANTS["all"]})
    assert math.isinf(s.grad_clip) and s.weight_decay == 0.0 and s.betas == (0.9, 0.999) and s.eps == 1e-12
    assert lr_at(1, s) == 1.0 and lr_at(99, s) == 1.0  # two warmup steps, then constant


def test_the_pilot_seeds_stay_apart_from_the_scored_ones_and_variants_are_known():
    for scale in ("smoke", "quick"):
        cfg = CONFIG[scale]
        assert not set(cfg["pilot"]["seeds"]) & set(cfg["seeds"]) and min(cfg["pilot"]["seeds"]) >= 100
        params = experiment.pilot_params(cfg)
        assert params["train"]["steps"] == cfg["pilot"]["steps"] and not params["model"]["qk_norm"]
    bad = copy.deepcopy(CONFIG["quick"])
    bad["pilot"]["seeds"] = [0, 100]
    with pytest.raises(ValueError, match="pilot.seeds must be apart"):
        experiment.check_config(bad)
    bad["pilot"]["seeds"] = [100]
    bad["pilot"]["grid"][0]["variant"] = "no_such"
    with pytest.raises(ValueError, match="pilot.grid variant 'no_such'"):
        experiment.check_config(bad)
