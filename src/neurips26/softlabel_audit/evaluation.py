"""Paper 15's evaluation: per member, accuracy (against the original labels and against the human majority), ECE and
KL(human || model) on the test items (all, the difficult ones, clean digits, morphs); per condition and pair of seeds,
their disagreement; per member, the data map of its training run and its rank correlation with human uncertainty
(arXiv 2605.18648; dataset cartography: Swayamdipta et al. 2020), and what it was trained on (target entropy, share of
targets whose mode is the original label, and for aligned members the largest entropy change against the same seed's
human_soft targets). Long form: one row per (condition, seed, subset, metric).

The human distribution (ItemSet.reference) is the simulated panel's true class probabilities where the panel is
simulated (the analogue of the paper's many-annotator distribution), the observed votes otherwise (CIFAR-10H: about
50 per image). `kl_human` is KL against it, `kl_votes` KL against the observed votes (six at quick: a KL against so
few votes rewards models that spread mass over every class, since a lapse vote on a random class must be covered).
Difficult items: the top third of the test items by the entropy of the reference (splits.difficult_items)."""

from __future__ import annotations

from itertools import combinations

import numpy as np
import pandas as pd

from .cartography import alignment, cartography
from .itemset import KIND_NAMES, ItemSet
from .labels import majority_labels, soft_from_votes
from .members import Member
from .metrics import ECE_BINS, accuracy, expected_calibration_error, mean_kl, seed_disagreement
from .splits import DIFFICULT_QUANTILE, difficult_items

__all__ = ["COLUMNS", "cartography_frame", "evaluate", "test_subsets"]

COLUMNS = ["condition", "seed", "pair", "subset", "metric", "value"]


def test_subsets(items: ItemSet, quantile: float = DIFFICULT_QUANTILE) -> dict[str, np.ndarray]:
    """Boolean masks over the test items: all, difficult (the top third of the test items by the entropy of the
    human reference distribution, by rank), and each item kind present (clean, morph, real)."""
    test = items.indices("test")
    masks = {"all": np.ones(len(test), bool), "difficult": difficult_items(items.reference_entropy[test], quantile)}
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
    trained: dict | None = None,
) -> pd.DataFrame:
    """The metrics table. `test_probs` (M, N_test, K) are the members' predictions on the test split; `gold_prob`
    and `correct` (M, E, N_train) their training dynamics (training.Dynamics); `trained`, where given, what they
    were trained on (artifacts.Runs.trained: target_entropy, target_on_original, epsilon, temperature)."""
    test, train = items.indices("test"), items.indices("train")
    gold, human, votes = items.original[test], items.reference[test], soft_from_votes(items.counts[test])
    majority = majority_labels(human, gold)
    human_entropy_train = items.reference_entropy[train]
    masks = test_subsets(items, quantile)
    rows = []
    for m, member in enumerate(members):
        p = test_probs[m]
        for subset, mask in masks.items():
            rows += [
                (member.condition, member.seed, "", subset, "accuracy", accuracy(p, gold, mask)),
                (member.condition, member.seed, "", subset, "accuracy_majority", accuracy(p, majority, mask)),
                (member.condition, member.seed, "", subset, "ece", expected_calibration_error(p, gold, n_bins, mask)),
                (member.condition, member.seed, "", subset, "kl_human", mean_kl(human, p, mask)),
                (member.condition, member.seed, "", subset, "kl_votes", mean_kl(votes, p, mask)),
                (member.condition, member.seed, "", subset, "items", float(mask.sum())),
            ]
        carto = cartography(gold_prob[m], correct[m])
        for name, value in alignment(carto, human_entropy_train).items():
            rows.append((member.condition, member.seed, "", "train", f"spearman_{name}", value))
    if trained:
        rows += trained_on(members, **trained)
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


def trained_on(members: list[Member], target_entropy, target_on_original, epsilon=None, temperature=None) -> list:
    """Per member: the mean entropy of its targets, the share of its targets whose mode is the original label and,
    for an aligned member (human_soft_aligned, teacher_soft_aligned), the largest |entropy change| of an item's target
    against the same seed's human_soft (or teacher_soft) target (zero for an alignment, which permutes each vector);
    and the smoothing epsilon or teacher temperature of the members that have one."""
    index = {(m.condition, m.seed): i for i, m in enumerate(members)}
    rows = []
    for i, m in enumerate(members):
        rows += [
            (m.condition, m.seed, "", "train", "target_entropy", float(target_entropy[i].mean())),
            (m.condition, m.seed, "", "train", "target_mode_original", float(target_on_original[i].mean())),
        ]
        source = {"human_soft_aligned": "human_soft", "teacher_soft_aligned": "teacher_soft"}.get(m.condition)
        if source is not None and (source, m.seed) in index:
            gap = np.abs(target_entropy[i].astype(np.float64) - target_entropy[index[source, m.seed]]).max()
            rows.append((m.condition, m.seed, "", "train", "target_entropy_gap", float(gap)))
        for name, values in (("epsilon", epsilon), ("temperature", temperature)):
            if values is not None and np.isfinite(values[i]):
                rows.append((m.condition, m.seed, "", "train", name, float(values[i])))
    return rows


def cartography_frame(items: ItemSet, members: list[Member], gold_prob: np.ndarray, correct: np.ndarray):
    """Per member and training item: confidence, variability, correctness and the item's human entropy and kind."""
    train = items.indices("train")
    parts = []
    for m, member in enumerate(members):
        carto = cartography(gold_prob[m], correct[m])
        parts.append(pd.DataFrame({
            "condition": member.condition, "seed": member.seed, "item": train, "confidence": carto.confidence,
            "variability": carto.variability, "correctness": carto.correctness,
            "human_entropy": items.reference_entropy[train], "kind": [KIND_NAMES[int(k)] for k in items.kind[train]],
        }))  # fmt: skip
    return pd.concat(parts, ignore_index=True)
