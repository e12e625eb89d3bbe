"""Sample-quality metrics: Frechet distance between Gaussian fits of features (the formula of FID)."""

from __future__ import annotations

import warnings

import numpy as np
from scipy import linalg

SQRTM_EPS = 1e-6
SQRTM_TOL = 1e-3


def _features(x: np.ndarray, name: str) -> np.ndarray:
    x = np.asarray(x, dtype=np.float64)
    if x.ndim != 2:
        raise ValueError(f"{name}: features must be a 2-D array (samples, dim), got shape {x.shape}")
    if not np.all(np.isfinite(x)):
        raise ValueError(f"{name}: features contain NaN or infinite values")
    return x


def gaussian_stats(features: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Mean (D,) and unbiased covariance (D, D) of features (N, D), float64."""
    features = _features(features, "features")
    return features.mean(axis=0), np.atleast_2d(np.cov(features, rowvar=False))


def _sqrtm(product: np.ndarray) -> np.ndarray | None:
    """sqrtm of a matrix product, or None where it is not finite or does not square back to the product."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        root = linalg.sqrtm(product)
    if not np.all(np.isfinite(root)):
        return None
    if np.iscomplexobj(root) and np.abs(np.diagonal(root).imag).max() > SQRTM_TOL:
        return None
    scale = max(np.abs(product).max(), 1.0)
    if np.abs(root @ root - product).max() > SQRTM_TOL * scale:
        return None
    return root


def frechet_from_stats(mu1: np.ndarray, sigma1: np.ndarray, mu2: np.ndarray, sigma2: np.ndarray) -> float:
    """||mu1 - mu2||^2 + tr(S1 + S2 - 2 (S1 S2)^{1/2}), the Frechet distance between two Gaussians.

    As pytorch-fid: if the square root of S1 S2 fails (singular or badly conditioned product), eps I is added
    to both covariances; small imaginary parts from numerical error are dropped (real part).
    """
    mu1, mu2 = np.atleast_1d(np.asarray(mu1, np.float64)), np.atleast_1d(np.asarray(mu2, np.float64))
    sigma1, sigma2 = np.atleast_2d(np.asarray(sigma1, np.float64)), np.atleast_2d(np.asarray(sigma2, np.float64))
    if mu1.shape != mu2.shape or sigma1.shape != sigma2.shape or sigma1.shape != (len(mu1), len(mu1)):
        raise ValueError(
            f"mismatched Gaussian statistics: means {mu1.shape} and {mu2.shape}, "
            f"covariances {sigma1.shape} and {sigma2.shape}"
        )
    root = _sqrtm(sigma1 @ sigma2)
    if root is None:
        offset = np.eye(len(mu1)) * SQRTM_EPS
        root = _sqrtm((sigma1 + offset) @ (sigma2 + offset))
        if root is None:
            raise ValueError("Frechet distance: no usable square root of S1 S2, even with eps I added")
    diff = mu1 - mu2
    return float(diff @ diff + np.trace(sigma1) + np.trace(sigma2) - 2.0 * np.trace(root.real))


def frechet_distance(a: np.ndarray, b: np.ndarray) -> float:
    """Frechet distance between the Gaussian fits of two feature sets (N_a, D) and (N_b, D)."""
    a, b = _features(a, "first set"), _features(b, "second set")
    if a.shape[1] != b.shape[1]:
        raise ValueError(f"feature dimensions differ: {a.shape[1]} and {b.shape[1]}")
    dim = a.shape[1]
    for name, x in (("first set", a), ("second set", b)):
        if len(x) < 2 * dim:
            raise ValueError(
                f"{name}: FD with {len(x)} samples for a {dim}-dim feature needs at least "
                f"{2 * dim} samples (2D): the covariance would be singular"
            )
    return frechet_from_stats(*gaussian_stats(a), *gaussian_stats(b))
