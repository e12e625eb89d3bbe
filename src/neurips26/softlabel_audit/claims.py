"""Paper 15's claims (arXiv 2605.18648), measured from the metrics table; the definitions (statement, threshold,
minimum seeds, null) are in config/claims/softlabel_audit.yaml.

Every comparison is paired by seed (members of one seed share initialisation and data order: training.py) and
decided by the 95% t interval over seeds of the per-seed difference, oriented so that the paper's direction is
positive. A claim's null is the same difference with the paper's mechanism (human soft information) taken out.
CLAIMS are measured on the primary dataset (config `comparisons.primary`), REAL_CLAIMS on the dataset whose votes
are real people's (CIFAR-10H, Peterson et al. 2019: paper scale), CHECKS on the data summaries of every dataset.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pandas as pd

from neurips26.common.claims import Measured, measured_from_spread, t_interval

__all__ = ["CHECKS", "CLAIMS", "REAL_CLAIMS", "measure_claims", "paired"]


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
# the same comparisons on real human votes: cartography's alignment with human uncertainty (I1 with a null), KL to the
# humans on difficult items (H1) and calibration on difficult items from the soft information alone (H3)
REAL_CLAIMS = {
    "R1": ("spearman_confidence", "train", "teacher", "human", "majority"),
    "R2": ("kl_human", "difficult", "teacher", "human", "majority"),
    "R3": ("ece", "difficult", "original", "aligned", "smoothing"),
}
# check id -> (data summary column, how rows combine): properties that labels.align_to_labels guarantees
CHECKS = {"K1": ("aligned_entropy_gap", "max"), "K2": ("aligned_mode_original", "min")}


def _measure(metrics, dataset, roles, claim_id, claims=CLAIMS) -> Measured:
    metric, subset, first, second, null_role = claims[claim_id]

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


def real_votes_dataset(data: pd.DataFrame) -> str | None:
    """The dataset whose votes are real people's (data summary `annotators` == "human"); None where there is none."""
    if "annotators" not in data:
        return None
    names = sorted(set(data.loc[data["annotators"] == "human", "dataset"]))
    if len(names) > 1:
        raise ValueError(f"more than one dataset with real human votes: {names}")
    return names[0] if names else None


def _real(metrics, data, roles, claim_id) -> Measured:
    dataset = real_votes_dataset(data)
    if dataset is None:
        return Measured(claim_id, float("nan"), 0, note="no dataset with real human votes at this scale (CIFAR-10H: "
                        "paper scale)")  # fmt: skip
    return _measure(metrics, dataset, roles, claim_id, REAL_CLAIMS)


def check(data: pd.DataFrame, check_id: str) -> Measured:
    column, how = CHECKS[check_id]
    if column not in data or data.empty:
        return Measured(check_id, float("nan"), 0, note=f"no {column} in the data summaries")
    value = float(data[column].max() if how == "max" else data[column].min())
    return Measured(check_id, value, int(data["items"].sum()), note=f"{how} over {len(data)} split x kind rows of "
                    f"datasets {sorted(set(data['dataset']))}")  # fmt: skip


def measure_claims(metrics: pd.DataFrame, data: pd.DataFrame, comparisons: dict) -> list[Measured]:
    dataset = comparisons["primary"]
    roles = {k: v for k, v in comparisons.items() if k != "primary"}
    measured = [_measure(metrics, dataset, roles, claim_id) for claim_id in CLAIMS]
    measured += [_real(metrics, data, roles, claim_id) for claim_id in REAL_CLAIMS]
    measured += [check(data, check_id) for check_id in CHECKS]
    return measured + [mode_shift(data[data["dataset"] == dataset])]
