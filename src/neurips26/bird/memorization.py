"""Memorization of generated samples: the nearest-neighbour distance ratio d1 / d2.

A sample counts as memorized when its Euclidean distance to the nearest training image is below a
third of the distance to the second nearest (d1 / d2 < 1/3). This criterion is our own (the authors'
code has none); it is the common one in the memorization literature.
"""

from __future__ import annotations

import numbers
from dataclasses import dataclass

import numpy as np

# training images per chunk: the (S, chunk) distance block holds about this many entries
CHUNK_ENTRIES = 2**22


@dataclass(frozen=True)
class NearestDistances:
    """Per sample (S,): distances d1, d2 to the nearest and second-nearest training images.

    `nearest` is the index of the nearest training image.
    """

    d1: np.ndarray
    d2: np.ndarray
    nearest: np.ndarray

    @property
    def ratio(self) -> np.ndarray:
        """d1 / d2; 0 where d2 = 0 (the sample coincides with a duplicated training image)."""
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.where(self.d2 > 0, self.d1 / np.where(self.d2 > 0, self.d2, 1.0), 0.0)


def _flat(x, name: str) -> np.ndarray:
    arr = np.asarray(x, dtype=np.float64)
    if arr.ndim < 2 or arr.shape[0] == 0:
        raise ValueError(f"{name} must be a non-empty batch (N, ...), got shape {arr.shape}")
    if not np.isfinite(arr).all():
        raise ValueError(f"{name} contains {int((~np.isfinite(arr)).sum())} NaN or infinite values")
    return arr.reshape(arr.shape[0], -1)


def nearest_distances(samples, train, chunk=None) -> NearestDistances:
    """Euclidean distances from each sample to its nearest and second-nearest training images.

    Images are flattened; the training set is streamed in chunks. Squared distances are computed as
    |s|^2 - 2 s.x + |x|^2 in float64 (clipped at 0).
    """
    s = _flat(samples, "samples")
    tr = _flat(train, "train")
    if s.shape[1] != tr.shape[1]:
        raise ValueError(f"samples have {s.shape[1]} values per image but training images have {tr.shape[1]}")
    if tr.shape[0] < 2:
        raise ValueError(f"need at least 2 training images for d1/d2, got {tr.shape[0]}")
    if chunk is None:
        chunk = max(1, CHUNK_ENTRIES // s.shape[0])
    elif isinstance(chunk, bool) or not isinstance(chunk, numbers.Integral) or chunk < 1:
        raise ValueError(f"chunk must be a positive int, got {chunk!r}")
    n_samples = s.shape[0]
    s_norm = np.einsum("sd,sd->s", s, s)
    best = np.full((n_samples, 2), np.inf)  # two smallest squared distances, sorted
    best_idx = np.full((n_samples, 2), -1, dtype=np.int64)
    rows = np.arange(n_samples)[:, None]
    for start in range(0, tr.shape[0], int(chunk)):
        block = tr[start : start + int(chunk)]
        sq = s_norm[:, None] - 2.0 * (s @ block.T) + np.einsum("nd,nd->n", block, block)[None, :]
        np.maximum(sq, 0.0, out=sq)
        cand = np.concatenate([best, sq], axis=1)
        cand_idx = np.concatenate(
            [best_idx, np.broadcast_to(np.arange(start, start + block.shape[0]), sq.shape)], axis=1
        )
        two = np.argpartition(cand, 1, axis=1)[:, :2]
        vals = cand[rows, two]
        order = np.argsort(vals, axis=1, kind="stable")
        best = vals[rows, order]
        best_idx = cand_idx[rows, two[rows, order]]
    return NearestDistances(d1=np.sqrt(best[:, 0]), d2=np.sqrt(best[:, 1]), nearest=best_idx[:, 0].copy())


def nearest_distance_ratio(samples, train, chunk=None) -> np.ndarray:
    """d1 / d2 per sample (`nearest_distances(...).ratio`)."""
    return nearest_distances(samples, train, chunk=chunk).ratio


def fraction_memorized(ratio, threshold: float = 1.0 / 3.0) -> float:
    """Fraction of samples with d1 / d2 < threshold (default 1/3)."""
    r = np.asarray(ratio, dtype=np.float64).reshape(-1)
    if r.size == 0:
        raise ValueError("ratio must hold at least one sample")
    if not np.isfinite(r).all() or np.any(r < 0):
        raise ValueError("ratio must be finite and >= 0 (d1 / d2 per sample)")
    if isinstance(threshold, bool) or not isinstance(threshold, numbers.Real) or not 0 < threshold <= 1:
        raise ValueError(f"threshold must be in (0, 1], got {threshold!r}")
    return float(np.mean(r < threshold))
