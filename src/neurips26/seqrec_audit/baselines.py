r"""Training-free baselines (the paper compares TGH with them): popularity, first-order Markov, item-kNN (last item and
profile). Each returns a full ``(n_users, n_items)`` float32 score matrix; ``exclude_history=True``
sets the user's history items to ``-inf`` (the same convention as TGH's flag). Top-k lists come from
:func:`metrics.topk_from_scores` (ties to the lower item id).

* ``pop``: occurrences of each item in the training sequences.
* ``markov1``: ``c(last, i) + 0.5 * pop(i) / max pop``: the next-item counts from the last item,
  with popularity breaking ties and ranking the items never seen after it (the back-off; the bonus
  is below 1, so it never overturns a count).
* ``itemknn_last``: ``sim(last, i)``.
* ``itemknn_profile``: ``sum_t w_t sim(h_t, i)`` over the whole history with recency weights ``w_t =
  decay ** (L - 1 - t)`` (the last item weighs 1, ``decay = 0.8``: about five items' worth of
  history in all), repeated items adding up. The HD diagnostic compares it with ``itemknn_last``.

Similarity (:func:`item_similarity_factor`): cosine of the item features when given; otherwise the
cosine of co-occurrence, ``|S_i & S_j| / sqrt(|S_i| |S_j|)`` with ``S_i`` the set of training
sequences containing item ``i``. Either way it is ``G G^T`` for a factor ``G``, so scores are
computed as ``(W G) G^T`` without an ``n_items^2`` matrix. An item is not its own neighbour:
``sim(i, i) = 0`` (self-similarity is 1 by definition and would put the query item first).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
import scipy.sparse as sp

from .graph import as_sequences, transition_counts
from .heuristic import validate_features
from .methods import BASELINE_NAMES
from .metrics import history_mask

__all__ = [
    "BASELINES",
    "PROFILE_DECAY",
    "item_popularity",
    "item_similarity_factor",
    "itemknn_last_scores",
    "itemknn_profile_scores",
    "markov1_scores",
    "popularity_scores",
    "profile_weights",
]

PROFILE_DECAY = 0.8


def _last_items(histories: Sequence[np.ndarray]) -> np.ndarray:
    if any(len(h) == 0 for h in histories):
        raise ValueError("every user needs a non-empty history")
    return np.array([h[-1] for h in histories], dtype=np.int64)


def _mask_history(scores: np.ndarray, histories, exclude_history: bool) -> np.ndarray:
    if exclude_history:
        scores[history_mask(histories, scores.shape[1])] = -np.inf
    return scores


def item_popularity(sequences: Sequence[np.ndarray], n_items: int) -> np.ndarray:
    """Occurrences of each item in the training sequences (float64)."""
    seqs = as_sequences(sequences, n_items)
    flat = np.concatenate(seqs) if seqs else np.zeros(0, np.int64)
    return np.bincount(flat, minlength=n_items).astype(np.float64)


def popularity_scores(sequences, n_items: int, histories, features=None, exclude_history: bool = False) -> np.ndarray:
    """The same popularity row for every user."""
    histories = as_sequences(histories, n_items, "history")
    pop = item_popularity(sequences, n_items).astype(np.float32)
    scores = np.repeat(pop[None, :], len(histories), axis=0)
    return _mask_history(scores, histories, exclude_history)


def markov1_scores(
    sequences,
    n_items: int,
    histories,
    features=None,
    exclude_history: bool = False,
    counts: sp.spmatrix | None = None,
) -> np.ndarray:
    """``c(last, i) + 0.5 * pop(i) / max pop`` (float32; exact while counts stay below 2^22)."""
    histories = as_sequences(histories, n_items, "history")
    counts = transition_counts(sequences, n_items) if counts is None else sp.csr_matrix(counts)
    pop = item_popularity(sequences, n_items)
    backoff = 0.5 * pop / max(pop.max(), 1.0)
    scores = counts[_last_items(histories)].toarray().astype(np.float64) + backoff[None, :]
    return _mask_history(scores.astype(np.float32), histories, exclude_history)


def item_similarity_factor(
    n_items: int, features: np.ndarray | None = None, sequences=None
) -> np.ndarray | sp.csr_matrix:
    """``G`` with ``G G^T`` = the item-item cosine (before zeroing its diagonal).

    Features: ``G = features / ||features||`` (rows). No features: ``G`` = the item x
    training-sequence incidence with unit rows (an item never seen gets a zero row: similarity 0).
    """
    if features is not None:
        feats = validate_features(features, n_items).astype(np.float64)
        norms = np.linalg.norm(feats, axis=1, keepdims=True)
        return feats / np.where(norms == 0, 1.0, norms)
    if sequences is None:
        raise ValueError("item similarity needs features or training sequences")
    seqs = as_sequences(sequences, n_items)
    rows = np.concatenate([np.unique(s) for s in seqs]) if seqs else np.zeros(0, np.int64)
    cols = np.repeat(np.arange(len(seqs)), [np.unique(s).size for s in seqs])
    incidence = sp.csr_matrix((np.ones(rows.size), (rows, cols)), shape=(n_items, len(seqs)), dtype=np.float64)
    norms = np.sqrt(np.asarray(incidence.sum(axis=1)).ravel())
    return (sp.diags(1.0 / np.where(norms == 0, 1.0, norms)) @ incidence).tocsr()


def _dense(x) -> np.ndarray:
    return x.toarray() if sp.issparse(x) else np.asarray(x)


def _sq_norms(factor) -> np.ndarray:
    if sp.issparse(factor):
        return np.asarray(factor.multiply(factor).sum(axis=1)).ravel()
    return (factor * factor).sum(axis=1)


def profile_weights(histories: Sequence[np.ndarray], n_items: int, decay: float = PROFILE_DECAY) -> sp.csr_matrix:
    """``W[u, i] = sum_{t: h_t = i} decay ** (L - 1 - t)`` as CSR (duplicates summed)."""
    lengths = np.array([len(h) for h in histories], dtype=np.int64)
    rows = np.repeat(np.arange(len(histories)), lengths)
    cols = np.concatenate([np.asarray(h, np.int64) for h in histories])
    age = np.concatenate([np.arange(n - 1, -1, -1) for n in lengths])
    w = sp.csr_matrix((decay ** age.astype(np.float64), (rows, cols)), shape=(len(histories), n_items))
    w.sum_duplicates()
    return w


def itemknn_last_scores(sequences, n_items: int, histories, features=None, exclude_history: bool = False) -> np.ndarray:
    """``sim(last, i)`` with ``sim(last, last) = 0``; cosine of features, else of co-occurrence."""
    histories = as_sequences(histories, n_items, "history")
    factor = item_similarity_factor(n_items, features, sequences)
    last = _last_items(histories)
    scores = _dense(factor[last] @ factor.T).astype(np.float32)
    scores[np.arange(last.size), last] = 0.0
    return _mask_history(scores, histories, exclude_history)


def itemknn_profile_scores(
    sequences,
    n_items: int,
    histories,
    features=None,
    exclude_history: bool = False,
    decay: float = PROFILE_DECAY,
) -> np.ndarray:
    """``sum_t decay**(L-1-t) sim(h_t, i)`` with ``sim(i, i) = 0`` (see the module docstring)."""
    histories = as_sequences(histories, n_items, "history")
    _last_items(histories)
    factor = item_similarity_factor(n_items, features, sequences)
    weights = profile_weights(histories, n_items, decay)
    scores = _dense((weights @ factor) @ factor.T)
    scores -= _dense(weights.multiply(_sq_norms(factor)[None, :]))
    return _mask_history(scores.astype(np.float32), histories, exclude_history)


# name -> score(sequences, n_items, histories, features=None, exclude_history=False)
BASELINES: dict[str, Callable[..., np.ndarray]] = {
    "pop": popularity_scores,
    "markov1": markov1_scores,
    "itemknn_last": itemknn_last_scores,
    "itemknn_profile": itemknn_profile_scores,
}
assert tuple(BASELINES) == BASELINE_NAMES, "methods.BASELINE_NAMES must name the baselines"
