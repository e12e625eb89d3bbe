r"""Reconstruction metrics of held-out entries (paper 17; the reference ``src/evaluate_gp_metrics.py`` reports RMSE and
NLPD): the predictive of an entry is a mixture of S Gaussians ``N(mean_s, var_s)`` (one per sample of U and x), with
equal weights.

* :func:`rmse`: root mean squared error of the mixture mean on the scored entries;
* :func:`nlpd`: mean negative log predictive density, ``-log(1/S sum_s N(y | mean_s, var_s))`` by logsumexp;
* :func:`coverage`: the share of scored entries inside the mixture's central 95% interval, whose ends are found by
  bisection on the mixture's CDF.

Entries are scored where ``score`` is True (the hidden entries); NaN in a scored truth is an error.
:func:`manifold_distance` is the mean distance of reconstructions to a dense sample of the true manifold, and
:func:`score` every metric of one run. :func:`qu_breadth` measures how broad a fitted q(U) is (the regime claim C9
needs).
"""

from __future__ import annotations

import numpy as np
from scipy.special import logsumexp
from scipy.stats import norm

__all__ = ["coverage", "manifold_distance", "mixture_moments", "nlpd", "qu_breadth", "rmse", "score"]


def _scored(truth: np.ndarray, score: np.ndarray) -> np.ndarray:
    if truth.shape != score.shape:
        raise ValueError(f"score mask {score.shape} does not match the truth {truth.shape}")
    values = truth[score]
    if np.isnan(values).any():
        raise ValueError("a scored entry has no true value (NaN)")
    if not len(values):
        raise ValueError("no entry to score")
    return values


def mixture_moments(means: np.ndarray, variances: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Mean and variance of the equal-weight mixture over the first axis (S, ...)."""
    mean = means.mean(0)
    return mean, (variances + means**2).mean(0) - mean**2


def rmse(means: np.ndarray, truth: np.ndarray, score: np.ndarray) -> float:
    values = _scored(truth, score)
    return float(np.sqrt(((means.mean(0)[score] - values) ** 2).mean()))


def nlpd(means: np.ndarray, variances: np.ndarray, truth: np.ndarray, score: np.ndarray) -> float:
    values = _scored(truth, score)
    m, v = means[:, score], variances[:, score]
    log = norm.logpdf(values[None], loc=m, scale=np.sqrt(v))
    return float(-(logsumexp(log, axis=0) - np.log(len(means))).mean())


def coverage(means: np.ndarray, variances: np.ndarray, truth: np.ndarray, score: np.ndarray,
             level: float = 0.95) -> float:  # fmt: skip
    values = _scored(truth, score)
    m, s = means[:, score], np.sqrt(variances[:, score])
    cdf = lambda x: norm.cdf((x[None] - m) / s).mean(0)  # noqa: E731
    tail = (1 - level) / 2
    ends = []
    for target in (tail, 1 - tail):
        low, high = (m - 10 * s).min(0), (m + 10 * s).max(0)
        for _ in range(60):  # bisection of the mixture CDF, elementwise
            mid = 0.5 * (low + high)
            below = cdf(mid) < target
            low, high = np.where(below, mid, low), np.where(below, high, mid)
        ends.append(0.5 * (low + high))
    return float(((values >= ends[0]) & (values <= ends[1])).mean())


def manifold_distance(points: np.ndarray, surface: np.ndarray) -> float:
    """Mean distance of each row of ``points`` to its nearest row of ``surface`` (a dense sample of the manifold)."""
    from scipy.spatial import cKDTree

    if points.shape[1] != surface.shape[1]:
        raise ValueError(f"points have {points.shape[1]} columns, the manifold {surface.shape[1]}")
    return float(cKDTree(surface).query(points)[0].mean())


def score(means: np.ndarray, variances: np.ndarray, data: dict, reconstruction: np.ndarray,
          surface: np.ndarray | None) -> dict:  # fmt: skip
    """The reconstruction metrics of one run on the hidden entries of its dataset (``data``: the arrays of
    :func:`.data.build_dataset`): RMSE, NLPD (with and without the noise in the predictive variance, as the
    reference's ``evaluate_gp_metrics.py`` leaves it out: ``noise`` is then subtracted by the caller), 95% coverage,
    the distance of the reconstructions to the true manifold (NaN without one), and the Spearman correlation of the
    predictive sd with the absolute error over the hidden entries (does the model know where it is wrong?)."""
    from scipy.stats import spearmanr

    hidden = ~data["mask"]
    truth = data["y_full"]
    _, variance = mixture_moments(means[:, hidden], variances[:, hidden])
    error = np.abs(means[:, hidden].mean(0) - truth[hidden])
    return {
        "rmse": rmse(means, truth, hidden),
        "nlpd": nlpd(means, variances, truth, hidden),
        "coverage": coverage(means, variances, truth, hidden),
        "manifold_distance": manifold_distance(reconstruction, surface) if surface is not None else float("nan"),
        "error_spearman": float(spearmanr(np.sqrt(variance), error).statistic),
        "hidden_entries": int(hidden.sum()),
        "observed_entries": int((~hidden).sum()),
    }


def qu_breadth(a: np.ndarray, chol_s: np.ndarray, noise: float) -> float:
    """How broad q(U) is where the data are: the mean over points n and outputs d of ``a_n^T S_d a_n / sigma^2``,
    the variance that q(U) adds to the predictive mean of f_d(x_n) relative to the noise variance ``sigma^2``, with
    ``a_n = K_MM^-1 k(Z, mu_n)`` (N, M) at the latent means and ``S_d = L_d L_d^T`` from ``chol_s`` (D, M, M).
    0 when q(U) is a point mass; 1 when q(U) adds as much variance as the noise."""
    if noise <= 0:
        raise ValueError(f"the noise variance must be positive, got {noise}")
    la = np.einsum("nm,dmk->ndk", a, chol_s)  # a_n^T L_d
    return float((la**2).sum(-1).mean() / noise)
