"""Paper 09's tables: the runs with their divergence verdict and proxies, and the classifier's rows."""

from __future__ import annotations

import math
from types import SimpleNamespace

import pandas as pd
import pytest

from neurips26.noisy_divergence.classifier import FEATURES
from neurips26.noisy_divergence.pilot import outcome
from neurips26.noisy_divergence.summary import classifier_table, divergence_table, report_tables, runs_table

DETECT = {"delta": 0.5, "ema_beta": 0.5, "window_frac": 0.1}
UNIGRAM = 6.0  # the runs' flat loss of 5 nats lies a nat below it: they learned
RUNS = [  # (shape, qk_norm, lr multiplier, setting, seed, losses)
    ("deep", False, 1, "insert-k5-a0.5-d0.5", 0, [5.0] * 30),
    ("deep", False, 1, "clean", 0, [5.0] * 30),
    ("deep", False, 100, "clean", 0, [5.0] * 10 + [4.0] * 5 + [9.0] * 15),  # rises at step 16 and stays up
    ("deep", True, 100, "clean", 0, [5.0] * 30),
    ("wide", False, 1, "insert-k5-a0.5-d0.5", 0, [5.0] * 30),
]


def tables():
    summary, curves, diag = [], [], []
    for shape, qk, lr, setting, seed, losses in RUNS:
        keys = {"shape": shape, "qk_norm": qk, "lr_multiplier": lr, "setting": setting, "seed": seed}
        summary.append({**keys, "non_finite_step": -1, "non_finite_where": "", "final_val_loss": 5.0})
        for step, loss in enumerate(losses, start=1):
            logged = step % 5 == 0
            curves.append(
                {
                    **keys,
                    "step": step,
                    "train_loss": loss,
                    "logit_max": float(step) if logged else math.nan,
                    "update_norm": 1.0 if logged else math.nan,
                }
            )
            if logged:
                for layer in range(2):
                    diag.append(
                        {
                            **keys,
                            "step": step,
                            "layer": layer,
                            "max_logit": step * (1 + layer),
                            "resid_rms": 1.0,
                            "entropy": 1.0,
                            "q_rms": 1.0,
                            "k_rms": 1.0,
                        }
                    )
    return pd.DataFrame(summary), pd.DataFrame(curves), pd.DataFrame(diag)


def test_runs_carry_the_detectors_verdict_and_proxies_read_before_the_onset():
    runs = runs_table(*tables(), DETECT, UNIGRAM).set_index(["shape", "qk_norm", "lr_multiplier", "setting"])
    hot = runs.loc[("deep", False, 100, "clean")]
    assert hot["diverged"] and hot["div_kind"] == "no_recovery" and hot["onset"] == 16
    # proxies: median over the last three diagnostic steps before the onset (5, 10, 15), the larger layer: 2 x step
    assert hot["proxy_step"] == 15 and hot["max_attn_logit"] == 20.0 and hot["logit_max"] == 10.0
    calm = runs.loc[("deep", False, 1, "clean")]
    assert not calm["diverged"] and calm["proxy_step"] == 30 and calm["max_attn_logit"] == 50.0
    assert calm["peak_attn_logit"] == 60.0 and calm["kind"] == "clean"
    noisy = runs.loc[("deep", False, 1, "insert-k5-a0.5-d0.5")]
    assert (noisy["kind"], noisy["vocab"], noisy["alpha"]) == ("insert", "k5", 0.5)
    table = divergence_table(runs.reset_index())
    assert table["n"].sum() == len(RUNS) and table["k"].sum() == 1


def test_the_classifier_reads_one_shape_without_qk_norm_and_labels_the_failure_modes():
    summary, curves, diag = tables()
    runs = runs_table(summary, curves, diag, DETECT, UNIGRAM)
    rows = classifier_table(runs, curves, diag, base_lr=1, shape="deep")
    assert set(rows["shape"]) == {"deep"} and not rows["qk_norm"].any()  # wide and QK-norm runs left out
    null = rows[rows["task"] == "null"]
    # the null task: the runs that did not diverge, here the noisy one at the base rate; the diverged clean run at the
    # raised rate is the onset task's only (before issue 40's review a "run" task held every run, diverged or not)
    assert list(null["setting"]) == ["insert-k5-a0.5-d0.5"] and null["label"].tolist() == [0]
    onset = rows[rows["task"] == "onset"]
    assert len(onset) == 1 and onset["label"].iloc[0] == 1  # only the diverged run, LR-induced
    assert onset["attn_logit_growth"].iloc[0] == pytest.approx(math.log(15 / 5))  # read at the onset, not the end
    assert set(FEATURES) <= set(rows.columns)


def test_runs_carry_the_pilots_failure_to_learn_and_the_cells_and_report_count_it(tmp_path):
    """Issue 40's second review: the scored runs at x100 ended at the unigram level, which runs.parquet did not say.
    Each run's ``failed_to_learn`` is the pilot's (pilot.outcome on its training losses against the unigram entropy);
    the cell table counts it and the report's cell table shows it."""
    summary, curves, diag = tables()
    learned = runs_table(summary, curves, diag, DETECT, UNIGRAM)
    # the runs that did not diverge learned; the diverged one ends at 9 nats, above the unigram level: failed to learn
    assert learned["failed_to_learn"].tolist() == learned["diverged"].tolist() == [False, False, True, False, False]
    assert (learned["unigram_entropy"] == UNIGRAM).all()
    # at a unigram entropy of 5.1 nats the flat runs (5 nats) stay within 0.25 of it: failed to learn, the pilot's rule
    runs = runs_table(summary, curves, diag, DETECT, 5.1)
    for row in runs.to_dict("records"):
        losses = curves[
            (curves["shape"] == row["shape"])
            & (curves["qk_norm"] == row["qk_norm"])
            & (curves["lr_multiplier"] == row["lr_multiplier"])
            & (curves["setting"] == row["setting"])
        ].sort_values("step")["train_loss"]
        expected = outcome(losses.to_numpy(), 5.1, **DETECT)
        assert row["failed_to_learn"] == expected["failed_to_learn"]
        assert row["final_smoothed_loss"] == pytest.approx(expected["final_loss"])
    assert runs["failed_to_learn"].all()
    table = divergence_table(runs)
    assert table["failed_to_learn"].sum() == len(RUNS)
    paths = {"runs": runs, "divergence": table, "classifier": pd.DataFrame([{"task": "null"}])}
    paths["throughput"] = pd.DataFrame(
        [{"job": "j", "members": 1, "tokens": 1, "seconds": 1.0, "tokens_per_s": 1.0, "model_flops_per_s": 1.0}]
    )
    for name, frame in paths.items():
        frame.to_parquet(tmp_path / f"{name}.parquet")
    inp = SimpleNamespace(
        **{name: str(tmp_path / f"{name}.parquet") for name in paths}, stats=[], corpus_meta=[], pilot=[]
    )
    out = report_tables(inp, SimpleNamespace(shapes={}, corpus={"name": "c", "train_shards": 1, "vocab_size": 8}))
    assert list(out["cells"]["failed_to_learn"]) == ["1/1"] * len(RUNS) and out["unigram"] == pytest.approx(5.1)
