"""The optimal linear (Wiener / Gaussian) denoiser from the data's mean and covariance (a baseline of ours).

For x_t = a x_0 + b eta with x_0 ~ N(mu, Sigma) on flattened images, the posterior mean is

    x0_hat = mu + a Sigma (a^2 Sigma + b^2 I)^{-1} (x_t - a mu),

which is also the best linear (affine) denoiser in mean squared error for any data with that mean
and covariance (Lukoianov et al.'s linear baseline). eps_hat = (x_t - a x0_hat) / b as for BIRD.
"""

from __future__ import annotations

import numbers
from dataclasses import dataclass

import numpy as np
from scipy import linalg


@dataclass(frozen=True)
class LinearDenoise:
    """x0_hat and eps_hat, both shaped like x_t, float64."""

    x0_hat: np.ndarray
    eps_hat: np.ndarray


def mean_covariance(images) -> tuple[np.ndarray, np.ndarray]:
    """Mean (D,) and covariance (D, D), normalised by N - 1, of images (N, ...) flattened to D."""
    x = np.asarray(images, dtype=np.float64)
    if x.ndim < 2 or x.shape[0] < 2:
        raise ValueError(f"need at least 2 images (N, ...) for a covariance, got shape {x.shape}")
    if not np.isfinite(x).all():
        raise ValueError(f"images contain {int((~np.isfinite(x)).sum())} NaN or infinite values")
    flat = x.reshape(x.shape[0], -1)
    mu = flat.mean(axis=0)
    centred = flat - mu
    return mu, centred.T @ centred / (flat.shape[0] - 1)


def wiener_denoiser(x_t, mean, cov, a, b) -> LinearDenoise:
    """The Gaussian posterior mean of x_0 given x_t (module docstring).

    x_t: (B, ...) noisy images, each flattening to D values. mean: D values (any shape of that
    size). cov: (D, D), symmetric positive semi-definite. a, b: the forward scales, b > 0, so that
    a^2 Sigma + b^2 I is positive definite and the solve uses a Cholesky factorisation.
    """
    x = np.asarray(x_t, dtype=np.float64)
    if x.ndim < 2 or x.shape[0] == 0:
        raise ValueError(f"x_t must be a non-empty batch (B, ...), got shape {x.shape}")
    if not np.isfinite(x).all():
        raise ValueError(f"x_t contains {int((~np.isfinite(x)).sum())} NaN or infinite values")
    n_batch = x.shape[0]
    flat = x.reshape(n_batch, -1)
    dim = flat.shape[1]
    mu = np.asarray(mean, dtype=np.float64).reshape(-1)
    if mu.shape != (dim,):
        raise ValueError(f"mean has {mu.size} values, expected D={dim} (one per value of an image)")
    sigma = np.asarray(cov, dtype=np.float64)
    if sigma.shape != (dim, dim):
        raise ValueError(f"cov must have shape ({dim}, {dim}), got {sigma.shape}")
    if not (np.isfinite(mu).all() and np.isfinite(sigma).all()):
        raise ValueError("mean and cov must be finite")
    scale = max(1.0, float(np.abs(sigma).max()))
    if not np.allclose(sigma, sigma.T, rtol=0.0, atol=1e-10 * scale):
        raise ValueError("cov must be symmetric")
    for value, name in ((a, "a"), (b, "b")):
        if isinstance(value, bool) or not isinstance(value, numbers.Real) or not np.isfinite(value):
            raise ValueError(f"{name} must be a finite real number, got {value!r}")
    a, b = float(a), float(b)
    if b <= 0:
        raise ValueError(f"b must be > 0 (the noise scale of x_t), got b={b}")
    system = a * a * sigma + b * b * np.eye(dim)
    try:
        solved = linalg.solve(system, (flat - a * mu).T, assume_a="pos")  # (D, B)
    except linalg.LinAlgError as err:
        raise ValueError("a^2 cov + b^2 I is not positive definite: cov must be positive semi-definite") from err
    x0_flat = mu + a * (sigma @ solved).T
    x0_hat = x0_flat.reshape(x.shape)
    return LinearDenoise(x0_hat=x0_hat, eps_hat=(x - a * x0_hat) / b)
