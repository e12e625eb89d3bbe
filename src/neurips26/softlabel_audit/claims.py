"""Paper 15's claims (arXiv 2605.18648), measured from the metrics table; the definitions (statement, threshold,
minimum seeds, null) are in config/claims/softlabel_audit.yaml.

Every comparison is paired by seed (members of one seed share initialisation and data order: training.py) and
decided by the 95% t interval over seeds of the per-seed difference, oriented so that the paper's direction is
positive. A claim's null is the same difference with the paper's mechanism (human soft information) taken out.
CLAIMS are measured on the primary dataset (config `comparisons.primary`), REAL_CLAIMS on the dataset whose votes
are real people's (CIFAR-10H, Peterson et al. 2019: paper scale), CHECKS on the targets the aligned members were
trained on (metrics table, every dataset).
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


# claim id -> (metric, subset, role a, role b, null role[, beside]): the claim's value is metric(a) - metric(b) per
# seed (per pair of seeds for the disagreement), its null metric(a) - metric(null role), None where the claim has no
# null; `beside`, where given, a second pair of roles whose difference the note reports; roles are the keys of the
# config's `comparisons`. The null `shuffled` (human_soft_shuffled) is the aligned human soft labels permuted among
# the training items of the same original class: the same labels, entropies and mode, the wrong item-specific pattern
CLAIMS = {
    "H1": ("kl_human", "difficult", "teacher_aligned", "aligned", "shuffled"),
    "H2": ("kl_human", "difficult", "smoothing", "aligned", "shuffled"),
    "H3": ("ece", "difficult", "original", "aligned", "shuffled"),
    "S1": ("accuracy", "all", "aligned", "original", None, ("human", "majority")),
    "S2": ("seed_disagreement", "all", "original", "aligned", "shuffled"),
    "I1": ("spearman_confidence", "train", "teacher", "human", "majority"),
}
# the same comparisons on real human votes: cartography's alignment with human uncertainty (I1), KL to the humans on
# difficult items (H1) and calibration on difficult items from the soft information alone (H3)
REAL_CLAIMS = {
    "R1": ("spearman_confidence", "train", "teacher", "human", "majority"),
    "R2": ("kl_human", "difficult", "teacher_aligned", "aligned", "shuffled"),
    "R3": ("ece", "difficult", "original", "aligned", "shuffled"),
}
# check id -> (metric of the aligned members' targets in the metrics table, how rows combine): properties of what the
# human_soft_aligned members were actually trained on (evaluation.trained_on), every dataset and seed
CHECKS = {"K1": ("target_entropy_gap", "max"), "K2": ("target_mode_original", "min")}


def _measure(metrics, dataset, roles, claim_id, claims=CLAIMS) -> Measured:
    metric, subset, first, second, null_role, *beside = claims[claim_id]

    def values(role_a, role_b):
        if metric == "seed_disagreement":
            a, b = per_pair(metrics, dataset, roles[role_a], subset), per_pair(metrics, dataset, roles[role_b], subset)
        else:
            a, b = (per_seed(metrics, dataset, roles[r], metric, subset) for r in (role_a, role_b))
        return paired(a, b)

    unit = "seed pairs" if metric == "seed_disagreement" else "seeds"
    measured = measured_from_spread(claim_id, t_interval(values(first, second)),
                                    note=f"{metric} on {subset} items of {dataset}, paired over {unit}")  # fmt: skip
    for a, b in beside:
        measured = replace(measured, note=measured.note + f"; beside it, {roles[a]} - {roles[b]}: "
                           f"{t_interval(values(a, b)).text()}")  # fmt: skip
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
        return Measured(claim_id, float("nan"), 0, note="not run at this scale: no dataset with real human votes "
                        "(CIFAR-10H: paper scale)")  # fmt: skip
    return _measure(metrics, dataset, roles, claim_id, REAL_CLAIMS)


def check(metrics: pd.DataFrame, roles: dict, check_id: str) -> Measured:
    metric, how = CHECKS[check_id]
    rows = metrics[(metrics["metric"] == metric) & (metrics["condition"] == roles["aligned"])] if len(metrics) else []
    if len(rows) == 0 or rows["value"].isna().any():
        return Measured(check_id, float("nan"), 0, note=f"no {metric} of {roles['aligned']} in the metrics")
    value = float(rows["value"].max() if how == "max" else rows["value"].min())
    return Measured(check_id, value, len(rows), note=f"{how} over {len(rows)} {roles['aligned']} members (the targets "
                    f"they were trained on) of datasets {sorted(set(rows['dataset']))}")  # fmt: skip


def measure_claims(metrics: pd.DataFrame, data: pd.DataFrame, comparisons: dict) -> list[Measured]:
    dataset = comparisons["primary"]
    roles = {k: v for k, v in comparisons.items() if k != "primary"}
    measured = [_measure(metrics, dataset, roles, claim_id) for claim_id in CLAIMS]
    measured += [_real(metrics, data, roles, claim_id) for claim_id in REAL_CLAIMS]
    measured += [check(metrics, roles, check_id) for check_id in CHECKS]
    return measured + [mode_shift(data[data["dataset"] == dataset])]
