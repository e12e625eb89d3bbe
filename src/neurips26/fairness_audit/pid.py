r"""Discrete partial information decomposition (PID) of a target T and two sources S1, S2 (partial information
decomposition is a keyword of the paper's earlier version, OpenReview ZsqigefFO8), from a joint probability table ``p[t,
s1, s2]``.

Implemented: the Williams-Beer redundancy (2010)

    I_min(T; S1, S2) = sum_t p(t) min_i I(T=t; S_i),   I(T=t; S) = sum_s p(s|t) log(p(t|s) / p(t)),

the specific information being ``KL(p(s|t) || p(s)) >= 0``; then ``Uni_1 = I(T;S1) - Red``, ``Uni_2 = I(T;S2) -
Red`` and ``Syn = I(T;S1,S2) - I(T;S1) - I(T;S2) + Red``. All four atoms are non-negative for two sources (the
specific information cannot exceed ``I(T=t; S1, S2)``), so nothing is clipped beyond float round-off. Values are
in nats (divide by ``log 2`` for bits). Everything is vectorised over the table; :func:`pid_from_samples` builds
the table from integer codes (plug-in frequencies).

Assumed and where it deviates:

* Only I_min. The addendum also asks for BROJA (Bertschinger et al. 2014) via ``dit``; ``dit`` is not installed and
  BROJA needs a convex optimisation over distributions with fixed (T, S_i) marginals, so it is left out. I_min is
  known to credit independent sources with redundancy (for T = (S1, S2) it gives 1 bit), which the axiom table
  shows rather than hides.
* Sample estimates are plug-in (no bias correction): with ``m`` cells of a source the redundancy is biased upwards
  by at most about ``(m - 1)(|T| - 1) / (2 n)`` nats, the bias of the plug-in ``I(T; S_i)`` that bounds it.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = [
    "PID",
    "imin_redundancy",
    "joint_table",
    "mutual_information_table",
    "pid_from_samples",
    "pid_imin",
    "specific_information",
]


@dataclass(frozen=True)
class PID:
    """The I_min decomposition of ``I(T; S1, S2)`` in nats: ``redundancy + unique_1 + unique_2 + synergy = joint``,
    ``redundancy + unique_i = mutual_i``."""

    redundancy: float
    unique_1: float
    unique_2: float
    synergy: float
    mutual_1: float
    mutual_2: float
    joint: float


def _check_table(p: np.ndarray, ndim: int) -> np.ndarray:
    p = np.asarray(p, dtype=np.float64)
    if p.ndim != ndim:
        raise ValueError(f"joint table must have {ndim} axes, got shape {p.shape}")
    if (p < 0).any() or not np.isfinite(p).all():
        raise ValueError("joint table has negative or non-finite entries")
    total = p.sum()
    if not np.isclose(total, 1.0, rtol=0, atol=1e-9):
        raise ValueError(f"joint table must sum to 1, sums to {total}")
    return p


def _xlogy_ratio(p_joint: np.ndarray, p_ratio_num: np.ndarray, p_ratio_den: np.ndarray) -> np.ndarray:
    """``p_joint * log(num / den)`` with 0 where ``p_joint`` is 0."""
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(p_joint > 0, p_joint * np.log(p_ratio_num / p_ratio_den), 0.0)


def mutual_information_table(p_ts: np.ndarray) -> float:
    """``I(T;S)`` in nats of a 2-D joint table ``p[t, s]``."""
    p_ts = _check_table(p_ts, 2)
    p_t = p_ts.sum(axis=1, keepdims=True)
    p_s = p_ts.sum(axis=0, keepdims=True)
    return float(_xlogy_ratio(p_ts, p_ts, p_t * p_s).sum())


def specific_information(p_ts: np.ndarray) -> np.ndarray:
    """``I(T=t; S) = sum_s p(s|t) log(p(t|s) / p(t))`` for every ``t`` of a 2-D table (0 where ``p(t) = 0``)."""
    p_ts = _check_table(p_ts, 2)
    p_t = p_ts.sum(axis=1, keepdims=True)
    p_s = p_ts.sum(axis=0, keepdims=True)
    per_cell = _xlogy_ratio(p_ts, p_ts, p_t * p_s)  # p(t,s) log(p(t|s)/p(t))
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(p_t[:, 0] > 0, per_cell.sum(axis=1) / p_t[:, 0], 0.0)


def imin_redundancy(p: np.ndarray) -> float:
    """Williams-Beer ``I_min(T; S1, S2)`` in nats of a joint table ``p[t, s1, s2]``."""
    p = _check_table(p, 3)
    p_t = p.sum(axis=(1, 2))
    spec = np.stack([specific_information(p.sum(axis=2)), specific_information(p.sum(axis=1))])
    return float(p_t @ spec.min(axis=0))


def _round_off(value: float) -> float:
    """0 for a float round-off below 0 (the atoms are >= 0 in exact arithmetic); anything else unchanged."""
    return 0.0 if -1e-12 < value < 0 else value


def pid_imin(p: np.ndarray) -> PID:
    """The I_min PID of ``I(T; S1, S2)`` from a joint table ``p[t, s1, s2]``."""
    p = _check_table(p, 3)
    red = imin_redundancy(p)
    mi_1 = mutual_information_table(p.sum(axis=2))
    mi_2 = mutual_information_table(p.sum(axis=1))
    joint = mutual_information_table(p.reshape(p.shape[0], -1))
    return PID(
        redundancy=red,
        unique_1=_round_off(mi_1 - red),
        unique_2=_round_off(mi_2 - red),
        synergy=_round_off(joint - mi_1 - mi_2 + red),
        mutual_1=mi_1,
        mutual_2=mi_2,
        joint=joint,
    )


def joint_table(t: np.ndarray, s1: np.ndarray, s2: np.ndarray) -> np.ndarray:
    """Plug-in joint table ``p[t, s1, s2]`` of three integer code vectors (each relabelled to 0..m-1)."""
    codes = [np.asarray(v) for v in (t, s1, s2)]
    if codes[0].ndim != 1 or any(c.shape != codes[0].shape for c in codes):
        raise ValueError(f"t, s1, s2 must be 1-D of equal length, got shapes {[c.shape for c in codes]}")
    if len(codes[0]) == 0:
        raise ValueError("t, s1, s2 are empty")
    labels, sizes = [], []
    for code in codes:
        values, inverse = np.unique(code, return_inverse=True)
        labels.append(inverse.ravel())
        sizes.append(len(values))
    flat = np.ravel_multi_index(labels, sizes)
    return np.bincount(flat, minlength=int(np.prod(sizes))).reshape(sizes) / len(flat)


def pid_from_samples(t: np.ndarray, s1: np.ndarray, s2: np.ndarray) -> PID:
    """The I_min PID of the plug-in joint distribution of integer codes ``t``, ``s1``, ``s2``."""
    return pid_imin(joint_table(t, s1, s2))
