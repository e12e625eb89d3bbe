r"""Full-ranking Recall@k and NDCG@k with one held-out target per user (the paper's
protocol: full ranking over all items, Recall and NDCG at 1, 5 and 10).

With a single relevant item at rank ``r`` (1-based), ``Recall@k = [r <= k]`` and ``NDCG@k = [r <= k]
/ log2(r + 1)`` (the ideal DCG is 1); both are averaged over users. This is GraphRec's
``compute_metrics`` (``src/tgh.py``) for top-k lists, and the same numbers from a full score matrix
through :func:`rank_of_target`. :data:`PROTOCOL` states the conventions for reports.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

__all__ = [
    "KS",
    "PROTOCOL",
    "TIE_BREAKS",
    "history_mask",
    "metrics_from_ranks",
    "metrics_from_scores",
    "metrics_from_topk",
    "rank_of_target",
    "ranks_in_chunks",
    "topk_from_scores",
]

KS = (1, 5, 10)
TIE_BREAKS = ("pessimistic", "optimistic", "random", "id")

PROTOCOL = (
    "One held-out target per user (the last item of the sequence), full ranking over all n_items "
    "items (no sampled negatives). Recall@k = [rank <= k] and NDCG@k = [rank <= k] / "
    "log2(rank + 1), averaged over users, k in {1, 5, 10}. History masking: when exclude_history "
    "is on, every method (TGH included) removes the user's history items from its candidates "
    "(score -inf, or absent from its top-k list), so a target that repeats a history item is a "
    "miss for every method alike; when off (GraphRec's default), nothing is removed. A target "
    "with score -inf is always a miss. Ties in score matrices: pessimistic by default (the "
    "target ranks below every competitor with an equal score), so a constant or degenerate "
    "score earns nothing from ties; top-k lists (TGH, and baselines via topk_from_scores) are "
    "ordered by score with ties to the lower item id."
)


def history_mask(histories: Sequence[np.ndarray], n_items: int) -> np.ndarray:
    """Dense ``(n_users, n_items)`` boolean mask, True at every item of each user's history."""
    lengths = np.array([len(h) for h in histories], dtype=np.int64)
    mask = np.zeros((len(histories), n_items), dtype=bool)
    if lengths.sum():
        cols = np.concatenate([np.asarray(h, dtype=np.int64).ravel() for h in histories])
        if cols.min() < 0 or cols.max() >= n_items:
            raise ValueError(f"history item ids outside 0..{n_items - 1}")
        mask[np.repeat(np.arange(len(histories)), lengths), cols] = True
    return mask


def topk_from_scores(scores: np.ndarray, k: int, valid: np.ndarray | None = None) -> np.ndarray:
    """The ``k`` best items per row, best first: ``(n_rows, k)`` int64, ``-1`` where fewer than
    ``k`` items are valid.

    An item is a candidate when its score is not ``-inf`` (and ``valid`` is True there). Ties go to
    the lower item id, exactly: the k-th best value is found by partition, every candidate at or
    above it is kept and those few are sorted by (score desc, id asc); when the candidates are few
    (a ring), all of them are sorted.
    """
    scores = np.asarray(scores)
    if scores.ndim != 2:
        raise ValueError(f"scores must be 2-D, got shape {scores.shape}")
    if np.isnan(scores).any():
        raise ValueError("scores contain NaN")
    n_rows, n_items = scores.shape
    ok = scores > -np.inf
    if valid is not None:
        ok &= np.asarray(valid, dtype=bool)
    out = np.full((n_rows, k), -1, dtype=np.int64)
    k_eff = min(k, n_items)
    if n_rows == 0 or k_eff == 0:
        return out
    masked = np.where(ok, scores, -np.inf)
    if 50 * np.count_nonzero(ok) < ok.size:  # few candidates (a ring): sorting them all is cheaper
        rows, cols = np.nonzero(ok)
    else:
        kth = np.partition(masked, n_items - k_eff, axis=1)[:, n_items - k_eff]
        rows, cols = np.nonzero(ok & (masked >= kth[:, None]))
    order = np.lexsort((cols, -masked[rows, cols], rows))
    rows, cols = rows[order], cols[order]
    rank = np.arange(rows.size) - np.searchsorted(rows, np.arange(n_rows))[rows]
    keep = rank < k_eff
    out[rows[keep], rank[keep]] = cols[keep]
    return out


