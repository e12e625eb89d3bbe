r"""The item-transition graph and its exact-hop rings (the paper's rings; GraphRec ``src/tgh.py``).

* :func:`transition_counts`: ``C[a, b]`` = number of consecutive pairs ``a -> b`` over the training
  sequences (GraphRec ``src/prepare_data.py``, ``build_transition_graph``).
* :func:`ring_masks` / :func:`rings`: ring 1 of a source ``s`` is its out-neighbours; ring ``h``
  holds the items first reached at hop ``h``, i.e. reachable in ``h`` hops and not in ``{s}`` or any
  earlier ring. This is GraphRec's ``compute_hop_rings_csr`` (``visited = I + A``, ``ring_h =
  ring_{h-1} A`` minus visited), row by row for the sources asked for instead of for every item. As
  there, ring 1 is the adjacency row itself, so it contains ``s`` when ``s`` has a self-loop (a
  repeated consecutive interaction); rings 2 and deeper never contain ``s``.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import scipy.sparse as sp

__all__ = ["as_sequences", "ring_masks", "rings", "transition_counts"]


def as_sequences(sequences: Sequence[np.ndarray], n_items: int, what: str = "sequence") -> list:
    """``sequences`` as a list of int64 arrays, with every id checked to lie in ``0..n_items-1``."""
    out = []
    for u, seq in enumerate(sequences):
        arr = np.asarray(seq, dtype=np.int64).ravel()
        if arr.size and (arr.min() < 0 or arr.max() >= n_items):
            raise ValueError(f"{what} {u} has item ids outside 0..{n_items - 1}")
        out.append(arr)
    return out


def transition_counts(sequences: Sequence[np.ndarray], n_items: int) -> sp.csr_matrix:
    """``(n_items, n_items)`` CSR matrix of consecutive-pair counts ``c(a, b)`` (int64)."""
    seqs = as_sequences(sequences, n_items)
    src = [s[:-1] for s in seqs if s.size > 1]
    dst = [s[1:] for s in seqs if s.size > 1]
    a = np.concatenate(src) if src else np.zeros(0, np.int64)
    b = np.concatenate(dst) if dst else np.zeros(0, np.int64)
    counts = sp.csr_matrix((np.ones(a.size, np.int64), (a, b)), shape=(n_items, n_items), dtype=np.int64)
    counts.sum_duplicates()
    return counts


def _adjacency(counts: sp.spmatrix) -> sp.csr_matrix:
    """Boolean-valued float32 adjacency (1 where ``c(a, b) > 0``)."""
    adj = sp.csr_matrix(counts, dtype=np.float32, copy=True)
    adj.eliminate_zeros()
    adj.data[:] = 1.0
    return adj


def ring_masks(counts: sp.spmatrix, sources: np.ndarray, hops: int) -> list[sp.csr_matrix]:
    """Rings 1..``hops`` of every source as boolean CSR rows: ``out[h-1][r, i]`` is True iff item
    ``i`` is first reached from ``sources[r]`` at hop ``h``.

    Sparse BFS on the frontier: ``ring_h = (ring_{h-1} @ A) \\ visited`` with ``visited`` starting
    at ``{source} | ring_1``, batched over all sources with one sparse product per hop.
    """
    if hops < 1:
        raise ValueError(f"hops must be >= 1, got {hops}")
    n_items = counts.shape[0]
    if counts.shape != (n_items, n_items):
        raise ValueError(f"counts must be square, got shape {counts.shape}")
    sources = np.asarray(sources, dtype=np.int64).ravel()
    if sources.size and (sources.min() < 0 or sources.max() >= n_items):
        raise ValueError(f"sources outside 0..{n_items - 1}")
    adj = _adjacency(counts)
    n_src = sources.size
    ring = adj[sources]
    itself = sp.csr_matrix((np.ones(n_src, np.float32), (np.arange(n_src), sources)), shape=(n_src, n_items))
    visited = (ring + itself).tocsr()
    visited.data[:] = 1.0
    out = [ring.astype(bool)]
    for _ in range(2, hops + 1):
        reach = (ring @ adj).tocsr()
        reach.data[:] = 1.0
        ring = (reach - reach.multiply(visited)).tocsr()
        ring.eliminate_zeros()
        visited = (visited + ring).tocsr()
        visited.data[:] = 1.0
        out.append(ring.astype(bool))
    return out


def rings(counts: sp.spmatrix, source: int, hops: int) -> list[np.ndarray]:
    """Exact-hop rings 1..``hops`` around one ``source``: a list of sorted item-id arrays."""
    masks = ring_masks(counts, np.array([source]), hops)
    return [np.sort(m.indices).astype(np.int64) for m in masks]
