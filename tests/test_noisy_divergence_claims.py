"""Paper 09's claims decided on built tables: every claim and check has a case where it holds, one where it fails and
one where it is inconclusive (too few runs, an interval around the threshold, or missing evidence)."""

from __future__ import annotations

import math
from functools import partial

import numpy as np
import pandas as pd
import pytest

from conftest import ROOT
from neurips26.common.claims import decide, load_definitions, rate_difference
from neurips26.common.config import load_yaml
from neurips26.noisy_divergence.claims import did_interval, measure_claims

DEFINITIONS = load_definitions(ROOT / "config/claims/noisy_divergence.yaml")
COMPARISONS = {
    "deep_shape": "deep",
    "wide_shape": "wide",
    "reference_setting": "insert-k5-a0.5-d0.5",
    "base_lr_multiplier": 1,
    "scale_shapes": ["small", "deep"],
}
REF, LOW, HIGH = "insert-k5-a0.5-d0.5", "insert-k5-a0.25-d0.5", "insert-k5-a0.75-d0.5"
# overwrite at alpha 0.5 in 2/3 of the documents puts as much noise in the stream as insert at alpha 0.5 and d 0.5 (1/3)
# and as much in a noised document (1/2); at alpha 2/3 and d 0.5 the stream's share only; at alpha 0.5 and d 0.5, 1/4
FULL, OVERWRITE, OVERWRITE_EQUAL_ALPHA = "insert-full-a0.5-d0.5", "overwrite-k5-a0.5-d0.667", "overwrite-k5-a0.5-d0.5"
OVERWRITE_SHARE_ONLY = "overwrite-k5-a0.667-d0.5"
CELLS = [  # (shape, qk_norm, lr multiplier, setting)
    ("deep", False, 1, "clean"),
    ("deep", False, 1, LOW),
    ("deep", False, 1, REF),
    ("deep", False, 1, HIGH),
    ("deep", False, 1, FULL),
    ("deep", False, 1, OVERWRITE),
    ("deep", False, 100, "clean"),
    ("deep", True, 1, "clean"),
    ("deep", True, 1, REF),
    ("deep", True, 100, "clean"),
    ("wide", False, 1, "clean"),
    ("wide", False, 1, REF),
    ("small", False, 1, "clean"),
    ("small", False, 1, REF),
]
# base proxies (max attention logit) per cell: noise raises it, restricted more than full, QK-norm lowers it
LOGIT = {
    ("deep", False, 1, "clean"): 4.0,
    ("deep", False, 1, LOW): 5.0,
    ("deep", False, 1, REF): 6.0,
    ("deep", False, 1, HIGH): 8.0,
    ("deep", False, 1, FULL): 4.2,
    ("deep", False, 1, OVERWRITE): 4.5,
    ("deep", False, 100, "clean"): 1e4,
    ("deep", True, 1, "clean"): 3.0,
    ("deep", True, 1, REF): 3.1,
    ("deep", True, 100, "clean"): 80.0,
    ("wide", False, 1, "clean"): 7.0,
    ("wide", False, 1, REF): 7.5,
    ("small", False, 1, "clean"): 3.0,
    ("small", False, 1, REF): 3.5,
    ("deep", False, 1, OVERWRITE_EQUAL_ALPHA): 4.5,
    ("deep", False, 1, OVERWRITE_SHARE_ONLY): 4.5,
}


def runs(seeds=8, diverged=None, logit=None, jitter=0.02, cells=CELLS, failed=None):
    """A runs table: ``diverged`` maps a cell to how many of its seeds diverged (default: 6 of 8 noisy deep runs at
    the reference noise and above, none elsewhere ... then tuned per case); ``logit`` overrides the proxies;
    ``failed`` maps a cell to how many of its seeds (the last ones) failed to learn (none by default)."""
    diverged = diverged if diverged is not None else {}
    failed = failed or {}
    values = {**LOGIT, **(logit or {})}
    rng = np.random.default_rng(0)
    rows = []
    for cell in cells:
        shape, qk, lr, setting = cell
        k = diverged.get(cell, 0)
        for seed in range(seeds):
            rows.append(
                {
                    "shape": shape,
                    "qk_norm": qk,
                    "lr_multiplier": lr,
                    "setting": setting,
                    "seed": seed,
                    "diverged": seed < k,
                    "failed_to_learn": seed >= seeds - failed.get(cell, 0),
                    "max_attn_logit": values[cell] * math.exp(rng.normal(0, jitter)),
                }
            )
    return pd.DataFrame(rows)


