"""How well a zeroth-order gradient estimate points along the true (backpropagated) gradient: cosine alignment per
layer and overall, the bias and variance of an estimator from many draws on a fixed batch, and the dimension
scaling of alignment (the slope of log cosine against log parameter count; for isotropic weight perturbation and
SPSA with one probe the expected cosine falls like P^(-1/2): Spall 1992, Malladi et al. 2023 (MeZO))."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np
from scipy import stats

OVERALL = "overall"


def as_array(values) -> np.ndarray:
    """A float64 numpy copy of a numpy array, a nested sequence or a torch tensor (detached, moved to the CPU)."""
    if hasattr(values, "detach"):
        values = values.detach().cpu().numpy()
    return np.asarray(values, dtype=np.float64)


def cosine(estimate, true) -> np.ndarray | float:
    """Cosine between estimate (..., P) and true (P,) along the last axis, broadcast over leading axes (draws).

    A zero estimate has cosine 0 (it points nowhere, so it is not aligned); a zero true gradient is a ValueError,
    since the alignment is then undefined.
    """
    estimate, true = as_array(estimate), as_array(true)
    if true.ndim != 1 or estimate.shape[-1:] != true.shape:
        raise ValueError(f"estimate of shape {estimate.shape} does not end in the true gradient's shape {true.shape}")
    true_norm = np.linalg.norm(true)
    if true_norm == 0:
        raise ValueError("the true gradient is zero: cosine alignment is undefined")
    estimate_norm = np.linalg.norm(estimate, axis=-1)
    out = (estimate @ true) / (np.where(estimate_norm > 0, estimate_norm, 1.0) * true_norm)
    out = np.clip(out, -1.0, 1.0)  # an estimate parallel to the gradient can round to 1 + 1e-16
    return float(out) if out.ndim == 0 else out


def _flat_pairs(estimate: Mapping, true: Mapping) -> tuple[dict[str, np.ndarray], dict[str, np.ndarray], tuple]:
    """Each layer's estimate flattened to (..., P_layer) and its true gradient to (P_layer,), with the common
    leading (draw) shape; ValueError naming the layer whose keys or shapes disagree."""
    if set(estimate) != set(true):
        raise ValueError(
            f"layers differ: estimate has {sorted(set(estimate) - set(true))} extra and "
            f"{sorted(set(true) - set(estimate))} missing"
        )
    if OVERALL in true:
        raise ValueError(f"{OVERALL!r} is reserved for the whole-network cosine; rename that layer")
    flat_est, flat_true, lead = {}, {}, None
    for name, grad in true.items():
        grad, est = as_array(grad), as_array(estimate[name])
        if est.ndim < grad.ndim or est.shape[est.ndim - grad.ndim :] != grad.shape:
            raise ValueError(f"layer {name!r}: estimate of shape {est.shape} does not end in {grad.shape}")
        this_lead = est.shape[: est.ndim - grad.ndim]
        if lead is not None and this_lead != lead:
            raise ValueError(f"layer {name!r}: leading (draw) shape {this_lead} differs from the others' {lead}")
        lead = this_lead
        flat_est[name], flat_true[name] = est.reshape(*this_lead, grad.size), grad.reshape(grad.size)
    return flat_est, flat_true, lead or ()


def layer_alignment(estimate: Mapping, true: Mapping) -> dict[str, np.ndarray | float]:
    """Cosine between estimate and true gradient for every layer (parameter name) and for all layers together
    (key "overall": the cosine of the concatenated vectors, not a mean of the layers').

    `true` maps names to gradients; `estimate` maps the same names to arrays of the same shapes, optionally with
    leading draw axes (D, *shape) shared by all layers, in which case every cosine is an array over the draws.
    Numpy arrays and torch tensors are both accepted.
    """
    flat_est, flat_true, lead = _flat_pairs(estimate, true)
    if not flat_true:
        raise ValueError("no layers given")
    out: dict[str, np.ndarray | float] = {}
    for name in flat_true:
        if np.linalg.norm(flat_true[name]) == 0:
            raise ValueError(f"layer {name!r}: the true gradient is zero, its cosine alignment is undefined")
        out[name] = cosine(flat_est[name], flat_true[name])
    whole_est = np.concatenate([flat_est[n] for n in flat_true], axis=-1)
    out[OVERALL] = cosine(whole_est, np.concatenate(list(flat_true.values())))
    return out


@dataclass(frozen=True)
class BiasVariance:
    """Bias and variance of a gradient estimator from D draws on a fixed batch, relative to ||true||.

    bias = ||mean - true|| / ||true||; variance = sum_d ||g_d - mean||^2 / ((D - ddof) ||true||^2) (the trace of the
    estimate's covariance); bias_floor = sqrt(variance / D), the bias an unbiased estimator shows from D draws
    by chance alone (the standard error of the mean, relative); bias_sq_debiased = bias^2 - variance / D, an
    unbiased estimate of the squared relative bias (may be negative); relative_mse = mean ||g_d - true||^2 /
    ||true||^2; mean_cosine = the draws' mean cosine with the true gradient.
    """

    bias: float
    variance: float
    bias_floor: float
    bias_sq_debiased: float
    relative_mse: float
    mean_cosine: float
    n_draws: int


def bias_variance(draws, true, ddof: int = 1) -> BiasVariance:
    """Relative bias and variance (`BiasVariance`) of draws (D, P) of an estimator of the gradient `true` (P,)."""
    draws, true = as_array(draws), as_array(true)
    if draws.ndim != 2 or true.shape != draws.shape[1:]:
        raise ValueError(f"draws must be (D, P) and true (P,), got {draws.shape} and {true.shape}")
    if ddof not in (0, 1):
        raise ValueError(f"ddof={ddof} must be 0 (mean squared deviation) or 1 (unbiased)")
    n = len(draws)
    if n < 1 + ddof:
        raise ValueError(f"{n} draws are too few for ddof={ddof}")
    if not np.isfinite(draws).all():
        raise ValueError("draws contain non-finite values")
    scale = float(true @ true)
    if scale == 0:
        raise ValueError("the true gradient is zero: relative bias and variance are undefined")
    mean = draws.mean(axis=0)
    variance = float(((draws - mean) ** 2).sum() / (n - ddof) / scale)
    bias = float(np.linalg.norm(mean - true) / np.sqrt(scale))
    return BiasVariance(
        bias=bias,
        variance=variance,
        bias_floor=float(np.sqrt(variance / n)),
        bias_sq_debiased=bias**2 - variance / n,
        relative_mse=float(((draws - true) ** 2).sum(axis=1).mean() / scale),
        mean_cosine=float(np.mean(cosine(draws, true))),
        n_draws=n,
    )


def coordinate_z_scores(draws, true) -> np.ndarray:
    """Per-coordinate z-scores (mean_d g_dp - true_p) / (s_p / sqrt(D)) of draws (D, P) against the value `true`
    (P,) an unbiased estimator would have on average; s_p is the sample standard deviation (ddof 1). Coordinates
    with zero spread get z = 0 when the mean equals the target and +-inf otherwise."""
    draws, true = as_array(draws), as_array(true)
    if draws.ndim != 2 or true.shape != draws.shape[1:] or len(draws) < 2:
        raise ValueError(f"draws must be (D >= 2, P) and true (P,), got {draws.shape} and {true.shape}")
    error = draws.mean(axis=0) - true
    se = draws.std(axis=0, ddof=1) / np.sqrt(len(draws))
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(se > 0, error / np.where(se > 0, se, 1.0), np.where(error == 0, 0.0, np.sign(error) * np.inf))


@dataclass(frozen=True)
class LogLogFit:
    """Least-squares line log y = intercept + slope log x (natural logs), the slope's standard error, r and n."""

    slope: float
    stderr: float
    intercept: float
    rvalue: float
    n: int


def loglog_fit(x, y, x_name: str = "x", y_name: str = "y") -> LogLogFit:
    """Least-squares slope of log y against log x (scipy.stats.linregress), with its standard error.

    Needs at least three points with two distinct x (for a standard error) and x, y > 0 and finite; ValueError
    naming `x_name` / `y_name` otherwise.
    """
    x, y = as_array(x).ravel(), as_array(y).ravel()
    if x.shape != y.shape:
        raise ValueError(f"{x_name} has {x.size} values but {y_name} has {y.size}")
    for name, values in ((x_name, x), (y_name, y)):
        bad = np.flatnonzero(~np.isfinite(values) | (values <= 0))
        if bad.size:
            raise ValueError(f"{name} must be positive and finite for a log-log fit; item {bad[0]} is {values[bad[0]]}")
    if x.size < 3 or np.unique(x).size < 2:
        raise ValueError(f"a slope with a standard error needs >= 3 points and >= 2 distinct {x_name}, got {x.size}")
    fit = stats.linregress(np.log(x), np.log(y))
    return LogLogFit(float(fit.slope), float(fit.stderr), float(fit.intercept), float(fit.rvalue), int(x.size))


def dimension_scaling(n_params, cosines) -> LogLogFit:
    """Slope of log cosine alignment against log parameter count (with its standard error): about -1/2 for
    isotropic single-probe estimators, flatter where the probe distribution follows the gradient's geometry."""
    return loglog_fit(n_params, cosines, x_name="n_params", y_name="cosines")
