r"""Probabilistic PCA (Tipping & Bishop 1999), paper 17's sanity baseline, with missing entries.

The maximum-likelihood PPCA of ``latent_dim`` components is fitted to the observed entries by iterative imputation:
missing entries start at their column means, then alternate PCA of the completed data and refilling the missing
entries with their conditional means under the fitted model, for ``iterations`` rounds. Its covariance
``C = W W^T + sigma^2 I`` (scikit-learn's ``PCA.get_covariance``) gives each point's Gaussian predictive of its
missing entries given its observed ones: mean ``mu_m + C_mo C_oo^-1 (y_o - mu_o)``, covariance
``C_mm - C_mo C_oo^-1 C_om``. Returned in the shape of the GPLVMs' predictive (one mixture component).

Components: as many as the GPLVMs' latent dimensions, capped at ``D - 1`` (:func:`ppca_components`). In Tipping &
Bishop's maximum-likelihood solution the noise variance is the mean of the ``D - q`` discarded eigenvalues of the
sample covariance (their eq. 8), so with ``q = D`` there is none: the model collapses to the sample covariance with
zero noise, a full-rank Gaussian that is no longer a latent-variable model, whose "reconstruction on the principal
subspace" is the observed point itself and whose posterior over the latents is singular wherever fewer than ``q``
entries are observed. The reference (``maxtretiakov/gp_lvm_ssvi``) has no PPCA baseline; it uses ``Q = D = 12`` on
oil flow for the GPLVMs (whose ARD kernel can switch latent dimensions off), and PCA only to initialise their
latents. So at the paper's oil setting (``latent_dim`` 12, 12 columns) the baseline is the PPCA of 11 components,
the largest with a positive maximum-likelihood noise variance; a floor on ``sigma^2`` was not chosen, because it
would be a free parameter of ours with no value in the paper or the reference.
"""

from __future__ import annotations

import numpy as np

__all__ = ["fit_ppca", "ppca_components", "ppca_predictive"]


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


def ppca_components(latent_dim: int, dim: int) -> int:
    """The PPCA's number of components for the GPLVMs' ``latent_dim`` on ``dim`` columns: the same, capped at
    ``dim - 1`` (the largest with a positive maximum-likelihood noise variance; see the module docstring)."""
    if latent_dim < 1 or dim < 2:
        raise ValueError(f"PPCA needs latent_dim >= 1 and two columns or more: latent_dim {latent_dim}, {dim} columns")
    return min(latent_dim, dim - 1)


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
    PPCA's conditional Gaussian), and the (N, D) reconstruction of every point on the principal subspace, by the PPCA
    of :func:`ppca_components` for the GPLVMs' ``latent_dim``."""
    mean, cov, loadings, noise = fit_ppca(y, mask, ppca_components(latent_dim, y.shape[1]), iterations)
    y0 = np.where(mask, y, 0.0)
    means, variances = _conditional(mean, cov, y0, mask)
    return means[None], variances[None], _denoised(y0, mask, mean, loadings, noise)
