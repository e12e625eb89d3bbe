r"""TGH, the transition-graph heuristic of the paper (arXiv 2605.07125), after GraphRec ``src/tgh.py`` at 2db502a.

Sources. Source ``j`` of a user is ``history[-(j + 1)]``: TGH-1 has one source (the last item),
TGH-2 two (the last and the second-to-last). :data:`TGH_VARIANTS` holds the paper's settings.

Scoring (``gpu_per_ring_topk``). Inside ring ``h`` of source ``s`` (:func:`graph.ring_masks`)::

    score(i) = <anchor, e_i> + alpha * [h = 1] * log1p(c(s, i)) / max_j log1p(c(s, j))

with ``alpha = 0.5``. The anchor is ``e_s`` normalised; for a single source, the normalised mean of
the last ``last_n`` items' features (``build_user_anchors_mean``). Each ring keeps its best ``T``
items, ``T`` = the source's total budget (``k_take``). Ties: ``torch.topk`` leaves their order
unspecified (GraphRec's README says so); here they go to the lower item id, deterministically.

Rings. All rings are explicit exact-hop rings by default (``tgh.py`` materialises ``max(max_hops=2,
len(hop_k))`` rings, and ``scripts/run_all.sh`` never sets ``--max_explicit_depth``), so TGH-1's
third ring is the exact 3-hop ring. With ``max_explicit_depth = m`` every ring deeper than ``m`` is
the catch-all ``NOT(visited | history)``, ``visited = {s} | rings 1..m``. Explicit rings do not
exclude history items (ring 1 even holds ``s`` after a self-loop); ``exclude_history=True`` removes
the history from every ring and pad alike.

Assembly (``_vectorized_easy_assemble`` / ``_assemble_with_overflow``). Rings are taken in order
with budgets ``b_h``; a ring's surplus (its ranks ``b_h+1..T``) joins an overflow queue. When a
later ring holds fewer than its budget, the queue's front fills the gap, placed *before* that ring's
own picks. A deficit left after the last ring is filled from the remaining queue at the end. The
under-filled ring's own shortfall is not carried forward: ring 1 with 3 of 7 items gets its 4
missing slots from ring 2's and 3's surplus, appended after ring 3. Here the rule is run once per
distinct pattern of ring sizes on position tokens and applied to all users of that pattern by one
gather.

Padding. Still short of ``T``: with ``pad="semantic"``, the best items by anchor similarity in the
catch-all ``NOT(visited | history)`` (its top ``T``, minus items already used); then, or with
``pad="random"`` (the paper's runs: ``--semantic_pad`` is off), ``random.Random(seed + uid).sample``
from the items that appear in the graph (ascending ids, CPython's iteration order of that set of
small ints) minus those already used, ``seed = 42``, ``uid`` = the user's row. Random padding does
not avoid history items unless ``exclude_history``.

TGH-2 (``run_tgh2``). Source 0 is assembled and padded to its own total (6); source 1's rings
exclude source 0's picks, it is assembled and padded to 4 with a fresh ``Random(seed + uid)``; users
with a one-item history get no source-1 picks. The concatenation is then padded to ``k`` from source
0's semantic pad list (``pad="semantic"``) and random sampling. One deliberate difference:
GraphRec's source-1 random pad can, in a corner case (overflow and semantic pad both exhausted),
sample an item already placed by overflow (``already_set.update`` is sliced after ``result`` grew);
here used items are never drawn again, so lists have no duplicates.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from .catalog import check_features
from .graph import as_sequences, ring_masks
from .metrics import topk_from_scores

__all__ = [
    "PADS",
    "TGHConfig",
    "TGH_VARIANTS",
    "edge_weights",
    "recommend_tgh",
    "validate_features",
]

PADS = ("random", "semantic")


@dataclass(frozen=True)
class TGHConfig:
    """TGH settings. ``budgets[j]`` are the ring budgets of source ``j`` (``history[-(j + 1)]``).

    Defaults are TGH-1 as run in the paper (``--hop_k 7 2 1 --edge_weight_alpha 0.5``, random pad,
    seed 42). ``max_hops`` is ``tgh.py``'s ``--max_hops`` (rings materialised: at least 2, which is
    what the catch-all excludes); ``chunk_size`` users are scored at once.
    """

    budgets: tuple[tuple[int, ...], ...] = ((7, 2, 1),)
    alpha: float = 0.5
    last_n: int = 1
    exclude_history: bool = False
    pad: str = "random"
    seed: int = 42
    max_hops: int = 2
    max_explicit_depth: int | None = None
    chunk_size: int = 2048


TGH_VARIANTS = {
    "tgh1": TGHConfig(budgets=((7, 2, 1),)),
    "tgh2": TGHConfig(budgets=((5, 1), (3, 1))),
}


def validate_features(features: np.ndarray, n_items: int) -> np.ndarray:
    """``features`` as float32 ``(n_items, d)`` after ``data.check_features`` (row count, NaN/inf)."""
    check_features(features, n_items)
    return np.ascontiguousarray(features, dtype=np.float32)


def edge_weights(counts: sp.spmatrix) -> sp.csr_matrix:
    """``log1p(c(s, i)) / max_j log1p(c(s, j))`` as float32 CSR (``_build_edge_weight_csr``)."""
    ew = sp.csr_matrix(counts, dtype=np.float32, copy=True)
    ew.eliminate_zeros()
    ew.data = np.log1p(ew.data)
    row_max = ew.max(axis=1).toarray().ravel()
    row_max = np.where(row_max == 0, np.float32(1.0), row_max).astype(np.float32)
    return (sp.diags(np.float32(1.0) / row_max) @ ew).tocsr().astype(np.float32)


def _validate(config: TGHConfig, counts: sp.spmatrix, k: int) -> None:
    n_items = counts.shape[0]
    if counts.shape != (n_items, n_items):
        raise ValueError(f"counts must be square, got shape {counts.shape}")
    if counts.nnz == 0 or counts.sum() == 0:
        raise ValueError("empty transition graph: no consecutive pairs in the training sequences")
    if not config.budgets or any(len(b) == 0 for b in config.budgets):
        raise ValueError(f"every source needs at least one ring budget, got {config.budgets}")
    if any(b < 0 for bs in config.budgets for b in bs):
        raise ValueError(f"ring budgets must be >= 0, got {config.budgets}")
    total = sum(sum(bs) for bs in config.budgets)
    if total != k:
        raise ValueError(f"ring budgets {config.budgets} sum to {total} but k={k}")
    if config.pad not in PADS:
        raise ValueError(f"pad must be one of {PADS}, got {config.pad!r}")
    if config.last_n < 1:
        raise ValueError(f"last_n must be >= 1, got {config.last_n}")
    if config.last_n > 1 and len(config.budgets) > 1:
        raise ValueError("last_n > 1 applies to single-source TGH only (TGH-2 anchors each source)")
    if config.max_explicit_depth is not None and config.max_explicit_depth < 1:
        raise ValueError(f"max_explicit_depth must be >= 1, got {config.max_explicit_depth}")


def _overflow_order(sizes: Sequence[int], budgets: Sequence[int], total: int) -> list[tuple[int, int]]:
    """``_assemble_with_overflow`` on position tokens ``(ring, rank)``, before padding."""
    result: list[tuple[int, int]] = []
    overflow: list[tuple[int, int]] = []
    for h, want in enumerate(budgets):
        size = int(sizes[h])
        take = min(len(overflow), max(0, want - size))
        result += overflow[:take]
        overflow = overflow[take:]
        want -= take
        if size == 0:
            continue
        result += [(h, r) for r in range(min(want, size))]
        overflow += [(h, r) for r in range(want, size)]
    if len(result) < total:
        result += overflow[: total - len(result)]
    return result


def _assemble(per_ring: list[np.ndarray], budgets: Sequence[int], total: int) -> np.ndarray:
    """Ranked picks ``(n, total)`` (``-1`` = slot left for padding) from per-ring top lists."""
    n_rings = len(per_ring)
    stacked = np.concatenate(per_ring + [np.full((per_ring[0].shape[0], 1), -1, np.int64)], axis=1)
    sizes = np.stack([(p >= 0).sum(axis=1) for p in per_ring], axis=1)
    code = (sizes * (total + 1) ** np.arange(n_rings)).sum(axis=1)
    patterns, first, inverse = np.unique(code, return_index=True, return_inverse=True)
    table = np.full((patterns.size, total), n_rings * total, dtype=np.int64)
    for p, row in enumerate(first):
        tokens = _overflow_order(sizes[row], budgets, total)
        table[p, : len(tokens)] = [h * total + r for h, r in tokens]
    return np.take_along_axis(stacked, table[inverse.ravel()], axis=1)


def _fill_from(result: np.ndarray, candidates: np.ndarray) -> np.ndarray:
    """Fill the ``-1`` tail of each row of ``result`` with unused ``candidates``, in order."""
    filled = (result >= 0).sum(axis=1)
    usable = (candidates >= 0) & ~(candidates[:, :, None] == result[:, None, :]).any(axis=2)
    position = filled[:, None] + np.cumsum(usable, axis=1) - 1
    usable &= position < result.shape[1]
    rows, cols = np.nonzero(usable)
    out = result.copy()
    out[rows, position[rows, cols]] = candidates[rows, cols]
    return out


def _random_fill(
    result: np.ndarray,
    uids: np.ndarray,
    pool_items: np.ndarray,
    seed: int,
    blocked: np.ndarray | None,
    active: np.ndarray | None = None,
) -> np.ndarray:
    """``_random_pad_sample`` for the (``active``) rows still short:
    ``Random(seed + uid).sample(pool, n)``, the pool being ``pool_items`` minus the row's picks and
    its ``blocked`` items (dense boolean rows over all items)."""
    out = result.copy()
    short = (result < 0).any(axis=1)
    if active is not None:
        short &= active
    for row in np.nonzero(short)[0]:
        picks = result[row][result[row] >= 0]
        used = np.zeros(blocked.shape[1], bool) if blocked is not None else None
        if used is None:
            pool = pool_items[~np.isin(pool_items, picks)]
        else:
            used |= blocked[row]
            used[picks] = True
            pool = pool_items[~used[pool_items]]
        n_missing = result.shape[1] - picks.size
        rng = random.Random(seed + int(uids[row]))
        drawn = rng.sample(pool.tolist(), min(n_missing, pool.size))
        out[row, picks.size : picks.size + len(drawn)] = drawn
    return out


def _compact(lists: np.ndarray) -> np.ndarray:
    """Move the ``-1`` slots of each row to its end, keeping the order of the rest."""
    order = np.argsort(lists < 0, axis=1, kind="stable")
    return np.take_along_axis(lists, order, axis=1)


@dataclass
class _Sources:
    """Graph side, one row per distinct source item: its rings, the items the catch-all leaves out
    (``{s} | rings``; only when needed), the ring-1 bonus ``alpha * edge_weights``; and the random
    pad's pool (items in the graph, ascending)."""

    rings: list[sp.csr_matrix]
    visited: sp.csr_matrix | None
    bonus: sp.csr_matrix
    pool: np.ndarray


