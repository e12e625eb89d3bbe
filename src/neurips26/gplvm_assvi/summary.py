"""The tables paper 17's report renders besides the claims and the closing sections: the metric table (mean and
standard deviation over seeds per dataset and method), the training table, the cross-check and the breadth of q(U)
per dataset."""

from __future__ import annotations

import pandas as pd

__all__ = ["METRICS", "metric_table", "report_tables"]

METRICS = [
    "error_spearman",
    "rmse",
    "nlpd",
    "nlpd_without_noise",
    "coverage",
    "manifold_distance",
    "elbo",
    "uncertainty_spearman",
    "latent_sd",
    "latent_dependence",
    "latent_dependence_encoder",
    "qu_breadth",
]


def metric_table(metrics: pd.DataFrame) -> pd.DataFrame:
    """One row per (dataset, method): seeds, and each metric's mean and sd over seeds (PCA: one fit, no sd)."""
    rows = []
    for (dataset, method), group in metrics.groupby(["dataset", "method"], sort=False):
        row = {"dataset": dataset, "method": method, "seeds": int(group["seed"].nunique())}
        for m in METRICS:
            values = group[m].dropna() if m in group else pd.Series(dtype=float)
            row[m] = values.mean() if len(values) else float("nan")
            row[f"{m}_sd"] = values.std(ddof=1) if len(values) > 1 else float("nan")
        rows.append(row)
    return pd.DataFrame(rows)


def report_tables(inp, params) -> dict:
    metrics = pd.read_parquet(inp.metrics)
    traces = pd.read_parquet(inp.traces)
    table = metric_table(metrics)
    compact = table[["dataset", "method", "seeds"]].copy()
    for m in ("rmse", "nlpd", "coverage", "manifold_distance", "elbo"):
        compact[m] = [
            f"{v:.4f}" + (f" ± {s:.4f}" if s == s else "") if v == v else "n/a"
            for v, s in zip(table[m], table[f"{m}_sd"])
        ]
    training = (
        traces.sort_values("step")
        .groupby(["dataset", "method", "seed"])
        .agg(
            steps=("step", "max"), final_elbo=("elbo", "last"), points=("points", "first"), seconds=("seconds", "first")
        )
        .reset_index()
    )
    training["elbo_per_point"] = training["final_elbo"] / training["points"]
    training = training.groupby(["dataset", "method"]).agg(
        runs=("seed", "size"), steps=("steps", "first"), elbo_per_point=("elbo_per_point", "mean"),
        seconds_mean=("seconds", "mean"),
    ).reset_index()  # fmt: skip
    gp = metrics[metrics["method"] != "pca"]
    return {
        "metric_table": compact,
        "full_table": table,
        "training": training,
        "crosscheck_max": float(gp["crosscheck_relative"].max()) if len(gp) else float("nan"),
        "crosscheck_runs": int(gp["crosscheck_relative"].notna().sum()),
        "crosscheck_missing": int(gp["crosscheck_relative"].isna().sum()),
        "dependence_max": _dependence_max(gp),
        "uncertainty": table[table["method"] != "pca"][
            [
                "dataset",
                "method",
                "uncertainty_spearman",
                "uncertainty_spearman_sd",
                "nlpd_without_noise",
                "latent_sd",
                "latent_dependence",
                "latent_dependence_encoder",
                "error_spearman",
            ]
        ],  # fmt: skip
        "breadth": breadth_table(metrics),
        "dependence_encoder_max": _dependence_max(gp, "latent_dependence_encoder"),
    }


def breadth_table(metrics: pd.DataFrame) -> pd.DataFrame:
    """Per dataset: the q(U) breadth (:func:`.metrics.qu_breadth`) mean and sd over every GPLVM run, and over the
    runs of ssvi_amort and ssvi_indep (C9's pair)."""
    gp = metrics[metrics["method"] != "pca"]
    if "qu_breadth" not in gp:
        return pd.DataFrame(columns=["dataset", "runs", "breadth", "breadth_sd", "breadth_c9_pair"])
    rows = []
    for dataset, group in gp.groupby("dataset", sort=False):
        pair = group[group["method"].isin(["ssvi_amort", "ssvi_indep"])]["qu_breadth"]
        rows.append({"dataset": dataset, "runs": len(group), "breadth": group["qu_breadth"].mean(),
                     "breadth_sd": group["qu_breadth"].std(ddof=1),
                     "breadth_c9_pair": pair.mean() if len(pair) else float("nan")})  # fmt: skip
    return pd.DataFrame(rows)


def _dependence_max(runs: pd.DataFrame, column: str = "latent_dependence") -> float | None:
    """The largest dependence on U (``column``) over the runs of ssvi_amort; None unless every run has a value."""
    if column not in runs:
        return None
    values = runs.loc[runs["method"] == "ssvi_amort", column]
    return float(values.max()) if len(values) and values.notna().all() else None
