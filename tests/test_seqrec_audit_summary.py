"""Paper 10: the report's tables built in the library (all metrics in dataset and method order, NDCG@10 per run,
the trained models' descriptions)."""

from __future__ import annotations

import pandas as pd

from neurips26.seqrec_audit.summary import FULL_METRICS, all_metrics, model_descriptions, per_run_ndcg


def test_all_metrics_orders_datasets_as_configured_and_methods_baselines_first():
    rows = [
        {"dataset": d, "method": m, "metric": metric, "value": 0.1}
        for d in ("b", "a")
        for m in ("tgh1", "pop", "sasrec")
        for metric in FULL_METRICS
    ]
    full = all_metrics(pd.DataFrame(rows), ["a", "b"])
    assert list(full.columns) == ["dataset", "method", *FULL_METRICS]
    assert list(full["dataset"]) == ["a"] * 3 + ["b"] * 3
    assert list(full["method"])[:3] == ["pop", "sasrec", "tgh1"]


def test_per_run_ndcg_is_empty_with_one_run_per_dataset():
    runs = pd.DataFrame(
        {
            "dataset": ["a", "a"],
            "data_seed": [0, 0],
            "seed": [0, 0],
            "method": ["pop", "tgh1"],
            "metric": ["NDCG@10", "NDCG@10"],
            "value": [0.1, 0.2],
        }
    )
    assert per_run_ndcg(runs, ["a"]).empty


def test_model_descriptions_name_depth_width_epochs_and_learning_rate():
    text = model_descriptions(
        ["sasrec", "tiger"],
        {
            "sasrec": {"n_blocks": 2, "d_model": 64, "epochs": 5, "lr": 1e-3},
            "tiger": {"n_layers": 2, "d_model": 32, "epochs": 3, "lr": 5e-4},
        },
    )
    assert text == (
        "SASRec, cross-entropy over all items (2 blocks, d = 64, 5 epochs at lr 0.001); "
        "TIGER-style generative retrieval of RQ-VAE semantic IDs (2 encoder and decoder layers, d = 32, 3 epochs at "
        "lr 0.0005)"
    )


def test_trained_tables_carry_the_time_per_1000_users_and_one_row_per_epoch():
    from neurips26.seqrec_audit.artifacts import trained_tables
    from neurips26.seqrec_audit.trained import Fitted

    fitted = Fitted(None, [{"epoch": 1}, {"epoch": 2}], {"NDCG@10": 0.5, "Recall@10": 0.7}, 3.0, 0.5)
    metrics, training = trained_tables(fitted, "sasrec", "a", 0, 250)
    assert list(metrics["metric"]) == ["NDCG@10", "Recall@10"]
    assert (metrics["seconds_per_1000_users"] == 2.0).all() and (metrics["dataset"] == "a").all()
    assert list(training["epoch"]) == [1, 2] and (training["train_seconds"] == 3.0).all()
