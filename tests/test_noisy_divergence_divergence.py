"""Paper 09's divergence detector, rates with Wilson intervals, the common rate-difference interval, and the
noise- vs LR-failure classifier."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from scipy.stats import binomtest

from neurips26.common.claims import rate_difference, wilson
from neurips26.noisy_divergence.classifier import FEATURES, balanced_accuracy, features_at, loso, seed_bootstrap
from neurips26.noisy_divergence.divergence import detect, rates

DETECT = dict(delta=0.5, ema_beta=0.5, window_frac=0.1)


def test_a_loss_that_rises_and_stays_up_diverges_at_its_onset():
    losses = [5.0] * 10 + [4.0] * 40 + [9.0] * 50
    diverged, kind, onset = detect(losses, **DETECT)
    assert diverged and kind == "no_recovery" and onset == 51


def test_a_spike_that_recovers_is_not_a_divergence():
    losses = [5.0] * 40 + [12.0] * 20 + [4.5] * 40
    assert detect(losses, **DETECT) == (False, "", -1)


def test_a_rise_shorter_than_the_window_at_the_end_is_not_a_divergence():
    losses = [4.0] * 95 + [9.0] * 5
    assert not detect(losses, delta=0.5, ema_beta=0.5, window_frac=0.1)[0]
    assert detect(losses, delta=0.5, ema_beta=0.5, window_frac=0.03)[0]


def test_non_finite_losses_or_a_recorded_step_are_divergences():
    assert detect([5.0, 4.0, math.nan], **DETECT) == (True, "non_finite", 3)
    assert detect([5.0, 4.0], non_finite_step=2, **DETECT) == (True, "non_finite", 2)
    with pytest.raises(ValueError, match="delta > 0"):
        detect([1.0], delta=0.0, ema_beta=0.5, window_frac=0.1)


@pytest.mark.parametrize("k, n", [(0, 4), (2, 4), (4, 4), (7, 30), (0, 1)])
def test_wilson_interval_matches_scipy(k, n):
    expected = binomtest(k, n).proportion_ci(confidence_level=0.95, method="wilson")
    assert wilson(k, n) == pytest.approx((expected.low, expected.high), abs=1e-9)
    assert all(math.isnan(x) for x in wilson(0, 0))


def test_rate_difference_is_newcombes_interval():
    # Newcombe (1998), Table II example: 56/70 vs 48/80, difference 0.2, method 10 interval [0.0524, 0.3339]
    spread = rate_difference(56, 70, 48, 80)
    assert spread.mean == pytest.approx(0.2) and (spread.low, spread.high) == pytest.approx((0.0524, 0.3339), abs=5e-4)
    none = rate_difference(0, 4, 0, 4)
    assert none.mean == 0 and none.low < 0 < none.high  # nothing against nothing decides nothing
    assert math.isnan(rate_difference(0, 0, 1, 4).mean)


def test_rates_per_group_carry_counts_and_intervals():
    runs = pd.DataFrame({"cell": ["a"] * 4 + ["b"], "diverged": [True, False, False, True, True]})
    table = rates(runs, ["cell"]).set_index("cell")
    assert (table.loc["a", "k"], table.loc["a", "n"], table.loc["a", "p"]) == (2, 4, 0.5)
    assert "fewer than 2 runs" in table.loc["b", "note"]


def _frame(n_per_class, seeds, separable, rng):
    rows = []
    for seed in seeds:
        for label in (0, 1):
            for _ in range(n_per_class):
                x = rng.normal(size=len(FEATURES)) + (8.0 * label if separable else 0.0)
                rows.append({"seed": seed, "label": label, **dict(zip(FEATURES, x))})
    return pd.DataFrame(rows)


def test_the_classifier_separates_separable_failures_and_not_shuffled_ones():
    rng = np.random.default_rng(0)
    summary, predictions = loso(_frame(5, range(4), True, rng), "label", 3)
    assert summary["balanced_accuracy"] == 1.0 and summary["low"] == 1.0 and len(predictions) == 40
    noise = [loso(_frame(5, range(4), False, rng), "label", 3)[0]["balanced_accuracy"] for _ in range(5)]
    assert 0.3 < np.mean(noise) < 0.7


def test_guessing_the_larger_class_does_not_reach_the_threshold():
    # 24 runs of one class against 4 of the other, features unrelated to the label: plain accuracy can exceed 0.75
    # by predicting the larger class, balanced accuracy cannot
    rng = np.random.default_rng(3)
    rows = [
        {"seed": i % 4, "label": int(i < 4), **dict(zip(FEATURES, rng.normal(size=len(FEATURES))))} for i in range(28)
    ]
    summary, _ = loso(pd.DataFrame(rows), "label", 3)
    assert summary["balanced_accuracy"] < 0.75 and summary["low"] < 0.75
    y = np.array([0] * 24 + [1] * 4)
    assert balanced_accuracy(y, np.zeros(28, dtype=int)) == 0.5 and np.mean(y == 0) > 0.75


def test_the_classifier_is_skipped_with_its_reason_when_runs_are_too_few():
    rng = np.random.default_rng(1)
    out, predictions = loso(_frame(1, range(2), True, rng), "label", 3)
    assert out["status"] == "skipped" and "too few runs per class: 2 and 2" in out["reason"]
    assert math.isnan(out["balanced_accuracy"]) and predictions.empty
    one_seed, _ = loso(_frame(5, [0], True, rng), "label", 3)
    assert one_seed["status"] == "skipped" and "1 seed" in one_seed["reason"]


def test_leave_one_seed_out_never_trains_on_the_held_out_seed():
    # seed 3's labels are flipped: trained on the others, the classifier must get all of seed 3 wrong
    rng = np.random.default_rng(2)
    frame = _frame(5, range(4), True, rng)
    flipped = frame["seed"] == 3
    frame.loc[flipped, "label"] = 1 - frame.loc[flipped, "label"]
    summary, predictions = loso(frame, "label", 3)
    assert (predictions[flipped] != frame.loc[flipped, "label"]).all()
    # the other seeds' folds train on seed 3's flipped rows beside two clean seeds and still get every row right (the
    # features separate the classes widely), so the accuracy is exactly the 30 rows of seeds 0-2 out of 40
    assert (predictions[~flipped] == frame.loc[~flipped, "label"]).all()
    assert summary["accuracy"] == 30 / 40


def test_the_bootstrap_resamples_seeds_not_runs():
    y = np.array([0, 1] * 10)
    groups = np.repeat(np.arange(5), 4)
    perfect = seed_bootstrap(y, y.copy(), groups)
    assert perfect == (1.0, 1.0)
    wrong_seed = y.copy()
    wrong_seed[groups == 0] = 1 - wrong_seed[groups == 0]  # one seed all wrong
    low, high = seed_bootstrap(y, wrong_seed, groups)
    assert low < 0.8 <= high <= 1.0


def test_features_read_the_growth_of_the_deepest_growing_layer():
    diag = pd.DataFrame(
        [
            {"step": s, "layer": layer, "max_logit": 1.0 * (1 + (s // 10) * (layer == 2) * 9), "resid_rms": 1.0}
            for s in (10, 20)
            for layer in range(3)
        ]
    )
    steps = pd.DataFrame({"step": [10, 20], "logit_max": [2.0, 4.0], "update_norm": [1.0, 1.0]})
    f = features_at(diag, steps, 20)
    assert f["depth_of_growth"] == 1.0 and f["attn_logit_growth"] == pytest.approx(math.log(19 / 10))
    assert f["output_logit_growth"] == pytest.approx(math.log(2)) and f["update_growth"] == 0
    assert all(math.isnan(v) for v in features_at(diag, steps, 15).values())  # one diagnostic step: no growth


def _cell_tables(seeds, rng):
    """Runs, curves and diagnostics of the deep shape without QK-norm, none diverged: the reference noise at the base
    rate (label 0) and clean data at a raised rate (label 1), alike in every diagnostic (seed-level draws from one law)
    except what their cells set by construction: the update norm's growth (the rate), the noise mass's and the noise
    ids' embedding's growth (whether the run trained on noise)."""
    runs, curves, diag = [], [], []
    for seed in seeds:
        for setting, lr in (("insert-k5-a0.5-d0.5", 1), ("clean", 4)):
            noisy = setting != "clean"
            keys = {"shape": "deep", "qk_norm": False, "lr_multiplier": lr, "setting": setting, "seed": seed}
            runs.append({**keys, "kind": "insert" if noisy else "clean", "diverged": False, "onset": -1})
            for i, step in enumerate((10, 20)):
                curves.append(
                    {
                        **keys,
                        "step": step,
                        "train_loss": 5.0 - i,
                        "logit_max": float(rng.lognormal()),
                        "update_norm": 1.0 if i == 0 else (0.5 if lr == 1 else 0.8),
                        "embed_noise_ratio": 1.0 if i == 0 else (1.5 if noisy else 0.7),
                    }
                )
                for layer in range(2):
                    diag.append(
                        {
                            **keys,
                            "step": step,
                            "layer": layer,
                            "max_logit": float(rng.lognormal()),
                            "resid_rms": float(rng.lognormal()),
                            "block_grad_norm": float(rng.lognormal()),
                            "noise_mass_ratio": 1.0 if i == 0 else (2.0 if noisy else 0.9),
                        }
                    )
    return pd.DataFrame(runs), pd.DataFrame(curves), pd.DataFrame(diag)


def test_the_null_on_runs_that_differ_only_in_their_cell_does_not_score_one_by_construction():
    """Issue 40's second review: with the update norm's, noise mass's and noise-id embedding's growth among the
    features, the null (runs without a divergence, noise-trained at the base rate against clean at the raised rate)
    scored 1.000, since those three record the cell whatever happens at a divergence. Here the runs differ in nothing
    else: the classifier must do no better than its chance, not 1.0."""
    from neurips26.noisy_divergence.summary import classifier_table

    runs, curves, diag = _cell_tables(range(8), np.random.default_rng(0))
    rows = classifier_table(runs, curves, diag, base_lr=1, shape="deep")
    null = rows[rows["task"] == "null"]
    assert len(null) == 16 and null["label"].sum() == 8
    assert {"update_growth", "noise_mass_growth", "embed_noise_growth"} <= set(rows.columns)  # kept in the table
    summary, _ = loso(null, "label", 3)
    assert summary["status"] == "ok" and summary["balanced_accuracy"] < 0.75
    assert not {"update_growth", "noise_mass_growth", "embed_noise_growth"} & set(FEATURES)