DIVERGING = {
    ("deep", False, 1, REF): 6,
    ("deep", False, 1, HIGH): 8,
    ("deep", False, 1, LOW): 2,
    ("deep", False, 100, "clean"): 8,
    ("deep", True, 100, "clean"): 0,
    ("wide", False, 1, REF): 0,
}


def stats(**override):
    row = {
        "setting": REF,
        "docs_noised": 10,
        "docs_expected": 10,
        "docs_with_noise": 9,
        "docs_positive": 9,
        "count_error_max": 0.0,
        "recovered_mismatches": 0,
        "outside_vocab": 0,
        "eot_moved": 0,
        "uniform_p": 0.4,
    }
    return pd.DataFrame([{**row, **override}, {**row, "setting": FULL}])


def classifier(onset=(0.95, 0.9, 1.0, 20, 20), null=(0.55, 0.4, 0.7, 24, 8)):
    """The classifier table with the onset task's and its null's (balanced accuracy, bootstrap low, high, class
    counts), or skipped (None)."""
    rows = []
    for task, values in (("onset", onset), ("null", null)):
        if values is None:
            rows.append(
                {
                    "task": task,
                    "status": "skipped",
                    "reason": "too few runs per class: 0 and 0",
                    "n": 0,
                    "n_class0": 0,
                    "n_class1": 0,
                    "folds": 0,
                    "balanced_accuracy": math.nan,
                    "low": math.nan,
                    "high": math.nan,
                    "accuracy": math.nan,
                }
            )
        else:
            acc, low, high, n0, n1 = values
            rows.append(
                {
                    "task": task,
                    "status": "ok",
                    "reason": "",
                    "n": n0 + n1,
                    "n_class0": n0,
                    "n_class1": n1,
                    "folds": 8,
                    "balanced_accuracy": acc,
                    "low": low,
                    "high": high,
                    "accuracy": acc,
                }
            )
    return pd.DataFrame(rows)


def throughput(share=0.3):
    return pd.DataFrame({"model_flops_per_s": [share * 1e10, share * 1e10], "gemm_model_flops_per_s": [1e10, 1e10]})


def inputs(**kw):
    return {"runs": runs(diverged=DIVERGING), "stats": stats(), "clf": classifier(), "throughput": throughput(), **kw}


def decided(scenario) -> pd.DataFrame:
    measured = measure_claims(scenario["runs"], scenario["stats"], scenario["clf"], scenario["throughput"], COMPARISONS)
    return decide(DEFINITIONS, measured).set_index("claim_id")


def real():
    return inputs()


def with_runs(**kw):
    return inputs(runs=runs(**kw))


def given(**kw):
    return inputs(**kw)


NONE = {}
HOT, HOT_QK = ("deep", False, 100, "clean"), ("deep", True, 100, "clean")
CLEAN_DIVERGES = {**DIVERGING, ("deep", False, 1, "clean"): 8, ("deep", False, 1, LOW): 8, ("deep", False, 1, HIGH): 0}
QK_WORSE = {**DIVERGING, ("deep", True, 100, "clean"): 8, ("deep", False, 100, "clean"): 0}

