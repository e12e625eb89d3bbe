"""Paper 15's evaluation: per member, accuracy, ECE and KL(human || model) on the test items (all, the difficult
ones, clean digits, morphs); per condition and pair of seeds, their disagreement; per member, the data map of its
training run and its rank correlation with human uncertainty (arXiv 2605.18648; dataset cartography: Swayamdipta et
al. 2020). Long form: one row per (condition, seed, subset, metric)."""

from __future__ import annotations

from itertools import combinations

import numpy as np
import pandas as pd

from .cartography import alignment, cartography
from .itemset import KIND_NAMES, ItemSet
from .labels import soft_from_votes
from .members import Member
from .metrics import ECE_BINS, accuracy, expected_calibration_error, mean_kl, seed_disagreement
from .splits import DIFFICULT_QUANTILE, difficult_items

__all__ = ["COLUMNS", "cartography_frame", "evaluate", "test_subsets"]

COLUMNS = ["condition", "seed", "pair", "subset", "metric", "value"]


def test_subsets(items: ItemSet, quantile: float = DIFFICULT_QUANTILE) -> dict[str, np.ndarray]:
    """Boolean masks over the test items: all, difficult (human entropy in the top tercile of the test items), and
    each item kind present (clean, morph, real)."""
    test = items.indices("test")
    masks = {"all": np.ones(len(test), bool), "difficult": difficult_items(items.human_entropy[test], quantile)}
    for code in np.unique(items.kind[test]):
        masks[KIND_NAMES[int(code)]] = items.kind[test] == code
    return masks


def evaluate(
    items: ItemSet,
    members: list[Member],
    test_probs: np.ndarray,
    gold_prob: np.ndarray,
    correct: np.ndarray,
    n_bins: int = ECE_BINS,
    quantile: float = DIFFICULT_QUANTILE,
) -> pd.DataFrame:
    """The metrics table. `test_probs` (M, N_test, K) are the members' predictions on the test split; `gold_prob`
    and `correct` (M, E, N_train) their training dynamics (training.Dynamics)."""
    test, train = items.indices("test"), items.indices("train")
    gold, human = items.original[test], soft_from_votes(items.counts[test])
    human_entropy_train = items.human_entropy[train]
    masks = test_subsets(items, quantile)
    rows = []
    for m, member in enumerate(members):
        p = test_probs[m]
        for subset, mask in masks.items():
            rows += [
                (member.condition, member.seed, "", subset, "accuracy", accuracy(p, gold, mask)),
                (member.condition, member.seed, "", subset, "ece", expected_calibration_error(p, gold, n_bins, mask)),
                (member.condition, member.seed, "", subset, "kl_human", mean_kl(human, p, mask)),
            ]
        carto = cartography(gold_prob[m], correct[m])
        for name, value in alignment(carto, human_entropy_train).items():
            rows.append((member.condition, member.seed, "", "train", f"spearman_{name}", value))
    by_condition: dict[str, list[int]] = {}
    for m, member in enumerate(members):
        by_condition.setdefault(member.condition, []).append(m)
    for condition, index in by_condition.items():
        for a, b in combinations(index, 2):
            pair = f"{members[a].seed}-{members[b].seed}"
            for subset, mask in masks.items():
                value = seed_disagreement(test_probs[[a, b]][:, mask])
                rows.append((condition, -1, pair, subset, "seed_disagreement", value))
    frame = pd.DataFrame(rows, columns=COLUMNS)
    frame["seed"] = frame["seed"].astype("int64")
    return frame


def cartography_frame(items: ItemSet, members: list[Member], gold_prob: np.ndarray, correct: np.ndarray):
    """Per member and training item: confidence, variability, correctness and the item's human entropy and kind."""
    train = items.indices("train")
    parts = []
    for m, member in enumerate(members):
        carto = cartography(gold_prob[m], correct[m])
        parts.append(pd.DataFrame({
            "condition": member.condition, "seed": member.seed, "item": train, "confidence": carto.confidence,
            "variability": carto.variability, "correctness": carto.correctness,
            "human_entropy": items.human_entropy[train], "kind": [KIND_NAMES[int(k)] for k in items.kind[train]],
        }))  # fmt: skip
    return pd.concat(parts, ignore_index=True)
