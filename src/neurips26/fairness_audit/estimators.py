r"""Mutual-information estimators in nats for a feature block ``x (n, k)`` (``k`` may be 0), a binary protected
attribute ``a`` and a binary label ``y`` (notes 06, 2.2 "Estimation").

Two estimators, in the registry :data:`ESTIMATORS`:

* ``"ce"`` (the default, cross-entropy): ``I(X;T) = H(T) - CE(T|X)`` with ``CE`` the 5-fold cross-fitted
  log-loss (folds stratified on ``T``, shuffled with ``seed``) of an L2 logistic regression on standardized
  additive spline features: each continuous column becomes a cubic B-spline basis (``SplineTransformer``, knots at
  the unique 0/50/100 % quantiles, no bias column: 4 functions), each column with at most 8 distinct values
  becomes indicators of its values (quantile knots collapse on ties), a constant column contributes nothing.
  ``H(T)`` is the plug-in entropy. The regression minimises sklearn ``LogisticRegression``'s objective (``C = 1``,
  intercept not penalised), solved for all folds at once by a batched damped Newton method (:func:`fit_logistic`,
  checked against sklearn in the tests): a handful of matrix products instead of one ``lbfgs`` run per fold.
  ``I(X;A|Y) = H(A|Y) - CE(A|X,Y)`` is fitted **per y stratum**: one logistic model of A on X inside ``Y = 0``
  and one inside ``Y = 1`` (folds stratified on the four (A, Y) cells), so X may relate to A differently in each
  stratum; that is the conditional itself, where ``y`` as an additive input would force one X-A relation on both.
* ``"plugin"``: each column is cut at its 1/8 ... 7/8 quantiles (8 bins, fewer on ties); columns whose bin codes
  are identical are merged ("shared bins": an exact copy of a feature changes no plug-in value); up to two
  remaining columns are coded jointly by their bin pairs (at most 64 cells), more than two by k-means (32
  clusters, k-means++ with ``n_init=1``, ``random_state=seed``) on the bin codes scaled to [0, 1], run on the
  distinct bin cells weighted by their counts (the same objective as on the rows, cheaper), or the exact cells
  when there are at most 32. ``I`` is the discrete MI from Miller-Madow corrected entropies, ``H_MM = H_plugin +
  (m - 1) / (2 n)`` with ``m`` the occupied cells; ``I(X;A|Y) = H(X,Y) + H(A,Y) - H(X,A,Y) - H(Y)``.

Assumed and where it deviates:

* The spline basis and the standardization are fitted on all rows of ``x``, not per training fold: they are
  unsupervised (no label enters), so the held-out log-loss is still out-of-sample for the label. The basis is
  additive: interactions between columns are not modelled (exact for the linear-Gaussian SCM, where
  ``logit P(A|X)`` is linear in X). The notes' paper-scale gradient boosting is not implemented.
* Three knots, not more: under independence the held-out log-loss exceeds ``H(T)`` by about ``p / (2 n_train)``
  (``p`` features), and the per-stratum conditional doubles that; with 4 functions per column, 6 pure-noise
  columns at n = 3000 give ``I(X;A|Y)`` about -0.009 nats (5 knots: -0.016), with no loss on a Gaussian check.
* A training fold with a single class (a rare cell inside a y stratum) predicts its smoothed base rate
  ``(sum + 1/2) / (n + 1)`` instead of fitting.
* ``k = 0`` gives exactly 0 (no features, no information): the cross-fitted intercept-only model would give a
  small negative number instead.
* Negative estimates (notes 2.9): :func:`clip_estimate` turns a raw value into an :class:`Estimate`. A raw value in
  ``[-tol, 0)`` is clipped to 0 and flagged ``clipped``; a raw value below ``-tol`` is **kept** and flagged
  ``negative``, so the caller reports it (no silent clip). ``tol`` defaults to :data:`NEG_TOL` = 0.01 nats.
* :func:`bayes_scores` returns the cross-fitted ``P(Y=1|X)`` of the same spline logistic model, replaced by the
  constant base rate unless the model beats the cross-fitted base rate out of sample: the mean per-row held-out
  log-loss gain must exceed ``GATE_Z = 2`` standard errors (a one-sided paired test; the SE ignores the
  dependence of rows fitted by one model). The MI of a score with A does not depend on the scale of the score,
  so a fit to pure noise (a near-constant but non-constant score) would otherwise carry all of ``I(X;A)`` into
  the Bayes-score measures. On 200 pure-noise draws (n = 3000) a plain "gain > 0" rule let 4-9 % through and
  this one none; a gain of 0.005 nats passes about 70 % of the time, 0.01 nats always.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial

import numpy as np
from sklearn.cluster import KMeans
from sklearn.preprocessing import SplineTransformer

from .data import binary_int8

__all__ = [
    "ESTIMATORS",
    "GATE_Z",
    "NEG_TOL",
    "Estimate",
    "Estimator",
    "bayes_scores",
    "bayes_scores_from_features",
    "ce_conditional_mutual_information",
    "ce_estimator",
    "ce_mutual_information",
    "clip_estimate",
    "conditional_entropy",
    "conditional_mutual_information",
    "cross_fitted_proba",
    "entropy",
    "fit_logistic",
    "get_estimator",
    "joint_code",
    "log_loss",
    "miller_madow_entropy",
    "mutual_information",
    "plugin_conditional_mutual_information",
    "plugin_estimator",
    "plugin_mutual_information",
    "quantile_bins",
    "spline_features",
    "stratified_folds",
    "validate_inputs",
]

NEG_TOL = 0.01  # nats: raw estimates in [-NEG_TOL, 0) are clipped to 0, lower ones are reported
N_FOLDS = 5
C_REG = 1.0
N_KNOTS = 3  # knots at the 0/50/100 % quantiles: 4 basis functions per column
MAX_DISCRETE = 8  # a column with at most this many distinct values is coded by indicators, not splines
N_BINS = 8
N_CLUSTERS = 32
EPS = 1e-12
GATE_Z = 2.0  # the Bayes score is used when its held-out log-loss gain over the base rate exceeds 2 SE


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


# ----------------------------------------------------------------------------------------------- inputs


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


# ----------------------------------------------------------------------------------------------- entropies


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


def _relabel(code: np.ndarray) -> tuple[np.ndarray, int]:
    """Labels 0..m-1 of the distinct values of an integer code, and m (a bincount map when the values are small
    non-negative integers, as codes are; np.unique otherwise)."""
    code = np.asarray(code).ravel()
    if code.dtype.kind in "iub" and len(code) and code.min() >= 0 and code.max() < 4 * len(code) + 64:
        present = np.bincount(code) > 0
        return (np.cumsum(present) - 1)[code], int(present.sum())
    values, inverse = np.unique(code, return_inverse=True)
    return inverse.ravel(), len(values)


def _joint_counts(*codes: np.ndarray) -> np.ndarray:
    """Counts of the joint cells of integer codes (mixed-radix combination, then bincount)."""
    joint = np.zeros(len(codes[0]), dtype=np.int64)
    for code in codes:
        labels, m = _relabel(code)
        joint = joint * m + labels
    return np.bincount(_relabel(joint)[0])


def _mm_entropy_of(*codes: np.ndarray) -> float:
    return miller_madow_entropy(_joint_counts(*codes))


# ----------------------------------------------------------------------------------------------- CE estimator


def spline_features(x: np.ndarray, n_knots: int = N_KNOTS, degree: int = 3) -> np.ndarray:
    """Standardized additive features of ``x (n, k)``: a cubic B-spline basis on the unique quantile knots of
    each continuous column, indicators (first value dropped) for a column with at most ``MAX_DISCRETE`` distinct
    values, nothing for a constant column. ``(n, 0)`` when nothing is left."""
    x = np.asarray(x, dtype=np.float64)
    parts = []
    for col in x.T:
        values = np.unique(col)
        if len(values) == 1:
            continue
        if len(values) <= MAX_DISCRETE:
            parts.append((col[:, None] == values[None, 1:]).astype(np.float64))
            continue
        knots = np.unique(np.quantile(col, np.linspace(0.0, 1.0, n_knots)))
        spline = SplineTransformer(knots=knots[:, None], degree=degree, include_bias=False)
        parts.append(spline.fit_transform(col[:, None]))
    if not parts:
        return np.empty((len(x), 0))
    features = np.concatenate(parts, axis=1)
    std = features.std(axis=0)
    return (features - features.mean(axis=0)) / np.where(std > 0, std, 1.0)


def stratified_folds(strata: np.ndarray, n_folds: int = N_FOLDS, seed: int = 0) -> np.ndarray:
    """Fold id (0..n_folds-1) of each row: inside each stratum the rows are shuffled (``seed``) and dealt to the
    folds in turn, so every fold holds ``floor`` or ``ceil`` of ``1/n_folds`` of each stratum."""
    if n_folds < 2:
        raise ValueError(f"n_folds must be >= 2, got {n_folds}")
    labels, _ = _relabel(np.asarray(strata, dtype=np.int64))
    order = np.lexsort((np.random.default_rng(seed).random(len(labels)), labels))  # by stratum, shuffled inside
    starts = np.searchsorted(labels[order], labels[order])  # first position of each row's stratum in `order`
    folds = np.empty(len(labels), dtype=np.int64)
    folds[order] = (np.arange(len(labels)) - starts) % n_folds
    return folds


def fit_logistic(
    features: np.ndarray, t: np.ndarray, train: np.ndarray, C: float = C_REG, max_iter: int = 50, tol: float = 1e-6
) -> np.ndarray:
    """Weights ``(p + 1, m)`` (intercept last) of ``m`` L2 logistic regressions fitted at once by damped Newton.

    Model ``j`` is fitted on the rows where ``train[:, j]`` is True and minimises sklearn's ``LogisticRegression``
    objective ``C * sum_i log-loss_i + ||w||^2 / 2`` (intercept not penalised). Every model must see both classes
    among its training rows (the intercept would diverge otherwise); ValueError names the model that does not."""
    n, p = features.shape
    mask = np.asarray(train, dtype=np.float64)
    t = np.asarray(t, dtype=np.float64)
    pos = mask.T @ t
    one_class = (pos == 0) | (pos == mask.sum(axis=0))
    if one_class.any():
        raise ValueError(f"logistic model(s) {np.flatnonzero(one_class).tolist()} see a single class")
    design = np.concatenate([features, np.ones((n, 1))], axis=1)
    design_t = design.T.copy()
    penalty = np.r_[np.ones(p), 0.0]
    weights = np.zeros((p + 1, mask.shape[1]))
    weights[-1] = np.log(pos / (mask.sum(axis=0) - pos))  # start at the base rate's log-odds

    def objective(w, z):
        return C * (mask * (np.logaddexp(0.0, z) - t[:, None] * z)).sum(axis=0) + 0.5 * (penalty @ w**2)

    z = design @ weights
    current = objective(weights, z)
    for _ in range(max_iter):
        proba = 1.0 / (1.0 + np.exp(-z))
        grad = C * design.T @ ((proba - t[:, None]) * mask) + penalty[:, None] * weights
        curvature = C * proba * (1.0 - proba) * mask
        hess = np.stack([(design_t * curvature[:, j]) @ design for j in range(mask.shape[1])])
        hess += np.diag(penalty)[None]
        step = np.linalg.solve(hess, grad.T[:, :, None])[:, :, 0].T
        scale = np.ones(mask.shape[1])
        z_trial = design @ (weights - step)
        trial = objective(weights - step, z_trial)
        for _ in range(30):  # halve the step of each model whose objective did not decrease
            worse = trial > current + 1e-12 * np.abs(current)
            if not worse.any():
                break
            scale[worse] /= 2.0
            z_trial = design @ (weights - step * scale)
            trial = objective(weights - step * scale, z_trial)
        weights, z, current = weights - step * scale, z_trial, trial
        if np.abs(step * scale).max() < tol:
            break
    return weights


def cross_fitted_proba(features: np.ndarray, t: np.ndarray, folds: np.ndarray, C: float = C_REG) -> np.ndarray:
    """Held-out ``P(T=1|features)`` of each row from the L2 logistic model fitted on the other folds (all folds
    fitted at once by :func:`fit_logistic`). A fold whose training rows hold a single class, or no features,
    predicts the smoothed training base rate ``(sum + 1/2) / (n + 1)``."""
    fold_ids = np.unique(folds)
    train = folds[:, None] != fold_ids[None, :]
    counts = train.sum(axis=0)
    pos = train.T.astype(np.float64) @ t
    rate = (pos + 0.5) / (counts + 1.0)
    fitted = (pos > 0) & (pos < counts) & (features.shape[1] > 0)
    z = np.zeros((len(t), len(fold_ids)))
    if fitted.any():
        z[:, fitted] = np.concatenate([features, np.ones((len(t), 1))], axis=1) @ fit_logistic(
            features, t, train[:, fitted], C
        )
    proba_by_fold = np.where(fitted[None, :], 1.0 / (1.0 + np.exp(-z)), rate[None, :])
    return proba_by_fold[np.arange(len(t)), np.searchsorted(fold_ids, folds)]


def _per_row_log_loss(t: np.ndarray, proba: np.ndarray) -> np.ndarray:
    p = np.clip(proba, EPS, 1.0 - EPS)
    return -np.where(t == 1, np.log(p), np.log1p(-p))


def log_loss(t: np.ndarray, proba: np.ndarray) -> float:
    """Mean binary log-loss (nats), probabilities clipped to ``[1e-12, 1 - 1e-12]``."""
    return float(_per_row_log_loss(t, proba).mean())


def ce_mutual_information(
    features: np.ndarray, t: np.ndarray, seed: int = 0, n_folds: int = N_FOLDS, C: float = C_REG
) -> float:
    """Raw ``H(T) - CE(T|X)`` from prepared features (see :func:`spline_features`); 0 for no features."""
    if features.shape[1] == 0:
        return 0.0
    proba = cross_fitted_proba(features, t, stratified_folds(t, n_folds, seed), C)
    return entropy(np.bincount(t, minlength=2)) - log_loss(t, proba)


def ce_conditional_mutual_information(
    features: np.ndarray, a: np.ndarray, y: np.ndarray, seed: int = 0, n_folds: int = N_FOLDS, C: float = C_REG
) -> float:
    """Raw ``H(A|Y) - CE(A|X,Y)``, the logistic model of A on X fitted inside each y stratum."""
    if features.shape[1] == 0:
        return 0.0
    folds = stratified_folds(2 * y + a, n_folds, seed)
    proba = np.empty(len(a))
    for stratum in (0, 1):
        rows = y == stratum
        proba[rows] = cross_fitted_proba(features[rows], a[rows], folds[rows], C)
    return conditional_entropy(a, y) - log_loss(a, proba)


def bayes_scores_from_features(
    features: np.ndarray, y: np.ndarray, seed: int = 0, n_folds: int = N_FOLDS, C: float = C_REG, gate_z: float = GATE_Z
) -> np.ndarray:
    """Cross-fitted ``P(Y=1|X)`` from prepared features, or the constant base rate unless the model beats the
    cross-fitted base rate out of sample: mean per-row held-out log-loss gain > ``gate_z`` standard errors."""
    base = np.full(len(y), y.mean())
    if features.shape[1] == 0:
        return base
    folds = stratified_folds(y, n_folds, seed)
    proba = cross_fitted_proba(features, y, folds, C)
    gain = _per_row_log_loss(y, cross_fitted_proba(features[:, :0], y, folds, C)) - _per_row_log_loss(y, proba)
    spread = gain.std()
    if spread == 0 or gain.mean() <= gate_z * spread / np.sqrt(len(gain)):
        return base
    return proba


def bayes_scores(x, y, seed: int = 0, n_folds: int = N_FOLDS, C: float = C_REG, gate_z: float = GATE_Z) -> np.ndarray:
    """Cross-fitted Bayes scores ``s(X) = P(Y=1|X)`` of a feature block (see the module docstring)."""
    x, _, y = validate_inputs(x, None, y, n_folds)
    return bayes_scores_from_features(spline_features(x), y, seed, n_folds, C, gate_z)


# ----------------------------------------------------------------------------------------------- plug-in


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
    return _mm_entropy_of(code) + _mm_entropy_of(t) - _mm_entropy_of(code, t)


def plugin_conditional_mutual_information(code: np.ndarray, a: np.ndarray, y: np.ndarray) -> float:
    """Raw Miller-Madow ``I(X;A|Y) = H(X,Y) + H(A,Y) - H(X,A,Y) - H(Y)`` (exactly 0 for a constant code)."""
    if code.min() == code.max():
        return 0.0
    return _mm_entropy_of(code, y) + _mm_entropy_of(a, y) - _mm_entropy_of(code, a, y) - _mm_entropy_of(y)


# ----------------------------------------------------------------------------------------------- registry


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