VERDICT_CASES = [
    ("D1", "holds", real),
    ("D1", "fails", partial(with_runs, diverged={("deep", False, 1, "clean"): 8})),
    ("D1", "inconclusive", partial(with_runs, diverged=NONE)),  # 0 of 40 against 0 of 8
    ("D1", "inconclusive", partial(with_runs, diverged=DIVERGING, seeds=2)),
    ("D2", "holds", real),
    ("D2", "fails", partial(with_runs, diverged=CLEAN_DIVERGES)),
    ("D2", "inconclusive", partial(with_runs, diverged=NONE)),
    ("D3", "holds", real),
    ("D3", "fails", partial(with_runs, diverged={("deep", False, 1, FULL): 8})),
    ("D3", "inconclusive", partial(with_runs, diverged=NONE)),
    ("D4", "holds", real),
    ("D4", "fails", partial(with_runs, diverged={("deep", False, 1, OVERWRITE): 8})),
    ("D4", "inconclusive", partial(with_runs, diverged=NONE)),
    ("D5", "holds", real),
    ("D5", "fails", partial(with_runs, diverged={("wide", False, 1, REF): 8})),
    ("D5", "inconclusive", partial(with_runs, diverged=NONE)),
    ("D6", "holds", real),
    ("D6", "fails", partial(with_runs, diverged=NONE)),
    ("D6", "inconclusive", partial(with_runs, diverged={("deep", False, 100, "clean"): 2}, seeds=4)),
    # issue 40's second review: raised-rate runs that failed to learn (a collapsed model) decide nothing
    ("D6", "inconclusive", partial(with_runs, diverged=NONE, failed={HOT: 8})),
    ("D6", "inconclusive", partial(with_runs, failed={HOT: 1})),
    ("D7", "holds", real),
    ("D7", "fails", partial(with_runs, diverged={("deep", True, 1, REF): 8})),
    ("D7", "inconclusive", partial(with_runs, diverged=NONE)),
    ("D8", "holds", real),
    ("D8", "fails", partial(with_runs, diverged=QK_WORSE)),
    ("D8", "inconclusive", partial(with_runs, diverged=NONE)),
    ("D8", "inconclusive", partial(with_runs, diverged=DIVERGING, failed={HOT_QK: 2})),
    ("D9", "holds", partial(with_runs, diverged=NONE)),
    ("D9", "fails", partial(with_runs, diverged=NONE, logit={("deep", False, 1, HIGH): 2.0})),
    ("D9", "inconclusive", partial(with_runs, diverged=NONE, seeds=2)),
    ("D9", "inconclusive", real),  # every run at the largest ratio diverged: no seed left to pair
    ("D10", "holds", partial(with_runs, diverged=NONE)),
    ("D10", "fails", partial(with_runs, diverged=NONE, logit={("deep", False, 1, FULL): 12.0})),
    ("D10", "inconclusive", partial(with_runs, diverged=NONE, logit={("deep", False, 1, FULL): 6.0}, jitter=0.5)),
    ("D11", "holds", partial(with_runs, diverged=NONE)),
    ("D11", "fails", partial(with_runs, diverged=NONE, logit={("deep", False, 1, OVERWRITE): 12.0})),
    ("D11", "inconclusive", partial(with_runs, diverged=NONE, seeds=1)),
    ("D12", "holds", real),
    ("D12", "fails", partial(given, clf=classifier(onset=(0.5, 0.4, 0.6, 20, 20)))),
    ("D12", "inconclusive", partial(given, clf=classifier(onset=None))),  # skipped: too few divergences
    ("D12", "inconclusive", partial(given, clf=classifier(onset=(0.8, 0.6, 0.95, 5, 5)))),  # interval around 0.75
    ("D12", "inconclusive", partial(given, clf=classifier(onset=(1.0, 1.0, 1.0, 20, 2)))),  # 2 runs in one class
    # issue 40's review: features that tell the runs apart without any divergence (the null) decide nothing
    ("D12", "inconclusive", partial(given, clf=classifier(null=(1.0, 1.0, 1.0, 24, 8)))),
    ("D12", "inconclusive", partial(given, clf=classifier(null=None))),  # no null to beat
    # the LR-induced class read runs at the raised rate of which some failed to learn
    ("D12", "inconclusive", partial(with_runs, diverged=DIVERGING, failed={HOT: 2})),
    # the deep shape 16/20 under the reference noise, the small one 0/20; clean 0/20 at both
    ("D13", "holds", partial(with_runs, diverged={("deep", False, 1, REF): 16}, seeds=20)),
    # half the noisy runs of both sizes diverge, no clean one: the difference in differences is 0 within 0.25
    (
        "D13",
        "fails",
        partial(with_runs, diverged={("deep", False, 1, REF): 20, ("small", False, 1, REF): 20}, seeds=40),
    ),
    # issue 40's review: 0/n noisy runs at both sizes said "fails" on no evidence; now inconclusive
    ("D13", "inconclusive", partial(with_runs, diverged=NONE, seeds=40)),
    ("D13", "inconclusive", real),  # 6/8 against 0/8: the interval reaches below 0.25
    # the clean runs differ by size as much: the difference in differences is about 0, within a wide interval
    ("D13", "inconclusive", partial(with_runs, diverged={**DIVERGING, ("deep", False, 1, "clean"): 8})),
    ("T1", "holds", real),
    ("T1", "fails", partial(given, throughput=throughput(0.02))),
    ("T1", "inconclusive", partial(given, throughput=pd.DataFrame())),
    ("C1", "holds", real),
    ("C1", "fails", partial(given, stats=stats(count_error_max=1.0))),
    ("C1", "inconclusive", partial(given, stats=pd.DataFrame())),
    ("C2", "holds", real),
    ("C2", "fails", partial(given, stats=stats(docs_noised=9))),
    ("C2", "fails", partial(given, stats=stats(docs_with_noise=10))),  # noise in a document not chosen
    ("C2", "inconclusive", partial(given, stats=pd.DataFrame())),
    ("C3", "holds", real),
    ("C3", "fails", partial(given, stats=stats(recovered_mismatches=3))),
    ("C3", "inconclusive", partial(given, stats=pd.DataFrame())),
    ("C4", "holds", real),
    ("C4", "fails", partial(given, stats=stats(eot_moved=1))),
    ("C4", "inconclusive", partial(given, stats=pd.DataFrame())),
    ("C5", "holds", real),
    ("C5", "fails", partial(given, stats=stats(uniform_p=1e-6))),
    ("C5", "inconclusive", partial(given, stats=stats(uniform_p=math.nan).assign(uniform_p=math.nan))),
]


