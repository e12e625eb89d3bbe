"""Memorization of generated samples: the nearest-neighbour distance ratio d1 / d2.

A sample counts as memorized when its Euclidean distance to the nearest training image is below a
third of the distance to the second nearest (d1 / d2 < 1/3). This criterion is our own (the authors'
code has none); it is the common one in the memorization literature.
"""

from __future__ import annotations

import numbers
from dataclasses import dataclass

import numpy as np

from neurips26.common.nearest import flat_rows, k_nearest


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


def nearest_distances(samples, train, chunk=None) -> NearestDistances:
    """Euclidean distances from each sample to its nearest and second-nearest training images.

    Images are flattened; the training set is streamed in chunks (`chunk` images at a time). Squared distances are
    computed as |s|^2 - 2 s.x + |x|^2 in float64 (clipped at 0): ``common.nearest.k_nearest``.
    """
    s = flat_rows(samples, "samples")
    tr = flat_rows(train, "train")
    if s.shape[1] != tr.shape[1]:
        raise ValueError(f"samples have {s.shape[1]} values per image but training images have {tr.shape[1]}")
    if tr.shape[0] < 2:
        raise ValueError(f"need at least 2 training images for d1/d2, got {tr.shape[0]}")
    found = k_nearest(s, tr, k=2, chunk=chunk)
    return NearestDistances(d1=found.distances[:, 0], d2=found.distances[:, 1], nearest=found.indices[:, 0].copy())


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
