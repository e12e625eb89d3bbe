"""Discrete entropies in nats (plug-in and Miller-Madow) and the joint cells of integer codes: the counting that
both mutual-information estimators of paper 06 share (:mod:`.cross_entropy` for ``H(T)`` and ``H(A|Y)``,
:mod:`.plugin` for every term)."""

from __future__ import annotations

import numpy as np

__all__ = ["conditional_entropy", "entropy", "joint_counts", "miller_madow_entropy", "mm_entropy_of", "relabel"]


def entropy(counts: np.ndarray) -> float:
    """Plug-in entropy (nats) of a count vector."""
    counts = np.asarray(counts, dtype=np.float64)
    p = counts[counts > 0] / counts.sum()
    return float(-(p * np.log(p)).sum())


def miller_madow_entropy(counts: np.ndarray) -> float:
    """Plug-in entropy plus the Miller-Madow correction ``(m - 1) / (2 n)``, ``m`` the occupied cells."""
    counts = np.asarray(counts)
    return entropy(counts) + (np.count_nonzero(counts) - 1) / (2.0 * counts.sum())


def conditional_entropy(a: np.ndarray, y: np.ndarray) -> float:
    """Plug-in ``H(A|Y)`` (nats) of two 0/1 vectors."""
    return entropy(np.bincount(2 * y + a, minlength=4)) - entropy(np.bincount(y, minlength=2))


def relabel(code: np.ndarray) -> tuple[np.ndarray, int]:
    """Labels 0..m-1 of the distinct values of an integer code, and m (a bincount map when the values are small
    non-negative integers, as codes are; np.unique otherwise)."""
    code = np.asarray(code).ravel()
    if code.dtype.kind in "iub" and len(code) and code.min() >= 0 and code.max() < 4 * len(code) + 64:
        present = np.bincount(code) > 0
        return (np.cumsum(present) - 1)[code], int(present.sum())
    values, inverse = np.unique(code, return_inverse=True)
    return inverse.ravel(), len(values)


def joint_counts(*codes: np.ndarray) -> np.ndarray:
    """Counts of the joint cells of integer codes (mixed-radix combination, then bincount)."""
    joint = np.zeros(len(codes[0]), dtype=np.int64)
    for code in codes:
        labels, m = relabel(code)
        joint = joint * m + labels
    return np.bincount(relabel(joint)[0])


def mm_entropy_of(*codes: np.ndarray) -> float:
    """Miller-Madow entropy of the joint cells of integer codes."""
    return miller_madow_entropy(joint_counts(*codes))
