"""Checks of the inputs every rule shares: pairwise matrices, reference policies, regularisation strength."""

from __future__ import annotations

import numpy as np

from neurips26.common.validation import check_number

REF_SUM_TOL = 1e-9


def check_beta(beta: float, who: str = "rule") -> float:
    """``beta`` when it is a finite number > 0; ValueError naming ``who`` otherwise."""
    return check_number("beta", beta, 0.0, low_open=True, who=who)


def check_pairwise(P: np.ndarray, who: str = "rule") -> np.ndarray:
    """``P`` as float array ``(..., m, m)`` with entries in [0, 1] and ``P + P^T = 1``."""
    P = np.asarray(P, dtype=float)
    if P.ndim < 2 or P.shape[-1] != P.shape[-2] or P.shape[-1] < 2:
        raise ValueError(f"{who}: P must have shape (..., m, m) with m >= 2, got {P.shape}")
    if not np.isfinite(P).all() or (P < 0).any() or (P > 1).any():
        raise ValueError(f"{who}: P entries must lie in [0, 1]")
    if np.abs(P + np.swapaxes(P, -1, -2) - 1).max() > 1e-9:
        raise ValueError(f"{who}: P must satisfy P[a, b] + P[b, a] = 1 (a pairwise preference matrix)")
    return P


def check_reference(ref: np.ndarray, m: int, who: str = "rule", support: bool = True) -> np.ndarray:
    """``ref`` as a float array ``(..., m)`` on the simplex; with ``support`` every entry must be > 0."""
    ref = np.asarray(ref, dtype=float)
    if ref.shape[-1:] != (m,):
        raise ValueError(f"{who}: reference must have last dimension m={m}, got shape {ref.shape}")
    if not np.isfinite(ref).all() or (ref < 0).any():
        raise ValueError(f"{who}: reference must be finite and >= 0")
    if np.abs(ref.sum(-1) - 1).max() > REF_SUM_TOL:
        raise ValueError(f"{who}: reference must sum to 1 (got sums {np.unique(ref.sum(-1).round(12))[:3]})")
    if support and (ref <= 0).any():
        raise ValueError(f"{who}: reference has zeros where the rule needs full support (exp(r/beta) reweighting)")
    return ref