@dataclass
class _Users:
    """User side: histories (also flattened, with ``ends``), each source's row in :class:`_Sources`
    and whether the history is long enough to have that source."""

    histories: list[np.ndarray]
    lengths: np.ndarray
    ends: np.ndarray
    flat: np.ndarray
    source_row: np.ndarray
    available: np.ndarray


def recommend_tgh(
    counts: sp.spmatrix,
    features: np.ndarray,
    histories: Sequence[np.ndarray],
    config: TGHConfig = TGHConfig(),
    k: int = 10,
) -> np.ndarray:
    """TGH top-``k`` lists ``(n_users, k)`` of item ids, best first (``-1`` only if the padding pool
    runs out). ``histories[u]`` is user ``u``'s sequence up to the prediction point (non-empty)."""
    counts = sp.csr_matrix(counts)
    n_items = counts.shape[0]
    _validate(config, counts, k)
    feats = validate_features(features, n_items)
    hists = as_sequences(histories, n_items, "history")
    if any(h.size == 0 for h in hists):
        raise ValueError("every user needs a non-empty history")
    n_sources = len(config.budgets)
    depth = max(config.max_hops, *(len(b) for b in config.budgets))
    n_explicit = min(depth, config.max_explicit_depth or depth)

    lengths = np.array([h.size for h in hists])
    ends = np.cumsum(lengths)
    flat = np.concatenate(hists)
    # Source j: history[-(j+1)], falling back to the last item where the history is too short.
    sources = np.stack([flat[ends - 1 - np.minimum(j, lengths - 1)] for j in range(n_sources)], 1)
    unique_src, source_row = np.unique(sources, return_inverse=True)
    users = _Users(
        histories=hists,
        lengths=lengths,
        ends=ends,
        flat=flat,
        source_row=source_row.reshape(sources.shape),
        available=lengths[:, None] > np.arange(n_sources)[None, :],
    )

    ring_rows = ring_masks(counts, unique_src, n_explicit)
    visited = None
    if config.pad == "semantic" or max(len(b) for b in config.budgets) > n_explicit:
        eye = sp.csr_matrix(
            (np.ones(unique_src.size, bool), (np.arange(unique_src.size), unique_src)),
            shape=(unique_src.size, n_items),
        )
        visited = (eye + sum(ring_rows[1:], ring_rows[0])).astype(bool).tocsr()
    graph = _Sources(
        rings=ring_rows,
        visited=visited,
        bonus=(edge_weights(counts)[unique_src] * np.float32(config.alpha)).tocsr(),
        pool=np.nonzero(counts.getnnz(axis=1) + counts.getnnz(axis=0))[0],
    )

    out = np.full((len(hists), k), -1, dtype=np.int64)
    for start in range(0, len(hists), config.chunk_size):
        chunk = np.arange(start, min(start + config.chunk_size, len(hists)))
        out[chunk] = _recommend_chunk(chunk, users, graph, feats, config)
    return out


