"""Sliced OT predictors: exact 1-D Kantorovich potentials along fixed directions.

The predictors of the paper (arXiv:2604.15114)."""

from __future__ import annotations

import numpy as np
import ot
import torch
from scipy.stats import norm, qmc

from neurips26.amortized_ot.measures import MeasureError


def directions(n_projections: int, dim: int, seed: int) -> np.ndarray:
    """n_projections unit directions in R^dim from a scrambled Sobol sequence, fixed by `seed`.

    Returned as (L, dim). Sobol points are pushed through the normal inverse CDF and normalised,
    which spreads them more evenly over the sphere than i.i.d. Gaussian draws.
    """
    if n_projections < 1:
        raise MeasureError(f"number of projections must be >= 1, got {n_projections}")
    sobol = qmc.Sobol(d=dim, scramble=True, seed=seed)
    points = sobol.random(n_projections)
    gauss = norm.ppf(np.clip(points, 1e-12, 1 - 1e-12))
    return gauss / np.linalg.norm(gauss, axis=1, keepdims=True)


def sliced_potentials(
    x: np.ndarray, a: np.ndarray, y: np.ndarray, b: np.ndarray, theta: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Exact 1-D duals of every pair along every direction, cost |s - t|^2.

    Returns phi (P, n, L) evaluated at the source atoms and psi (P, m, L) at the target atoms,
    centered per (pair, direction) so that <phi, a> = <psi, b>.
    """
    if theta.shape[1] != x.shape[2]:
        raise MeasureError(f"dimension mismatch: directions live in R^{theta.shape[1]}, atoms in R^{x.shape[2]}")
    P, n, _ = x.shape
    m, L = y.shape[1], theta.shape[0]
    # (n, P*L) layout: POT batches 1-D problems over the trailing axis
    proj_x = torch.as_tensor(np.einsum("pnd,ld->npl", x, theta).reshape(n, P * L))
    proj_y = torch.as_tensor(np.einsum("pmd,ld->mpl", y, theta).reshape(m, P * L))
    wa = torch.as_tensor(np.repeat(a.T[:, :, None], L, axis=2).reshape(n, P * L))
    wb = torch.as_tensor(np.repeat(b.T[:, :, None], L, axis=2).reshape(m, P * L))
    phi, psi, _ = ot.lp.emd_1d_dual_backprop(proj_x, proj_y, wa, wb, p=2)
    phi = phi.detach().numpy().reshape(n, P, L).transpose(1, 0, 2)
    psi = psi.detach().numpy().reshape(m, P, L).transpose(1, 0, 2)
    shift = 0.5 * (np.einsum("pml,pm->pl", psi, b) - np.einsum("pnl,pn->pl", phi, a))
    return phi + shift[:, None, :], psi - shift[:, None, :]