def rank_of_target(
    scores: np.ndarray,
    targets: np.ndarray,
    history_mask: np.ndarray | None = None,
    tie_break: str = "pessimistic",
    seed: int = 0,
) -> np.ndarray:
    """1-based rank of each user's target among all items, from ``(n_users, n_items)`` scores.

    ``history_mask`` (boolean, same shape) removes those items from the competitors; the target
    itself always stays a candidate, so whether a repeated target can be hit is the method's own
    choice (its score). Ties between the target and competitors with the same score:

    * ``"pessimistic"`` (default): the target ranks after all of them. A method gains nothing from
      ties, so constant scores (rank ``n_items``) or coarse ones cannot look good;
    * ``"optimistic"``: before all of them (an upper bound, for reference only);
    * ``"random"``: a uniformly random position among them (seeded);
    * ``"id"``: after the tied competitors with a lower item id, which is the order of
      :func:`topk_from_scores`, so the rank agrees with that top-k list.

    A target with score ``-inf`` (excluded by the method) gets rank ``inf``: never a hit. Returns
    float64 ranks.
    """
    if tie_break not in TIE_BREAKS:
        raise ValueError(f"tie_break must be one of {TIE_BREAKS}, got {tie_break!r}")
    scores = np.asarray(scores)
    targets = np.asarray(targets, dtype=np.int64).ravel()
    n_users, n_items = scores.shape
    if targets.shape != (n_users,):
        raise ValueError(f"{targets.size} targets for {n_users} score rows")
    if targets.size and (targets.min() < 0 or targets.max() >= n_items):
        raise ValueError(f"targets outside 0..{n_items - 1}")
    if np.isnan(scores).any():
        raise ValueError("scores contain NaN")
    users = np.arange(n_users)
    target_score = scores[users, targets][:, None]
    competitor = np.ones(scores.shape, dtype=bool)
    if history_mask is not None:
        competitor = ~np.asarray(history_mask, dtype=bool)
        if competitor.shape != scores.shape:
            raise ValueError(f"history_mask shape {competitor.shape} != scores {scores.shape}")
    competitor[users, targets] = False
    greater = ((scores > target_score) & competitor).sum(axis=1)
    tied = (scores == target_score) & competitor
    n_tied = tied.sum(axis=1)
    if tie_break == "pessimistic":
        rank = 1 + greater + n_tied
    elif tie_break == "optimistic":
        rank = 1 + greater
    elif tie_break == "random":
        rank = 1 + greater + np.random.default_rng(seed).integers(0, n_tied + 1)
    else:
        rank = 1 + greater + (tied & (np.arange(n_items) < targets[:, None])).sum(axis=1)
    rank = rank.astype(np.float64)
    rank[target_score[:, 0] == -np.inf] = np.inf
    return rank


def metrics_from_ranks(ranks: np.ndarray, ks: Sequence[int] = KS) -> dict[str, float]:
    """``{"Recall@k": ..., "NDCG@k": ...}`` averaged over users (``ranks`` 1-based, inf = miss)."""
    ranks = np.asarray(ranks, dtype=np.float64).ravel()
    if ranks.size == 0:
        raise ValueError("no users to evaluate")
    out = {}
    for k in ks:
        hit = ranks <= k
        out[f"Recall@{k}"] = float(hit.mean())
        gain = np.zeros_like(ranks)
        gain[hit] = 1.0 / np.log2(ranks[hit] + 1.0)
        out[f"NDCG@{k}"] = float(gain.mean())
    return out


def metrics_from_scores(
    scores: np.ndarray,
    targets: np.ndarray,
    ks: Sequence[int] = KS,
    history_mask: np.ndarray | None = None,
    tie_break: str = "pessimistic",
    seed: int = 0,
) -> dict[str, float]:
    """Recall@k and NDCG@k from a full score matrix (see :func:`rank_of_target`)."""
    return metrics_from_ranks(rank_of_target(scores, targets, history_mask, tie_break, seed), ks)


def ranks_in_chunks(
    score_rows: Callable[[list[np.ndarray]], np.ndarray],
    histories: Sequence[np.ndarray],
    targets: np.ndarray,
    n_items: int,
    exclude_history: bool = False,
    tie_break: str = "pessimistic",
    chunk_size: int = 4096,
    seed: int = 0,
) -> np.ndarray:
    """:func:`rank_of_target` for every user, scoring `chunk_size` users at a time: `score_rows(histories)` returns
    the ``(len(histories), n_items)`` scores of those users. Memory stays at one chunk's score matrix, whatever the
    number of users (a full matrix for 75k users and 64k items would take 19 GB). With ``exclude_history`` the
    history mask applies as in :func:`metrics_from_scores`; the random tie-break is seeded per chunk."""
    targets = np.asarray(targets, dtype=np.int64).ravel()
    if len(histories) != targets.size:
        raise ValueError(f"{targets.size} targets for {len(histories)} histories")
    histories = list(histories)
    ranks = []
    for start in range(0, len(histories), chunk_size):
        chunk = histories[start : start + chunk_size]
        scores = score_rows(chunk)
        if scores.shape != (len(chunk), n_items):
            raise ValueError(f"score_rows returned shape {scores.shape}, expected {(len(chunk), n_items)}")
        mask = history_mask(chunk, n_items) if exclude_history else None
        ranks.append(rank_of_target(scores, targets[start : start + chunk_size], mask, tie_break, seed + start))
    return np.concatenate(ranks) if ranks else np.array([], dtype=np.float64)


def metrics_from_topk(topk: np.ndarray, targets: np.ndarray, ks: Sequence[int] = KS) -> dict[str, float]:
    """Recall@k and NDCG@k from ranked top-k lists ``(n_users, K)`` (``-1`` = empty slot).

    The rank is the position of the target's first occurrence; a target not in the list is a miss.
    Every k must be at most ``K`` (a shorter list cannot say what lies beyond it).
    """
    topk = np.asarray(topk, dtype=np.int64)
    targets = np.asarray(targets, dtype=np.int64).ravel()
    if topk.ndim != 2 or topk.shape[0] != targets.size:
        raise ValueError(f"topk shape {topk.shape} does not match {targets.size} targets")
    if max(ks) > topk.shape[1]:
        raise ValueError(f"k={max(ks)} exceeds the top-k list length {topk.shape[1]}")
    match = topk == targets[:, None]
    ranks = np.where(match.any(axis=1), match.argmax(axis=1) + 1.0, np.inf)
    return metrics_from_ranks(ranks, ks)
