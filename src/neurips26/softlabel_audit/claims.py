"""Paper 15's claims (arXiv 2605.18648), measured from the metrics table; the definitions (statement, threshold,
minimum seeds, null) are in config/claims/softlabel_audit.yaml.

Every comparison is paired by seed (members of one seed share initialisation and data order: training.py) and
decided by the 95% t interval over seeds of the per-seed difference, oriented so that the paper's direction is
positive. A claim's null is the same difference with the paper's mechanism (human soft information) taken out.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pandas as pd

from neurips26.common.claims import Measured, measured_from_spread, t_interval

__all__ = ["CLAIMS", "measure_claims", "paired"]


def per_seed(metrics: pd.DataFrame, dataset: str, condition: str, metric: str, subset: str) -> dict[int, float]:
    rows = metrics[
        (metrics["dataset"] == dataset)
        & (metrics["condition"] == condition)
        & (metrics["metric"] == metric)
        & (metrics["subset"] == subset)
        & (metrics["seed"] >= 0)
    ]
    return dict(zip(rows["seed"].astype(int), rows["value"].astype(float)))


def per_pair(metrics: pd.DataFrame, dataset: str, condition: str, subset: str) -> dict[str, float]:
    rows = metrics[(metrics["dataset"] == dataset) & (metrics["condition"] == condition)
                   & (metrics["metric"] == "seed_disagreement") & (metrics["subset"] == subset)]  # fmt: skip
    return dict(zip(rows["pair"], rows["value"].astype(float)))


def paired(minuend: dict, subtrahend: dict) -> list[float]:
    """Per key on both sides: minuend - subtrahend (finite values only)."""
    keys = sorted(set(minuend) & set(subtrahend))
    return [minuend[k] - subtrahend[k] for k in keys if np.isfinite(minuend[k]) and np.isfinite(subtrahend[k])]


# claim id -> (metric, subset, role a, role b, null role): the claim's value is metric(a) - metric(b) per seed (per
# pair of seeds for the disagreement), its null metric(a) - metric(null role), None where the claim has no null; roles
# are the keys of the config's `comparisons`
CLAIMS = {
    "H1": ("kl_human", "difficult", "teacher", "human", "majority"),
    "H2": ("kl_human", "difficult", "smoothing", "aligned", "original"),
    "H3": ("ece", "difficult", "original", "aligned", "smoothing"),
    "S1": ("accuracy", "all", "human", "original", None),
    "S2": ("seed_disagreement", "all", "original", "human", "smoothing"),
    "I1": ("spearman_confidence", "train", "teacher", "human", None),
}


def _measure(metrics, dataset, roles, claim_id) -> Measured:
    metric, subset, first, second, null_role = CLAIMS[claim_id]

    def values(role_a, role_b):
        if metric == "seed_disagreement":
            a, b = per_pair(metrics, dataset, roles[role_a], subset), per_pair(metrics, dataset, roles[role_b], subset)
        else:
            a, b = (per_seed(metrics, dataset, roles[r], metric, subset) for r in (role_a, role_b))
        return paired(a, b)

    unit = "seed pairs" if metric == "seed_disagreement" else "seeds"
    measured = measured_from_spread(claim_id, t_interval(values(first, second)),
                                    note=f"{metric} on {subset} items of {dataset}, paired over {unit}")  # fmt: skip
    if null_role is None:
        return measured
    null = t_interval(values(first, null_role))
    return replace(measured, null=null.mean, note=measured.note + f"; null ({roles[null_role]}): {null.text()}")


def mode_shift(data: pd.DataFrame) -> Measured:
    """I2: the share of morphs (all splits) whose simulated human mode is not the generator's label."""
    rows = data[data["kind"] == "morph"]
    if rows.empty:
        return Measured("I2", float("nan"), 0, note="no morphs in this item set")
    share = float((rows["mode_shift_share"] * rows["items"]).sum() / rows["items"].sum())
    return Measured("I2", share, int(rows["items"].sum()), note="morphs of every split, SIMULATED annotators")


def measure_claims(metrics: pd.DataFrame, data: pd.DataFrame, comparisons: dict) -> list[Measured]:
    dataset = comparisons["primary"]
    roles = {k: v for k, v in comparisons.items() if k != "primary"}
    measured = [_measure(metrics, dataset, roles, claim_id) for claim_id in CLAIMS]
    return measured + [mode_shift(data[data["dataset"] == dataset])]
