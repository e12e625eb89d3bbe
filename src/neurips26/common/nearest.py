"""Nearest neighbours by Euclidean distance between flattened items (images, volumes, feature vectors), the reference
streamed in chunks so that no whole (queries x reference) matrix is held: what the memorization measures of
generated samples read (paper 04's nearest-neighbour ratio d1 / d2, ``bird.memorization``; paper 03's
nearest-training distance, ``anadiffusion.metrics``).

Squared distances are computed as |q|^2 - 2 q.r + |r|^2 in float64 and clipped at 0 (the Gram form rounds a distance
of 0 to a tiny negative number)."""

from __future__ import annotations

import numbers
from dataclasses import dataclass

import numpy as np

__all__ = ["CHUNK_ENTRIES", "Nearest", "flat_rows", "k_nearest"]

CHUNK_ENTRIES = 2**22  # the default chunk: the (queries, chunk) block of squared distances holds about this many


def flat_rows(x, name: str) -> np.ndarray:
    """`x` (N, ...) as float64 rows (N, F); ValueError naming `name` for fewer than two dimensions, an empty batch or
    a NaN or infinite value."""
    arr = np.asarray(x, dtype=np.float64)
    if arr.ndim < 2 or arr.shape[0] == 0:
        raise ValueError(f"{name} must be a non-empty batch (N, ...), got shape {arr.shape}")
    if not np.isfinite(arr).all():
        raise ValueError(f"{name} contains {int((~np.isfinite(arr)).sum())} NaN or infinite values")
    return arr.reshape(arr.shape[0], -1)


@dataclass(frozen=True)
class Nearest:
    """Per query row: the Euclidean distances (n, k) to its k nearest reference rows, ascending, and their row
    indices (n, k) in the reference."""

    distances: np.ndarray
    indices: np.ndarray


def k_nearest(queries: np.ndarray, reference: np.ndarray, k: int = 1, chunk: int | None = None) -> Nearest:
    """The `k` nearest rows of `reference` (m, F) to each row of `queries` (n, F) (float64 rows, e.g. from
    :func:`flat_rows`), by Euclidean distance, the reference streamed `chunk` rows at a time (default: about
    :data:`CHUNK_ENTRIES` entries per block). ValueError for unequal row widths, k outside [1, m], or a chunk that
    is not a positive integer."""
    q, r = np.asarray(queries, dtype=np.float64), np.asarray(reference, dtype=np.float64)
    if q.ndim != 2 or r.ndim != 2 or q.shape[1] != r.shape[1]:
        raise ValueError(f"queries {q.shape} and reference {r.shape}: need rows (n, F) and (m, F) of one width F")
    if isinstance(k, bool) or not isinstance(k, numbers.Integral) or not 1 <= k <= len(r):
        raise ValueError(f"k = {k!r}: need an integer in [1, {len(r)}] (the reference rows)")
    if chunk is None:
        chunk = max(1, CHUNK_ENTRIES // max(len(q), 1))
    elif isinstance(chunk, bool) or not isinstance(chunk, numbers.Integral) or chunk < 1:
        raise ValueError(f"chunk must be a positive int, got {chunk!r}")
    rows = np.arange(len(q))[:, None]
    q_norm = np.einsum("nd,nd->n", q, q)
    best = np.full((len(q), k), np.inf)  # the k smallest squared distances so far, ascending
    best_index = np.full((len(q), k), -1, dtype=np.int64)
    for start in range(0, len(r), int(chunk)):
        block = r[start : start + int(chunk)]
        squared = q_norm[:, None] - 2.0 * (q @ block.T) + np.einsum("md,md->m", block, block)[None, :]
        np.maximum(squared, 0.0, out=squared)
        candidates = np.concatenate([best, squared], axis=1)
        index = np.concatenate([best_index, np.broadcast_to(np.arange(start, start + len(block)), squared.shape)], 1)
        kept = np.argpartition(candidates, k - 1, axis=1)[:, :k]
        values = candidates[rows, kept]
        order = np.argsort(values, axis=1, kind="stable")
        best, best_index = values[rows, order], index[rows, kept[rows, order]]
    return Nearest(np.sqrt(best), best_index)