@pytest.mark.parametrize(
    "claim_id, expected, scenario", VERDICT_CASES, ids=[f"{c[0]}-{c[1]}-{i}" for i, c in enumerate(VERDICT_CASES)]
)
def test_claim_verdict_in_scenario(claim_id, expected, scenario):
    table = decided(scenario())
    assert table.loc[claim_id, "verdict"] == expected, table.loc[claim_id, "note"]


def test_every_claim_is_measured_and_the_kinds_are_as_stated():
    table = decided(real())
    assert set(table.index) == {d.claim_id for d in DEFINITIONS}
    assert table.loc["D1", "kind"] == "soft" and set(table.loc[["C1", "C2", "C3", "C4", "C5"], "kind"]) == {"check"}


def test_no_divergence_anywhere_leaves_every_rate_claim_inconclusive_with_its_runs():
    table = decided(with_runs(diverged=NONE))
    for claim in ("D1", "D2", "D3", "D4", "D5", "D8"):
        assert table.loc[claim, "verdict"] == "inconclusive" and "0/8" in table.loc[claim, "note"]


def test_proxies_are_paired_by_seed():
    # a seed effect shared by both arms cancels: the ratio is exactly 1.5 in every seed
    frame = runs(diverged=NONE, jitter=0.0)
    seed_effect = np.exp(np.linspace(-2, 2, 8))
    for setting in (REF, FULL):
        sel = (
            (frame["setting"] == setting)
            & (frame["shape"] == "deep")
            & ~frame["qk_norm"]
            & (frame["lr_multiplier"] == 1)
        )
        frame.loc[sel, "max_attn_logit"] *= seed_effect[frame.loc[sel, "seed"]]
    row = decided(inputs(runs=frame)).loc["D10"]
    assert row["value"] == pytest.approx(math.log(6.0 / 4.2)) and row["verdict"] == "holds"


def test_insert_and_overwrite_are_compared_at_equal_stream_and_document_noise_shares():
    """D4 and D11 read the overwrite setting that puts as much noise into the stream and into a noised document as the
    reference insert (alpha 0.5 in 2/3 of the documents), not the one at equal alpha and d (a quarter of the stream)
    nor, since issue 40's review, the one at equal stream share only (alpha 2/3 at d 0.5: 2/3 of a noised document),
    which is a sensitivity row: here only those two diverge, so D4 holds on the matched arm."""
    equal_alpha, share_only = ("deep", False, 1, OVERWRITE_EQUAL_ALPHA), ("deep", False, 1, OVERWRITE_SHARE_ONLY)
    cells = [*CELLS, equal_alpha, share_only]
    table = decided(with_runs(diverged={**DIVERGING, equal_alpha: 8, share_only: 8}, cells=cells))
    assert table.loc["D4", "note"].startswith(f"{REF} 6/8 vs {OVERWRITE} 0/8")
    assert (
        OVERWRITE_EQUAL_ALPHA not in table.loc["D4", "note"]
        and f"sensitivity, {OVERWRITE_SHARE_ONLY}" in table.loc["D4", "note"]
    )
    assert table.loc["D4", "verdict"] == "holds"
    assert OVERWRITE in table.loc["D11", "note"] and f"sensitivity, {OVERWRITE_SHARE_ONLY}" in table.loc["D11", "note"]


def test_the_difference_in_differences_interval_is_newcombes_for_two_rates():
    spread = rate_difference(6, 8, 1, 9)
    estimate, low, high = did_interval([(6, 8), (1, 9)], [1, -1])
    assert (estimate, low, high) == pytest.approx((spread.mean, spread.low, spread.high))
    estimate, low, high = did_interval([(6, 8), (0, 8), (1, 8), (0, 8)], [1, -1, -1, 1])
    assert estimate == pytest.approx(5 / 8) and low < 5 / 8 < high


