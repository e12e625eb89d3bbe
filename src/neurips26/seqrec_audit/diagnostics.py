r"""Shortcut diagnostics of a benchmark: the three shortcut structures the paper's abstract names
(low-branching local transitions, feature-smooth transitions, limited dependence on long histories). The paper's
exact formulas were not recovered; these definitions are ours, on the training transition graph and the test split.

Branching (low = shortcut):

* ``mean_out_degree``: distinct successors per item, over the items with at least one successor;
* ``perplexity``: ``exp(H(next | last))``, the conditional entropy (nats) of the training
  transitions weighted by how often each ``last`` occurs: ``sum_a (n_a / N) H(c(a, .) / n_a)``;
* ``cov1`` / ``cov2``: the fraction of test targets in ring 1 / rings 1-2 of the last history item.

Density of the graph (ours, not a shortcut diagnostic of the paper): ``transitions_per_edge``, the
training transitions per distinct observed edge. Where edges are seen many times, their counts alone
order the successors (Markov-1); where most are seen once, counts tie and features must decide.

Feature smoothness (high = shortcut):

* ``FS = mean cos(e_last, e_target) - mean cos(e_last, e_j)``, ``j`` uniform over the other items
  (the exact expectation, no sampling);
* ``FeatAUC``: the target's percentile among all items other than the last and the target by cosine
  to the last item (ties count one half); 0.5 = no signal.

History dependence (low = shortcut):

* ``HD = NDCG@10(itemknn_profile) / NDCG@10(itemknn_last) - 1`` (training-free; baselines module,
  pessimistic ties, the same ``exclude_history`` for both).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import scipy.sparse as sp

from .baselines import PROFILE_DECAY, itemknn_last_scores, itemknn_profile_scores
from .graph import as_sequences, ring_masks
from .heuristic import validate_features
from .metrics import metrics_from_ranks, ranks_in_chunks

__all__ = [
    "feature_auc",
    "feature_smoothness",
    "history_dependence",
    "mean_out_degree",
    "ring_coverage",
    "shortcut_diagnostics",
    "transition_perplexity",
    "transitions_per_edge",
]


def _last_and_targets(histories, targets, n_items) -> tuple[np.ndarray, np.ndarray]:
    histories = as_sequences(histories, n_items, "history")
    if any(h.size == 0 for h in histories):
        raise ValueError("every user needs a non-empty history")
    targets = np.asarray(targets, dtype=np.int64).ravel()
    if targets.size != len(histories):
        raise ValueError(f"{targets.size} targets for {len(histories)} histories")
    if targets.size and (targets.min() < 0 or targets.max() >= n_items):
        raise ValueError(f"targets outside 0..{n_items - 1}")
    return np.array([h[-1] for h in histories], dtype=np.int64), targets


def mean_out_degree(counts: sp.spmatrix) -> float:
    """Distinct successors per item, averaged over items with at least one successor."""
    counts = sp.csr_matrix(counts)
    counts.eliminate_zeros()
    degree = np.diff(counts.indptr)
    return float(degree[degree > 0].mean()) if (degree > 0).any() else float("nan")


def transitions_per_edge(counts: sp.spmatrix) -> float:
    """Training transitions per distinct observed edge (nan for an empty graph)."""
    counts = sp.csr_matrix(counts)
    counts.eliminate_zeros()
    return float(counts.sum() / counts.nnz) if counts.nnz else float("nan")


def transition_perplexity(counts: sp.spmatrix) -> float:
    """``exp(H(next | last))`` of the training transitions, frequency-weighted."""
    counts = sp.csr_matrix(counts, dtype=np.float64)
    counts.eliminate_zeros()
    total = counts.sum()
    if total == 0:
        return float("nan")
    row_total = np.repeat(np.asarray(counts.sum(axis=1)).ravel(), np.diff(counts.indptr))
    p = counts.data / row_total
    # sum_a (n_a / N) * -sum_b p(b|a) log p(b|a) = -sum_{a,b} (c_ab / N) log p(b|a)
    return float(np.exp(-(counts.data / total * np.log(p)).sum()))


def ring_coverage(counts: sp.spmatrix, histories: Sequence[np.ndarray], targets: np.ndarray) -> tuple[float, float]:
    """``(cov1, cov2)``: fraction of targets in ring 1, and in rings 1-2, of the last item."""
    n_items = counts.shape[0]
    last, targets = _last_and_targets(histories, targets, n_items)
    unique, row = np.unique(last, return_inverse=True)
    ring1, ring2 = ring_masks(counts, unique, 2)
    in1 = np.asarray(ring1[row, targets]).ravel().astype(bool)
    in2 = in1 | np.asarray(ring2[row, targets]).ravel().astype(bool)
    return float(in1.mean()), float(in2.mean())


def feature_smoothness(features: np.ndarray, histories: Sequence[np.ndarray], targets: np.ndarray) -> float:
    """``mean cos(e_last, e_target) - mean_u E_{j != last} cos(e_last, e_j)``."""
    feats = validate_features(features, np.shape(features)[0]).astype(np.float64)
    n_items = feats.shape[0]
    if n_items < 2:
        raise ValueError("feature smoothness needs at least two items")
    last, targets = _last_and_targets(histories, targets, n_items)
    e_last = feats[last]
    to_target = (e_last * feats[targets]).sum(axis=1)
    to_random = (e_last @ feats.sum(axis=0) - (e_last * e_last).sum(axis=1)) / (n_items - 1)
    return float(to_target.mean() - to_random.mean())


def feature_auc(
    features: np.ndarray,
    histories: Sequence[np.ndarray],
    targets: np.ndarray,
    chunk_size: int = 4096,
) -> float:
    """Mean percentile of the target among the other items by cosine to the last item (ties 1/2)."""
    feats = validate_features(features, np.shape(features)[0])
    n_items = feats.shape[0]
    last, targets = _last_and_targets(histories, targets, n_items)
    values = []
    for start in range(0, last.size, chunk_size):
        sl = slice(start, start + chunk_size)
        users = np.arange(last[sl].size)
        sims = feats[last[sl]] @ feats.T
        target_sim = sims[users, targets[sl]][:, None]
        others = np.ones(sims.shape, dtype=bool)
        others[users, last[sl]] = False
        others[users, targets[sl]] = False
        below = ((sims < target_sim) & others).sum(axis=1)
        tied = ((sims == target_sim) & others).sum(axis=1)
        values.append((below + 0.5 * tied) / np.maximum(others.sum(axis=1), 1))
    return float(np.concatenate(values).mean())


def history_dependence(
    sequences,
    n_items: int,
    histories: Sequence[np.ndarray],
    targets: np.ndarray,
    features: np.ndarray | None = None,
    exclude_history: bool = False,
    decay: float = PROFILE_DECAY,
) -> float:
    """``NDCG@10(profile kNN) / NDCG@10(last-item kNN) - 1`` (nan when the denominator is 0)."""
    _, targets = _last_and_targets(histories, targets, n_items)

    def last(chunk):
        return itemknn_last_scores(sequences, n_items, chunk, features, exclude_history)

    def profile(chunk):
        return itemknn_profile_scores(sequences, n_items, chunk, features, exclude_history, decay=decay)

    ndcg_last, ndcg_profile = (
        metrics_from_ranks(ranks_in_chunks(scores, histories, targets, n_items), ks=(10,))["NDCG@10"]
        for scores in (last, profile)
    )
    return ndcg_profile / ndcg_last - 1.0 if ndcg_last > 0 else float("nan")


def shortcut_diagnostics(
    counts: sp.spmatrix,
    features: np.ndarray,
    sequences,
    histories: Sequence[np.ndarray],
    targets: np.ndarray,
    exclude_history: bool = False,
    decay: float = PROFILE_DECAY,
) -> dict[str, float]:
    """All diagnostics of one dataset (``counts`` from the training ``sequences``; test targets)."""
    n_items = counts.shape[0]
    cov1, cov2 = ring_coverage(counts, histories, targets)
    return {
        "mean_out_degree": mean_out_degree(counts),
        "perplexity": transition_perplexity(counts),
        "transitions_per_edge": transitions_per_edge(counts),
        "cov1": cov1,
        "cov2": cov2,
        "FS": feature_smoothness(features, histories, targets),
        "FeatAUC": feature_auc(features, histories, targets),
        "HD": history_dependence(sequences, n_items, histories, targets, features, exclude_history, decay),
    }