def _recommend_chunk(
    chunk: np.ndarray, data: _Users, graph: _Sources, feats: np.ndarray, config: TGHConfig
) -> np.ndarray:
    """TGH lists for the users ``chunk``: per source, score, rank each ring, assemble, pad."""
    n_items = feats.shape[0]
    lengths, ends, flat = data.lengths[chunk], data.ends[chunk], data.flat
    hist = np.zeros((chunk.size, n_items), dtype=bool)
    hist[
        np.repeat(np.arange(chunk.size), lengths),
        np.concatenate([data.histories[u] for u in chunk]),
    ] = True
    already = np.zeros_like(hist)  # items picked by earlier sources
    n_explicit = len(graph.rings)
    per_source, pad0 = [], None
    for j, budgets in enumerate(config.budgets):
        total = sum(budgets)
        rows = data.source_row[chunk, j]
        available = data.available[chunk, j]
        if j == 0:
            # build_user_anchors_mean: the mean of the last `last_n` items (last_n = 1: the last).
            take = np.minimum(config.last_n, lengths)
            offset = np.arange(config.last_n)[None, :]
            ok = offset < take[:, None]
            idx = np.where(ok, ends[:, None] - 1 - offset, 0)
            count = take[:, None].astype(np.float32)
            anchor = (feats[flat[idx]] * ok[:, :, None]).sum(axis=1) / count
        else:
            anchor = feats[flat[ends - 1 - np.minimum(j, lengths - 1)]]
        norm = np.maximum(np.linalg.norm(anchor, axis=1, keepdims=True), np.float32(1e-8))
        scores = (anchor / norm) @ feats.T  # float32 throughout, as in tgh.py
        open_ = ~already & ~hist if config.exclude_history else ~already
        catchall = None if graph.visited is None else ~(graph.visited[rows].toarray() | hist)
        per_ring = []
        for h in range(len(budgets)):
            ring = graph.rings[h][rows].toarray() if h < n_explicit else catchall
            ring_scores = scores + graph.bonus[rows].toarray() if h == 0 else scores
            per_ring.append(topk_from_scores(ring_scores, total, ring & open_))
        picks = _assemble(per_ring, budgets, total)
        if config.pad == "semantic":
            pad_list = topk_from_scores(scores, total, catchall & open_)
            picks = _fill_from(picks, pad_list)
            pad0 = pad_list if j == 0 else pad0
        blocked = already | hist if config.exclude_history else already
        picks = _random_fill(picks, chunk, graph.pool, config.seed, blocked, available)
        picks[~available] = -1
        picked_r, picked_c = np.nonzero(picks >= 0)
        already[picked_r, picks[picked_r, picked_c]] = True
        per_source.append(picks)
    combined = _compact(np.concatenate(per_source, axis=1))
    if (combined < 0).any():
        if pad0 is not None:
            combined = _fill_from(combined, pad0)
        blocked = hist if config.exclude_history else None
        combined = _random_fill(combined, chunk, graph.pool, config.seed, blocked)
    return combined
