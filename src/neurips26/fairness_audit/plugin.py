r"""The plug-in ("plugin") mutual-information estimator of paper 06, in nats.

Each column is cut at its 1/8 ... 7/8 quantiles (8 bins, fewer on ties); columns whose bin codes are identical are
merged ("shared bins": an exact copy of a feature changes no plug-in value); up to two remaining columns are coded
jointly by their bin pairs (at most 64 cells), more than two by k-means (32 clusters, k-means++ with ``n_init=1``,
``random_state=seed``) on the bin codes scaled to [0, 1], run on the distinct bin cells weighted by their counts
(the same objective as on the rows, cheaper), or the exact cells when there are at most 32. ``I`` is the discrete
MI from Miller-Madow corrected entropies, ``H_MM = H_plugin + (m - 1) / (2 n)`` with ``m`` the occupied cells;
``I(X;A|Y) = H(X,Y) + H(A,Y) - H(X,A,Y) - H(Y)``.
"""

from __future__ import annotations

import numpy as np
from sklearn.cluster import KMeans

from .entropies import mm_entropy_of

__all__ = [
    "N_BINS",
    "N_CLUSTERS",
    "joint_code",
    "plugin_conditional_mutual_information",
    "plugin_mutual_information",
    "quantile_bins",
]

N_BINS = 8
N_CLUSTERS = 32


def quantile_bins(x: np.ndarray, n_bins: int = N_BINS) -> np.ndarray:
    """Bin index of each value, per column, cut at the column's unique ``1/n_bins ... (n_bins-1)/n_bins``
    quantiles (fewer bins where quantiles tie)."""
    if n_bins < 2:
        raise ValueError(f"n_bins must be >= 2, got {n_bins}")
    x = np.asarray(x, dtype=np.float64)
    if x.shape[1] == 0:
        return np.empty((len(x), 0), dtype=np.int64)
    cuts = np.quantile(x, np.arange(1, n_bins) / n_bins, axis=0)
    return np.stack(
        [np.searchsorted(np.unique(cuts[:, j]), x[:, j], side="right") for j in range(x.shape[1])], axis=1
    ).astype(np.int64)


def joint_code(bins: np.ndarray, n_clusters: int = N_CLUSTERS, seed: int = 0) -> np.ndarray:
    """One integer code per row of a bin-code matrix: identical columns merged, then the exact cell for up to two
    columns (or up to ``n_clusters`` distinct rows), k-means on the bins scaled to [0, 1] otherwise."""
    bins = np.asarray(bins, dtype=np.int64)
    n = len(bins)
    if bins.shape[1] == 0:
        return np.zeros(n, dtype=np.int64)
    bins = np.unique(bins, axis=1)  # shared bins: exact copies collapse to one column (sorted, order-free)
    low = bins.min(axis=0)
    span = bins.max(axis=0) - low + 1
    cell = np.ravel_multi_index(tuple((bins - low).T), tuple(span.tolist()))  # at most 8^12 cells: fits int64
    cells, code, counts = np.unique(cell, return_inverse=True, return_counts=True)
    if bins.shape[1] <= 2 or len(cells) <= n_clusters:
        return code.ravel().astype(np.int64)
    centres = np.stack(np.unravel_index(cells, tuple(span.tolist())), axis=1) / np.maximum(span - 1, 1)
    kmeans = KMeans(n_clusters=n_clusters, n_init=1, random_state=seed).fit(centres, sample_weight=counts)
    return kmeans.labels_[code.ravel()].astype(np.int64)


def plugin_mutual_information(code: np.ndarray, t: np.ndarray) -> float:
    """Raw Miller-Madow ``I(X;T) = H(X) + H(T) - H(X,T)`` of a discrete code and a discrete target (exactly 0 for
    a constant code)."""
    if code.min() == code.max():
        return 0.0
    return mm_entropy_of(code) + mm_entropy_of(t) - mm_entropy_of(code, t)


def plugin_conditional_mutual_information(code: np.ndarray, a: np.ndarray, y: np.ndarray) -> float:
    """Raw Miller-Madow ``I(X;A|Y) = H(X,Y) + H(A,Y) - H(X,A,Y) - H(Y)`` (exactly 0 for a constant code)."""
    if code.min() == code.max():
        return 0.0
    return mm_entropy_of(code, y) + mm_entropy_of(a, y) - mm_entropy_of(code, a, y) - mm_entropy_of(y)
