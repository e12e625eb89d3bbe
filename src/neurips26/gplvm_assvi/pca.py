r"""Probabilistic PCA (Tipping & Bishop 1999), paper 17's sanity baseline, with missing entries.

The maximum-likelihood PPCA of ``latent_dim`` components is fitted to the observed entries by iterative imputation:
missing entries start at their column means, then alternate PCA of the completed data and refilling the missing
entries with their conditional means under the fitted model, for ``iterations`` rounds. Its covariance
``C = W W^T + sigma^2 I`` (scikit-learn's ``PCA.get_covariance``) gives each point's Gaussian predictive of its
missing entries given its observed ones: mean ``mu_m + C_mo C_oo^-1 (y_o - mu_o)``, covariance
``C_mm - C_mo C_oo^-1 C_om``. Returned in the shape of the GPLVMs' predictive (one mixture component).
"""

from __future__ import annotations

import numpy as np

__all__ = ["fit_ppca", "ppca_predictive"]


def _conditional(mean: np.ndarray, cov: np.ndarray, y: np.ndarray, mask: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    means, variances = np.repeat(mean[None], len(y), 0), np.zeros(y.shape)
    for n in range(len(y)):
        o, m = mask[n], ~mask[n]
        if m.any():
            gain = np.linalg.solve(cov[np.ix_(o, o)], cov[np.ix_(o, m)]).T  # C_mo C_oo^-1
            means[n, m] = mean[m] + gain @ (y[n, o] - mean[o])
            variances[n, m] = np.diag(cov[np.ix_(m, m)] - gain @ cov[np.ix_(o, m)])
        means[n, o] = y[n, o]
    return means, variances


def fit_ppca(y: np.ndarray, mask: np.ndarray, latent_dim: int, iterations: int = 50):
    """(mean, covariance, loadings W, noise variance) of the PPCA fitted to the observed entries of ``y`` (NaN where
    ``mask`` is False)."""
    from sklearn.decomposition import PCA

    if not 1 <= latent_dim < y.shape[1]:
        raise ValueError(f"PPCA needs 1 <= latent_dim < {y.shape[1]} (the data dimension), got {latent_dim}")
    empty = np.flatnonzero(~mask.any(0))
    if len(empty):
        raise ValueError(f"columns {empty.tolist()} have no observed entry: PPCA cannot estimate them")
    filled = np.where(mask, y, np.nanmean(np.where(mask, y, np.nan), 0))
    for _ in range(iterations):
        pca = PCA(latent_dim).fit(filled)
        mean, cov = pca.mean_, pca.get_covariance()
        filled = np.where(mask, y, _conditional(mean, cov, np.where(mask, y, 0.0), mask)[0])
    loadings = pca.components_.T * np.sqrt(np.maximum(pca.explained_variance_ - pca.noise_variance_, 0))
    return mean, cov, loadings, float(pca.noise_variance_)


def _denoised(y, mask, mean, loadings, noise) -> np.ndarray:
    """``W E[x | y_o] + mu`` of every point: its reconstruction on the principal subspace."""
    out = np.empty(y.shape)
    for n in range(len(y)):
        o = mask[n]
        w = loadings[o]
        post = np.linalg.solve(w.T @ w + noise * np.eye(w.shape[1]), w.T @ (y[n, o] - mean[o]))
        out[n] = loadings @ post + mean
    return out


def ppca_predictive(y: np.ndarray, mask: np.ndarray, latent_dim: int, iterations: int = 50):
    """Means and variances (1, N, D) of every entry (observed entries as given, variance 0; missing ones by the
    PPCA's conditional Gaussian), and the (N, D) reconstruction of every point on the principal subspace."""
    mean, cov, loadings, noise = fit_ppca(y, mask, latent_dim, iterations)
    y0 = np.where(mask, y, 0.0)
    means, variances = _conditional(mean, cov, y0, mask)
    return means[None], variances[None], _denoised(y0, mask, mean, loadings, noise)
