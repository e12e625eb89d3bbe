"""Paper 15's report tables: the item set per split and kind, the accuracy/ECE/KL table with its spread over seeds,
seed disagreement, cartography's rank correlations, and the paper's numbers beside ours (arXiv 2605.18648, as quoted
by a secondary source)."""

from __future__ import annotations

import numpy as np
import pandas as pd

from neurips26.common.claims import t_interval

from .itemset import KIND_NAMES, ItemSet
from .labels import align_to_labels, entropy, mode_shift_share, soft_from_votes
from .metrics import paper_numbers_frame
from .splits import SPLITS

__all__ = ["data_summary", "metric_table", "paper_beside_ours", "report_tables"]

SIMULATED_NOTE = "SIMULATED annotators"  # every table and figure of a simulated item set says so


def data_summary(items: ItemSet) -> pd.DataFrame:
    """Per split and item kind: items, the share whose human mode differs from the original label, mean human
    entropy (nats), whether the votes are simulated, and the checks of the aligned soft labels (human_soft_aligned):
    the largest change of an item's entropy by the alignment and the share of items whose aligned mode is the
    original label (0 and 1 by construction)."""
    soft = soft_from_votes(items.counts)
    aligned = align_to_labels(soft, items.original)
    gap = np.abs(entropy(aligned) - entropy(soft))
    on_original = aligned[np.arange(len(aligned)), items.original] == aligned.max(axis=1)
    rows = []
    for code, split in enumerate(SPLITS):
        for kind in np.unique(items.kind):
            mask = (items.split == code) & (items.kind == kind)
            if mask.any():
                rows.append({"split": split, "kind": KIND_NAMES[int(kind)], "items": int(mask.sum()),
                             "mode_shift_share": mode_shift_share(items.counts[mask], items.original[mask]),
                             "human_entropy": float(items.human_entropy[mask].mean()),
                             "annotators": "simulated" if items.simulated else "human",
                             "aligned_entropy_gap": float(gap[mask].max()),
                             "aligned_mode_original": float(on_original[mask].mean())})  # fmt: skip
    return pd.DataFrame(rows)


def _spread(values) -> str:
    s = t_interval(list(values))
    if s.runs < 2:
        return f"{s.mean:.4f}"
    return f"{s.mean:.4f} ± {(s.high - s.low) / 2:.4f}"


METRIC_NAMES = ("accuracy", "accuracy_majority", "ece", "kl_human", "kl_votes")


def metric_table(metrics: pd.DataFrame, subsets=("all", "difficult"), names=METRIC_NAMES):
    """Condition x (metric, subset): mean over seeds ± the half width of the 95% t interval."""
    rows = metrics[metrics["subset"].isin(subsets) & metrics["metric"].isin(names) & (metrics["seed"] >= 0)]
    table = rows.groupby(["dataset", "condition", "metric", "subset"], sort=False)["value"].agg(_spread).reset_index()
    table["column"] = table["metric"] + " (" + table["subset"] + ")"
    return table.pivot(index=["dataset", "condition"], columns="column", values="value").reset_index()


def subset_sizes(metrics: pd.DataFrame) -> pd.DataFrame:
    """Test items per subset and dataset (the `items` rows of the metrics table)."""
    rows = metrics[metrics["metric"] == "items"]
    return rows.groupby(["dataset", "subset"], sort=False)["value"].first().astype(int).reset_index()


def trained_on_table(metrics: pd.DataFrame) -> pd.DataFrame:
    """Per dataset and condition: the mean entropy of the targets the members were trained on, the share whose mode
    is the original label, and the smoothing epsilon / teacher temperature (mean ± half width over seeds)."""
    names = ("target_entropy", "target_mode_original", "epsilon", "temperature")
    rows = metrics[metrics["metric"].isin(names) & (metrics["seed"] >= 0)]
    if rows.empty:
        return pd.DataFrame(columns=["dataset", "condition"])
    table = rows.groupby(["dataset", "condition", "metric"], sort=False)["value"].agg(_spread).reset_index()
    return table.pivot(index=["dataset", "condition"], columns="metric", values="value").reset_index().fillna("")


def disagreement_table(metrics: pd.DataFrame) -> pd.DataFrame:
    rows = metrics[metrics["metric"] == "seed_disagreement"]
    table = rows.groupby(["dataset", "condition", "subset"], sort=False)["value"].agg(_spread).reset_index()
    return table.pivot(index=["dataset", "condition"], columns="subset", values="value").reset_index()


def alignment_table(metrics: pd.DataFrame) -> pd.DataFrame:
    rows = metrics[metrics["metric"].str.startswith("spearman_")]
    table = rows.groupby(["dataset", "condition", "metric"], sort=False)["value"].agg(_spread).reset_index()
    return table.pivot(index=["dataset", "condition"], columns="metric", values="value").reset_index()


def paper_beside_ours(metrics: pd.DataFrame, dataset: str) -> pd.DataFrame:
    """The paper's numbers (metrics.PAPER_NUMBERS) beside ours on `dataset`: KL on the difficult test items, and the
    Spearman correlation of cartography confidence with human entropy on the training items."""
    ours_metric = {"kl_high_variation": ("kl_human", "difficult"),
                   "spearman_human_uncertainty": ("spearman_confidence", "train")}  # fmt: skip
    paper = paper_numbers_frame()
    values = []
    for row in paper.itertuples():
        metric, subset = ours_metric[row.metric]
        sel = metrics[(metrics["dataset"] == dataset) & (metrics["condition"] == row.condition)
                      & (metrics["metric"] == metric) & (metrics["subset"] == subset)]  # fmt: skip
        values.append(float(sel["value"].mean()) if len(sel) else np.nan)
    return paper.assign(ours=values)[["metric", "paper_condition", "condition", "paper_value", "ours", "source"]]


def report_tables(inp, params) -> dict:
    metrics = pd.read_parquet(inp.metrics)
    data = pd.read_parquet(inp.data)
    data = data[[c for c in ("dataset", "split", "kind", "items", "mode_shift_share", "human_entropy", "annotators")]]
    simulated = bool((data["annotators"] == "simulated").any())
    return {
        "annotators_note": SIMULATED_NOTE if simulated else "real human annotators",
        "data": data,
        "metric_table": metric_table(metrics),
        "subset_sizes": subset_sizes(metrics),
        "trained_on": trained_on_table(metrics),
        "disagreement": disagreement_table(metrics),
        "alignment": alignment_table(metrics),
        "paper": paper_beside_ours(metrics, params.primary),
    }
