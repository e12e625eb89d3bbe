"""Paper 10's tables and figures on hand-made results: the NDCG@10 table with TGH's relative gain, the seed
spread, the cost of TGH beside SASRec's, and figures that draw every dataset and method."""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import pytest

from neurips26.seqrec_audit import plots, summary

NDCG = {
    ("rich", "pop"): 0.1,
    ("rich", "markov1"): 0.8,
    ("rich", "tgh1"): 0.7,
    ("rich", "tgh2"): 0.9,
    ("poor", "pop"): 0.05,
    ("poor", "markov1"): 0.2,
    ("poor", "tgh1"): 0.1,
    ("poor", "tgh2"): 0.15,
}


def metrics_table() -> pd.DataFrame:
    rows = [
        {
            "dataset": d,
            "method": m,
            "metric": "NDCG@10",
            "value": v,
            "seed": -1,
            "seconds_per_1000_users": 0.1 if m.startswith("tgh") else 0.01,
        }
        for (d, m), v in NDCG.items()
    ]
    rows += [
        {"dataset": d, "method": "sasrec", "metric": "NDCG@10", "value": v, "seed": s, "seconds_per_1000_users": 0.2}
        for d, s, v in [("rich", 0, 0.5), ("rich", 1, 0.7), ("poor", 0, 0.3), ("poor", 1, 0.3)]
    ]
    rows.append(
        {
            "dataset": "rich",
            "method": "tgh1",
            "metric": "Recall@10",
            "value": 1.0,
            "seed": -1,
            "seconds_per_1000_users": 0.1,
        }
    )
    return pd.DataFrame(rows)


def test_the_ndcg_table_orders_methods_and_gives_the_gain_by_hand():
    wide = summary.ndcg_wide(metrics_table(), ["poor", "rich"]).set_index("dataset")
    assert list(wide.index) == ["poor", "rich"]
    assert list(wide.columns[:5]) == ["pop", "markov1", "sasrec", "tgh1", "tgh2"]
    assert wide.loc["rich", "sasrec"] == pytest.approx(0.6)  # mean over seeds
    assert wide.loc["rich", "best_other"] == "markov1" and wide.loc["rich", "best_tgh"] == "tgh2"
    assert wide.loc["rich", "tgh_relative_gain"] == pytest.approx(0.9 / 0.8 - 1)
    assert wide.loc["poor", "best_other"] == "sasrec" and wide.loc["poor", "tgh_relative_gain"] == pytest.approx(
        0.15 / 0.3 - 1
    )


def test_seed_spread_counts_seeds():
    spread = summary.seed_spread(metrics_table()).set_index(["dataset", "method"])
    assert spread.loc[("rich", "sasrec"), "seeds"] == 2
    assert spread.loc[("rich", "sasrec"), "std"] == pytest.approx(np.std([0.5, 0.7], ddof=1))
    assert spread.loc[("poor", "tgh1"), "seeds"] == 1


def test_the_cost_table_puts_tgh_beside_each_trained_models_training_and_inference():
    training_free = metrics_table()
    training_free = training_free[training_free["method"] != "sasrec"]
    runs = pd.DataFrame(
        {
            "dataset": ["rich", "rich", "poor", "rich"],
            "model": ["sasrec"] * 3 + ["tiger"],
            "seed": [0, 1, 0, 0],
            "train_seconds": [10.0, 14.0, 8.0, 30.0],
            "inference_seconds": [0.5, 0.7, 0.4, 2.0],
            "users": [2000, 2000, 1000, 2000],
        }
    )
    cost = summary.cost_table(training_free, runs).set_index("dataset")
    assert cost.loc["rich", "tgh1_s_per_1000_users"] == pytest.approx(0.1)
    assert cost.loc["rich", "sasrec_train_s"] == pytest.approx(12.0)
    assert cost.loc["rich", "sasrec_inference_s_per_1000_users"] == pytest.approx(0.6 / 2000 * 1000)
    assert cost.loc["rich", "sasrec_total_s"] == pytest.approx(12.6)
    assert cost.loc["rich", "sasrec_total_over_tgh"] == pytest.approx(12.6 / (0.1 * 2))
    assert cost.loc["poor", "sasrec_total_over_tgh"] == pytest.approx(8.4 / (0.1 * 1))
    assert cost.loc["rich", "tiger_total_s"] == pytest.approx(32.0) and np.isnan(cost.loc["poor", "tiger_total_s"])


def test_the_figures_draw_every_dataset_and_method():
    wide = summary.ndcg_wide(metrics_table(), ["rich", "poor"])
    fig = plots.ndcg_heatmap(wide)
    image = fig.axes[0].images[0].get_array()
    assert image.shape == (2, 5) and np.nanmax(image) == pytest.approx(1.0)
    assert [t.get_text() for t in fig.axes[0].get_xticklabels()] == ["pop", "markov1", "sasrec", "tgh1*", "tgh2*"]
    plt.close(fig)
    gains = wide[["dataset", "tgh_relative_gain"]].assign(
        cov1=[0.9, 0.2], perplexity=[3.0, 25.0], FeatAUC=[0.9, 0.7], HD=[-0.2, 0.5]
    )
    fig = plots.gain_vs_diagnostics(gains)
    assert len(fig.axes) == 4 and all(len(ax.collections[0].get_offsets()) == 2 for ax in fig.axes)
    plt.close(fig)
    training = pd.DataFrame(
        {
            "model": ["sasrec"] * 3 + ["tiger"] * 3,
            "dataset": ["rich"] * 6,
            "seed": [0] * 6,
            "epoch": [1, 2, 3] * 2,
            "valid_ndcg10": [0.1, 0.3, 0.2, 0.2, np.nan, 0.4],
            "best": [False, True, False, False, False, True],
        }
    )
    fig = plots.training_curves(training, wide)
    assert len(fig.axes) == 2
    kept = [[line for line in ax.lines if line.get_marker() == "*"][0] for ax in fig.axes]
    assert list(kept[0].get_xdata()) == [2] and list(kept[1].get_xdata()) == [3]
    plt.close(fig)
