r"""The mutual-information estimators of paper 06 behind one interface: the registry :data:`ESTIMATORS`, the
checks of their inputs, and the :class:`Estimate` that every measure returns (a raw value and how it was clipped).

Values are in nats for a feature block ``x (n, k)`` (``k`` may be 0), a binary protected attribute ``a`` and a
binary label ``y``. Two estimators: ``"ce"`` (the default, cross-entropy; :mod:`.cross_entropy`) and ``"plugin"``
(quantile bins and Miller-Madow entropies; :mod:`.plugin`).

* ``k = 0`` gives exactly 0 (no features, no information): the cross-fitted intercept-only model would give a
  small negative number instead.
* Negative estimates: :func:`clip_estimate` turns a raw value into an :class:`Estimate`. A raw value in
  ``[-tol, 0)`` is clipped to 0 and flagged ``clipped``; a raw value below ``-tol`` is **kept** and flagged
  ``negative``, so the caller reports it (no silent clip). ``tol`` defaults to :data:`NEG_TOL` = 0.01 nats.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial

import numpy as np

from .cross_entropy import (
    C_REG,
    GATE_Z,
    N_FOLDS,
    N_KNOTS,
    bayes_scores_from_features,
    ce_conditional_mutual_information,
    ce_mutual_information,
    spline_features,
)
from .data import binary_int8
from .plugin import (
    N_BINS,
    N_CLUSTERS,
    joint_code,
    plugin_conditional_mutual_information,
    plugin_mutual_information,
    quantile_bins,
)

__all__ = [
    "ESTIMATORS",
    "NEG_TOL",
    "Estimate",
    "Estimator",
    "bayes_scores",
    "ce_estimator",
    "clip_estimate",
    "conditional_mutual_information",
    "get_estimator",
    "mutual_information",
    "plugin_estimator",
    "validate_inputs",
]

NEG_TOL = 0.01  # nats: raw estimates in [-NEG_TOL, 0) are clipped to 0, lower ones are reported


@dataclass(frozen=True)
class Estimate:
    """An MI estimate (nats): ``value`` is what to use, ``raw`` what the estimator returned.

    ``clipped``: ``-tol <= raw < 0`` was set to 0. ``negative``: ``raw < -tol``, kept as ``value`` and reported.
    """

    value: float
    raw: float
    clipped: bool = False
    negative: bool = False


def clip_estimate(raw: float, tol: float = NEG_TOL) -> Estimate:
    """:class:`Estimate` of a raw value: clip to 0 within ``tol`` below 0, keep and flag anything lower."""
    if tol < 0:
        raise ValueError(f"tol must be >= 0, got {tol}")
    raw = float(raw)
    if not math.isfinite(raw):
        raise ValueError(f"estimate is not finite: {raw}")
    if raw >= 0:
        return Estimate(raw, raw)
    if raw >= -tol:
        return Estimate(0.0, raw, clipped=True)
    return Estimate(raw, raw, negative=True)


def _binary(values, what: str) -> np.ndarray:
    return binary_int8(values, what).astype(np.int64)


def validate_inputs(x, a=None, y=None, n_folds: int = N_FOLDS):
    """``(x, a, y)`` as float64 ``(n, k)`` and int64 0/1 arrays, checked (``a`` or ``y`` may be None).

    Raises ValueError naming the input: x not 2-D or not finite, a/y not binary, lengths that differ, a constant
    ``a`` or ``y``, or a class with fewer than ``n_folds`` samples (cross-fitting needs one per fold)."""
    x = np.asarray(x, dtype=np.float64)
    if x.ndim == 1:
        x = x[:, None]
    if x.ndim != 2:
        raise ValueError(f"x must be (n, k), got shape {x.shape}")
    if not np.isfinite(x).all():
        raise ValueError(f"x has {int((~np.isfinite(x)).sum())} NaN or infinite value(s)")
    out = [x]
    for name, v in (("a", a), ("y", y)):
        if v is None:
            out.append(None)
            continue
        v = _binary(v, name)
        if len(v) != len(x):
            raise ValueError(f"{name} has {len(v)} rows, x has {len(x)}")
        counts = np.bincount(v, minlength=2)
        if counts.min() < n_folds:
            raise ValueError(f"{name} has class counts {counts.tolist()}; each class needs >= {n_folds} samples")
        out.append(v)
    return tuple(out)


def bayes_scores(x, y, seed: int = 0, n_folds: int = N_FOLDS, C: float = C_REG, gate_z: float = GATE_Z) -> np.ndarray:
    """Cross-fitted Bayes scores ``s(X) = P(Y=1|X)`` of a feature block (see :mod:`.cross_entropy`)."""
    x, _, y = validate_inputs(x, None, y, n_folds)
    return bayes_scores_from_features(spline_features(x), y, seed, n_folds, C, gate_z)


@dataclass(frozen=True)
class Estimator:
    """An MI estimator in stages, so that the expensive parts are shared.

    ``encode(x)`` turns columns into a per-column representation that can be concatenated across feature blocks
    (CE: standardized spline features; plug-in: bin codes). ``prepare(rep, seed)`` turns a coalition's
    concatenated representation into what ``mi(prep, t, seed)`` and ``cmi(prep, a, y, seed)`` take (CE: the
    features as they are; plug-in: the joint code). ``mi`` and ``cmi`` return raw values (nats, not clipped)."""

    name: str
    encode: Callable[[np.ndarray], np.ndarray]
    prepare: Callable[[np.ndarray, int], np.ndarray]
    mi: Callable[[np.ndarray, np.ndarray, int], float]
    cmi: Callable[[np.ndarray, np.ndarray, np.ndarray, int], float]


def _identity(rep: np.ndarray, seed: int) -> np.ndarray:
    return rep


def ce_estimator(n_folds: int = N_FOLDS, C: float = C_REG, n_knots: int = N_KNOTS) -> Estimator:
    """The cross-entropy estimator with its settings (defaults: 5 folds, C = 1, 3 quantile knots)."""
    return Estimator(
        name="ce",
        encode=partial(spline_features, n_knots=n_knots),
        prepare=_identity,
        mi=partial(ce_mutual_information, n_folds=n_folds, C=C),
        cmi=partial(ce_conditional_mutual_information, n_folds=n_folds, C=C),
    )


def plugin_estimator(n_bins: int = N_BINS, n_clusters: int = N_CLUSTERS) -> Estimator:
    """The plug-in estimator with its settings (defaults: 8 quantile bins, 32 k-means clusters)."""
    return Estimator(
        name="plugin",
        encode=partial(quantile_bins, n_bins=n_bins),
        prepare=lambda rep, seed: joint_code(rep, n_clusters, seed),
        mi=lambda code, t, seed: plugin_mutual_information(code, t),
        cmi=lambda code, a, y, seed: plugin_conditional_mutual_information(code, a, y),
    )


ESTIMATORS: dict[str, Estimator] = {"ce": ce_estimator(), "plugin": plugin_estimator()}


def get_estimator(estimator: str | Estimator) -> Estimator:
    """The registered estimator of that name (or the estimator itself)."""
    if isinstance(estimator, Estimator):
        return estimator
    if estimator not in ESTIMATORS:
        raise ValueError(f"unknown estimator {estimator!r}; known: {sorted(ESTIMATORS)}")
    return ESTIMATORS[estimator]


def mutual_information(x, t, estimator: str | Estimator = "ce", seed: int = 0, tol: float = NEG_TOL) -> Estimate:
    """``I(X;T)`` in nats for a feature block ``x`` and a binary ``t``, clipped as :func:`clip_estimate` says."""
    x, t, _ = validate_inputs(x, t, None)
    est = get_estimator(estimator)
    return clip_estimate(est.mi(est.prepare(est.encode(x), seed), t, seed), tol)


def conditional_mutual_information(
    x, a, y, estimator: str | Estimator = "ce", seed: int = 0, tol: float = NEG_TOL
) -> Estimate:
    """``I(X;A|Y)`` in nats for a feature block and binary ``a``, ``y``, clipped as :func:`clip_estimate` says."""
    x, a, y = validate_inputs(x, a, y)
    est = get_estimator(estimator)
    return clip_estimate(est.cmi(est.prepare(est.encode(x), seed), a, y, seed), tol)