def test_the_proxy_notes_give_the_logit_level_of_raised_rate_runs_that_learned_only():
    """Issue 40's second review: the x100 runs that reached logits of ~1e4 "without diverging" had failed to learn;
    the notes give the level of the raised-rate clean runs that learned, and leave the collapsed ones out."""
    table = decided(with_runs(diverged=NONE))
    for claim in ("D9", "D10", "D11"):
        assert "clean runs at LR x100 that learned reach a max attention logit of 1.04e+04" in table.loc[claim, "note"]
    table = decided(with_runs(diverged=NONE, failed={HOT: 8}))
    for claim in ("D9", "D10", "D11"):
        note = table.loc[claim, "note"]
        assert "reach a max attention logit" not in note and "e+04" not in note
        assert "8 of 8 clean runs at LR x100 failed to learn and are left out" in note
    half = decided(with_runs(diverged=NONE, failed={HOT: 4}, logit={HOT: 50.0})).loc["D9", "note"]
    assert "reach a max attention logit of" in half and "4 of 8 clean runs at LR x100 failed to learn" in half


def test_claims_reading_collapsed_raised_rate_runs_say_so_and_keep_the_measured_value():
    table = decided(with_runs(diverged=NONE, failed={HOT: 8}))
    for claim in ("D6", "D8", "D12"):
        note = table.loc[claim, "note"]
        assert table.loc[claim, "verdict"] == "inconclusive" and "failed to learn" in note, note
    assert "measured 0 [" in table.loc["D6", "note"] and "0/8 clean runs at LR x100 diverged" in table.loc["D6", "note"]
    # runs that learned leave the verdicts as they were
    assert decided(real()).loc[["D6", "D8", "D12"], "verdict"].tolist() == ["holds"] * 3


def test_d1s_paper_value_is_in_its_note_beside_our_noisy_run_rate():
    """Issue 40's second review: the paper's 0.5 is a noisy-run divergence rate (2 of 4 seeds), D1 a rate difference;
    the number sits in the note beside ours, not in paper_value beside the difference."""
    row = decided(with_runs(diverged=NONE)).loc["D1"]
    assert math.isnan(row["paper_value"])
    assert "noisy-run divergence rate: ours 0/40 = 0 (every noise setting pooled), the paper's 2/4 = 0.5" in row["note"]


def test_insert_and_overwrite_say_equal_in_expectation_and_give_the_measured_shares():
    """Issue 40's second review: the stream shares are equal only in expectation (quick: 0.316-0.361 insert against
    0.355-0.385 overwrite over the placement seeds); the statements say so and the notes give the measured range."""
    definitions = {d.claim_id: d for d in DEFINITIONS}
    for claim in ("D4", "D11"):
        text = " ".join(definitions[claim].statement.split())
        assert "equal in expectation" in text and "the same shares of noise tokens" not in text
        assert "the same share of noise tokens" not in text
    shares = pd.DataFrame(
        {"setting": [REF, REF, OVERWRITE, OVERWRITE], "seed": [0, 1, 0, 1], "noise_share": [0.316, 0.361, 0.355, 0.385]}
    )
    table = decided(given(stats=pd.concat([stats(), shares], ignore_index=True)))
    for claim in ("D4", "D11"):
        note = table.loc[claim, "note"]
        assert f"{REF} 0.3385 (0.316-0.361 over 2 placement seeds)" in note
        assert f"{OVERWRITE} 0.3700 (0.355-0.385 over 2 placement seeds)" in note


def test_no_hard_claim_says_what_the_pilot_grid_found_and_its_power():
    text = " ".join(load_yaml(ROOT / "config/claims/noisy_divergence.yaml")["no_hard_claim"].split())
    assert "a 3-seed pilot grid found no CPU-sized regime where clean runs diverge (0 of 3 per cell" in text
    assert f"a 20% divergence rate shows 0 of 3 with probability {0.8**3:.2f}" in text


def test_the_scale_claim_folds_the_gap_and_reads_the_configured_sizes():
    smaller_diverges = {("small", False, 1, REF): 16}
    row = decided(with_runs(diverged=smaller_diverges, seeds=20)).loc["D13"]
    assert row["value"] == pytest.approx(0.8) and row["verdict"] == "holds" and "-0.8" in row["note"]
    one_size = {**COMPARISONS, "scale_shapes": ["deep"]}
    measured = measure_claims(runs(diverged=DIVERGING), stats(), classifier(), throughput(), one_size)
    assert math.isnan(next(m for m in measured if m.claim_id == "D13").value)
