"""Paper 05's normalised regret, the regret and validity tables and the figures on hand-made trajectories and tables."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from neurips26.bbo_pile.regret import excluded_boxes, normalized_regret, paired_comparison
from neurips26.bbo_pile.summary import regret_table, validity_table


def trials(rows):
    return pd.DataFrame(rows, columns=["bb_id", "method", "seed", "trial", "y"])


def hand_trials():
    # box a: RS first values 10 and 6 (median 8); f* = min(random 1.0, all y) = 0.5 (CMA's last trial)
    return trials(
        [
            ("a", "RS", 0, 0, 10.0),
            ("a", "RS", 0, 1, 4.0),
            ("a", "RS", 0, 2, 5.0),
            ("a", "RS", 1, 0, 6.0),
            ("a", "RS", 1, 1, 7.0),
            ("a", "RS", 1, 2, 3.0),
            ("a", "CMA", 0, 0, 9.0),
            ("a", "CMA", 0, 1, np.nan),
            ("a", "CMA", 0, 2, 0.5),
        ]
    )


def test_normalised_regret_by_hand():
    reference = pd.DataFrame({"bb_id": ["a"], "random_min": [1.0]})
    regret = normalized_regret(hand_trials(), reference).set_index(["method", "seed", "T"])
    assert regret["f_star"].unique().tolist() == [0.5]
    scale = 8.0 - 0.5
    assert regret.loc[("RS", 0, 1), "norm_regret"] == pytest.approx((10 - 0.5) / scale)
    assert regret.loc[("RS", 0, 3), "norm_regret"] == pytest.approx((4 - 0.5) / scale)  # best so far, not last
    assert regret.loc[("CMA", 0, 2), "norm_regret"] == pytest.approx((9 - 0.5) / scale)  # NaN never a minimum
    assert regret.loc[("CMA", 0, 3), "norm_regret"] == 0.0


def test_a_box_whose_baseline_starts_at_the_minimum_is_left_out_and_named():
    rows = trials([("b", "RS", 0, 0, 1.0), ("b", "RS", 0, 1, 2.0), ("b", "CMA", 0, 0, 3.0), ("b", "CMA", 0, 1, 1.0)])
    regret = normalized_regret(rows, pd.DataFrame({"bb_id": ["b"], "random_min": [1.0]}))
    assert regret["norm_regret"].isna().all() and excluded_boxes(regret) == ["b"]
    with pytest.raises(ValueError, match="no RS trials"):
        normalized_regret(rows[rows["method"] == "CMA"], pd.DataFrame({"bb_id": ["b"], "random_min": [0.0]}))


def test_paired_comparison_and_the_regret_table():
    rng = np.random.default_rng(0)
    rows = []
    for box in range(12):
        for seed in range(2):
            for t in range(4):
                rows.append((f"b{box}", "RS", seed, t, 10 + rng.random()))
                rows.append((f"b{box}", "model:CMA:constrained", seed, t, 5 + rng.random()))
    reference = pd.DataFrame({"bb_id": [f"b{k}" for k in range(12)], "random_min": [0.0] * 12})
    regret = normalized_regret(trials(rows), reference)
    better = paired_comparison(regret, "model:CMA:constrained", "RS", 4)
    assert better["pairs"] == 24 and better["share_lower"] == 1.0 and better["p_value"] < 1e-4
    worse = paired_comparison(regret, "RS", "model:CMA:constrained", 4)
    assert worse["p_value"] > 0.99
    table = regret_table(regret, horizons=(1, 4)).set_index("method")
    assert table.loc["model:CMA:constrained", "mean_rank_last"] == 1.0 and table.loc["RS", "runs"] == 24


def model_regret(p_good=True):
    """The model (constrained, conditioned on CMA) and RS on ten boxes; the model starts lower when `p_good`."""
    rows = []
    for box in range(10):
        for t in range(3):
            rows.append((f"b{box}", "RS", 0, t, 10.0 - t))
            rows.append((f"b{box}", "model:CMA:constrained", 0, t, (5.0 if p_good else 20.0) - t + 0.01 * box))
    reference = pd.DataFrame({"bb_id": [f"b{k}" for k in range(10)], "random_min": [0.0] * 10})
    return normalized_regret(trials(rows), reference)


def test_the_validity_table_counts_decoded_trials_per_method_and_decoding():
    decoded = pd.DataFrame(
        {
            "method": ["m:c", "m:c", "m:f", "m:f", "m:f"],
            "decoding": ["constrained", "constrained", "free", "free", "free"],
            "valid_decode": [True, True, True, False, False],
        }
    )
    table = validity_table(decoded).set_index("method")
    assert table.loc["m:c", "trials"] == 2 and table.loc["m:c", "valid"] == 2
    assert table.loc["m:f", "trials"] == 3 and table.loc["m:f", "valid"] == 1


def test_the_figures_draw_every_method_run_and_optimizer():
    import matplotlib.pyplot as plt

    from neurips26.bbo_pile import plots

    imitation = pd.DataFrame(
        [
            {"true_algo": t, "cond_algo": c, "nll": (1.0 if t == c else 2.0) + (t == "RS")}
            for t in ("CMA", "RS")
            for c in ("CMA", "RS")
        ]
    )
    fig = plots.imitation_matrix(imitation)
    # each row relative to its mean: the RS row's 1-nat offset is gone, the own token is likelier in both
    assert fig.axes[0].images[0].get_array().tolist() == [[-0.5, 0.5], [0.5, -0.5]]
    plt.close(fig)
    fig = plots.regret_curves(model_regret())
    assert {line.get_label() for line in fig.axes[0].lines} == {"RS", "model:CMA:constrained"}
    plt.close(fig)
    training = pd.DataFrame(
        {"run": ["a", "a", "b", "b"], "flops": [1e9, 2e9, 1e9, 4e9], "val_loss": [3.0, 2.5, 2.8, 2.0]}
    )
    runs = pd.DataFrame({"run": ["a", "b"], "flops": [2e9, 4e9], "val_loss": [2.5, 2.0], "frontier": [True, True]})
    fit = pd.Series({"a": 100.0, "b": -0.2, "r2": 0.9, "holdout_run": "b", "holdout_rel_error": 0.05})
    fig = plots.scaling(training, runs, fit)
    assert fig.axes[0].get_xscale() == "log" and len(fig.axes[0].lines) == 3  # two runs and the fitted law
    plt.close(fig)
