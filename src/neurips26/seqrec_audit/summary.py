"""Paper 10's tables from the per-dataset results: the long metrics table, the NDCG@10 table across datasets and
methods with TGH's relative gain over the best other method, the heuristic's gain beside each diagnostic, and the
cost of TGH (time per 1,000 users) beside SASRec's training and inference time."""

from __future__ import annotations

import numpy as np
import pandas as pd

from neurips26.seqrec_audit.claims import is_tgh, relative_gain

METHOD_ORDER = ("pop", "markov1", "itemknn_last", "itemknn_profile", "sasrec")


def method_order(methods) -> list[str]:
    """Baselines in a fixed order, then SASRec, then the TGH variants (unknown names last, sorted)."""
    methods = list(dict.fromkeys(methods))
    known = [m for m in METHOD_ORDER if m in methods]
    tgh = sorted(m for m in methods if is_tgh([m])[0])
    return known + sorted(set(methods) - set(known) - set(tgh)) + tgh


def ndcg_wide(metrics: pd.DataFrame, datasets: list[str], k: int = 10) -> pd.DataFrame:
    """NDCG@k per dataset (rows, in `datasets` order) and method (columns; mean over SASRec seeds), plus the best
    non-TGH method, the best TGH variant and TGH's relative gain (tgh / best other - 1)."""
    rows = metrics[metrics["metric"] == f"NDCG@{k}"]
    wide = rows.pivot_table(index="dataset", columns="method", values="value", aggfunc="mean")
    wide = wide.reindex(index=[d for d in datasets if d in wide.index], columns=method_order(wide.columns))
    tgh = is_tgh(wide.columns)
    others = wide.loc[:, ~tgh]
    out = wide.reset_index()
    out["best_other"] = others.idxmax(axis=1).to_numpy() if others.shape[1] else "none"
    out["best_tgh"] = wide.loc[:, tgh].idxmax(axis=1).to_numpy() if tgh.any() else "none"
    out["tgh_relative_gain"] = [relative_gain(metrics, d) for d in out["dataset"]]
    out.columns.name = None
    return out


def seed_spread(metrics: pd.DataFrame, metric: str = "NDCG@10") -> pd.DataFrame:
    """Per (dataset, method): mean, standard deviation and count over seeds of `metric` (the training-free
    methods have one deterministic value each)."""
    rows = metrics[metrics["metric"] == metric]
    return (rows.groupby(["dataset", "method"])["value"].agg(mean="mean", std="std", seeds="size")
            .reset_index())


def gains_with_diagnostics(wide: pd.DataFrame, diagnostics: pd.DataFrame) -> pd.DataFrame:
    """One row per dataset: TGH's relative gain and every diagnostic."""
    return wide[["dataset", "tgh_relative_gain"]].merge(diagnostics, on="dataset", how="inner")


def cost_table(training_free: pd.DataFrame, sasrec_runs: pd.DataFrame) -> pd.DataFrame:
    """Per dataset: each TGH variant's seconds per 1,000 users (it has no training), and SASRec's training seconds,
    inference seconds per 1,000 users and their total (mean over seeds), side by side.

    `training_free`: the long metrics table with `seconds_per_1000_users`; `sasrec_runs`: one row per (dataset,
    seed) with train_seconds, inference_seconds and users."""
    per_method = training_free.groupby(["dataset", "method"])["seconds_per_1000_users"].first().unstack()
    tgh = per_method.loc[:, is_tgh(per_method.columns)].add_suffix("_s_per_1000_users")
    sasrec = sasrec_runs.groupby("dataset").agg(sasrec_train_s=("train_seconds", "mean"),
                                                sasrec_inference_s=("inference_seconds", "mean"),
                                                users=("users", "first"))
    sasrec["sasrec_inference_s_per_1000_users"] = sasrec["sasrec_inference_s"] / sasrec["users"] * 1000
    sasrec["sasrec_total_s"] = sasrec["sasrec_train_s"] + sasrec["sasrec_inference_s"]
    table = tgh.join(sasrec, how="outer").reset_index()
    tgh_columns = [c for c in table.columns if c.endswith("_s_per_1000_users") and c.startswith("tgh")]
    if tgh_columns:
        tgh_total = table[tgh_columns].max(axis=1) * table["users"] / 1000
        table["sasrec_total_over_tgh"] = table["sasrec_total_s"] / tgh_total.replace(0, np.nan)
    return table
