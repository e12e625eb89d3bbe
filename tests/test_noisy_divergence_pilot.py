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


def test_the_quick_raised_rate_is_x4_in_both_raised_jobs_and_paper_scale_keeps_x10():
    """Issue 40's second review: the scored runs at x100 never learned. The quick raised rate is x4, the largest pilot
    multiplier at which every pilot run learned (clean and reference noise, with the scored optimizer: a cell of the
    pilot grid), with and without QK-norm; paper scale's learning rates are left as they were."""
    quick = CONFIG["quick"]
    base = quick["comparisons"]["base_lr_multiplier"]
    raised = {(job["qk_norm"], job["lr_multiplier"]) for job in quick["jobs"] if job["lr_multiplier"] != base}
    assert raised == {(False, 4), (True, 4)}
    ref = quick["comparisons"]["reference_setting"]
    assert any(
        entry["variant"] == "base" and entry["lr_multiplier"] == 4 and {"clean", ref} <= set(entry["settings"])
        for entry in quick["pilot"]["grid"]
    )
    experiment.check_config(quick)
    assert {job["lr_multiplier"] for job in CONFIG["paper"]["jobs"]} == {1, 10}
    assert CONFIG["paper"]["train"]["lr"] == 0.0003


def test_the_unigram_entropy_of_files_counts_them_as_one_stream_in_chunks(tmp_path):
    """The tables job counts the clean stream's unigram entropy from its files (paper scale: 9 shards) a chunk at a
    time; it equals the pilot's unigram_entropy of the joined stream."""
    from neurips26.common.token_files import write_tokens
    from neurips26.noisy_divergence.pilot import unigram_entropy_of_files

    rng = np.random.default_rng(0)
    parts = [rng.integers(0, 12, size=n).astype(np.uint32) for n in (37, 100)]
    paths = [tmp_path / f"part{i}.bin" for i in range(2)]
    for path, part in zip(paths, parts):
        write_tokens(path, part)
    expected = unigram_entropy(np.concatenate(parts), 16)
    assert unigram_entropy_of_files(paths, 16, chunk=10) == pytest.approx(expected, rel=1e-12)
    assert unigram_entropy_of_files(paths[:1], 16) == pytest.approx(unigram_entropy(parts[0], 16), rel=1e-12)
