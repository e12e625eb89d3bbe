"""Sliced OT predictors: exact 1-D Kantorovich potentials along fixed directions.

The predictors of the paper (arXiv:2604.15114)."""

from __future__ import annotations

import numpy as np
import torch

from neurips26.amortized_ot.measures import MeasureError


def directions(n_projections: int, dim: int, seed: int) -> np.ndarray:
    """n_projections unit directions in R^dim from a scrambled Sobol sequence, fixed by `seed`.

    Returned as (L, dim). Sobol points are pushed through the normal inverse CDF and normalised,
    which spreads them more evenly over the sphere than i.i.d. Gaussian draws.
    """
    if n_projections < 1:
        raise MeasureError(f"number of projections must be >= 1, got {n_projections}")
    from scipy.stats import norm, qmc

    sobol = qmc.Sobol(d=dim, scramble=True, seed=seed)
    points = sobol.random(n_projections)
    gauss = norm.ppf(np.clip(points, 1e-12, 1 - 1e-12))
    return gauss / np.linalg.norm(gauss, axis=1, keepdims=True)


def _batched_problems(x, a, y, b, theta):
    """Projections and weights in the (atoms, P * L) layout of POT's batched 1-D solver."""
    _check_dimension(x, theta)
    P, n, _ = x.shape
    m, L = y.shape[1], theta.shape[0]
    proj_x = np.einsum("pnd,ld->npl", x, theta).reshape(n, P * L)
    proj_y = np.einsum("pmd,ld->mpl", y, theta).reshape(m, P * L)
    return proj_x, proj_y, _weight_columns(a, L), _weight_columns(b, L)


def _check_dimension(x, theta) -> None:
    if theta.shape[1] != x.shape[2]:
        raise MeasureError(f"dimension mismatch: directions live in R^{theta.shape[1]}, atoms in R^{x.shape[2]}")


def _weight_columns(w: np.ndarray, L: int) -> np.ndarray:
    """Each pair's weights once per direction, (atoms, P * L)."""
    return np.repeat(w.T[:, :, None], L, axis=2).reshape(w.shape[1], -1)


def _centered(alpha: torch.Tensor, beta: torch.Tensor, wa: torch.Tensor, wb: torch.Tensor, a, b, P: int, L: int):
    """POT's center_ot_dual on (atoms, P * L) duals, then the shift that makes <phi, a> = <psi, b> per (pair,
    direction); returns phi (P, n, L) and psi (P, m, L)."""
    n, m = alpha.shape[0], beta.shape[0]
    c = ((wb * beta).sum(0) - (wa * alpha).sum(0)) / (wa.sum(0) + wb.sum(0))
    phi = (alpha + c).numpy().reshape(n, P, L).transpose(1, 0, 2)
    psi = (beta - c).numpy().reshape(m, P, L).transpose(1, 0, 2)
    shift = 0.5 * (np.einsum("pml,pm->pl", psi, b) - np.einsum("pnl,pn->pl", phi, a))
    return phi + shift[:, None, :], psi - shift[:, None, :]


def sliced_potentials(
    x: np.ndarray, a: np.ndarray, y: np.ndarray, b: np.ndarray, theta: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Exact 1-D Kantorovich potentials of every pair along every direction, cost |s - t|^2.

    Returns phi (P, n, L) evaluated at the source atoms and psi (P, m, L) at the target atoms,
    centered per (pair, direction) so that <phi, a> = <psi, b>.

    The duals are those of the north-west-corner basis (staircase_duals): optimal and dual feasible for every
    1-D problem, ties included. Where no projection or cumulative weight ties, they equal the gradients of the
    1-D OT cost with respect to the weights that POT's `ot.lp.emd_1d_dual_backprop` computes
    (`sliced_potentials_backprop`, the implementation before the colour fix), up to rounding. Where they tie
    (duplicate colours, uniform weights: the colour task), POT's gradients are not Kantorovich potentials: they
    break the constraints phi_i + psi_j <= |s_i - t_j|^2 (by up to 1.6 on quick's colour pairs, for potentials
    whose range is 0.16) and give duplicate atoms different values, which the RA-OT fit and its plans inherited.
    """
    _check_dimension(x, theta)
    P, L = x.shape[0], theta.shape[0]
    # one 1-D problem per row, (P * L, atoms)
    proj_x = np.einsum("pnd,ld->pln", x, theta).reshape(P * L, -1)
    proj_y = np.einsum("pmd,ld->plm", y, theta).reshape(P * L, -1)
    rows_a = np.repeat(a[:, None, :], L, axis=1).reshape(P * L, -1)
    rows_b = np.repeat(b[:, None, :], L, axis=1).reshape(P * L, -1)
    phi, psi = staircase_duals(proj_x, rows_a, proj_y, rows_b)
    wa, wb = (torch.from_numpy(_weight_columns(w, L)) for w in (a, b))
    return _centered(torch.from_numpy(phi.T.copy()), torch.from_numpy(psi.T.copy()), wa, wb, a, b, P, L)


def staircase_duals(u: np.ndarray, wu: np.ndarray, v: np.ndarray, wv: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Optimal duals (phi (R, n), psi (R, m)) of R 1-D OT problems with cost |s - t|^2 (rows of u, v: positions;
    wu, wv: weights), from the north-west-corner basis.

    The monotone plan walks a staircase of cells (i, j) through the sorted atoms: from (0, 0), one step in u or in v
    at each merged cumulative weight (u first where the cumulative weights tie, so the staircase never steps
    diagonally), n + m - 1 cells. phi_i + psi_j = |u_i - v_j|^2 on every cell of the staircase fixes the duals
    (phi_0 = 0); |s - t|^2 is a Monge cost, so these duals are feasible everywhere and, the plan living on the
    staircase, optimal. A duplicate atom steps at zero cost change, so duplicates get the same potential.
    """
    R, n = u.shape
    m = v.shape[1]
    sort_u, sort_v = np.argsort(u, axis=-1, kind="stable"), np.argsort(v, axis=-1, kind="stable")
    u_sorted, v_sorted = np.take_along_axis(u, sort_u, -1), np.take_along_axis(v, sort_v, -1)
    cum_u = np.cumsum(np.take_along_axis(wu, sort_u, -1), -1)[:, :-1]
    cum_v = np.cumsum(np.take_along_axis(wv, sort_v, -1), -1)[:, :-1]
    order = np.argsort(np.concatenate([cum_u, cum_v], -1), axis=-1, kind="stable")  # u before v at equal levels
    step_u = order < n - 1
    i, j = np.cumsum(step_u, -1), np.cumsum(~step_u, -1)  # the cell after each step
    rows = np.arange(R)[:, None]
    here = (u_sorted[rows, i] - v_sorted[rows, j]) ** 2
    before = np.where(
        step_u,
        (u_sorted[rows, np.maximum(i - 1, 0)] - v_sorted[rows, j]) ** 2,
        (u_sorted[rows, i] - v_sorted[rows, np.maximum(j - 1, 0)]) ** 2,
    )
    change = here - before  # phi_i - phi_{i-1} on a u step, psi_j - psi_{j-1} on a v step
    phi_sorted, psi_sorted = np.zeros((R, n)), np.empty((R, m))
    phi_sorted[:, 1:] = np.cumsum(change[step_u].reshape(R, n - 1), -1)
    psi_sorted[:, 0] = (u_sorted[:, 0] - v_sorted[:, 0]) ** 2
    psi_sorted[:, 1:] = psi_sorted[:, :1] + np.cumsum(change[~step_u].reshape(R, m - 1), -1)
    phi, psi = np.empty((R, n)), np.empty((R, m))
    np.put_along_axis(phi, sort_u, phi_sorted, -1)
    np.put_along_axis(psi, sort_v, psi_sorted, -1)
    return phi, psi


def sliced_potentials_backprop(
    x: np.ndarray, a: np.ndarray, y: np.ndarray, b: np.ndarray, theta: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """The sliced duals by POT's autograd route (ot.lp.emd_1d_dual_backprop): the reference `sliced_potentials`
    equals where nothing ties, and the implementation before the closed form (the speed profile's 'before'). Where
    projections or cumulative weights tie, these are not Kantorovich potentials (see sliced_potentials)."""
    import ot

    P, L = x.shape[0], theta.shape[0]
    proj_x, proj_y, wa, wb = (torch.as_tensor(v) for v in _batched_problems(x, a, y, b, theta))
    phi, psi, _ = ot.lp.emd_1d_dual_backprop(proj_x, proj_y, wa, wb, p=2)
    n, m = phi.shape[0], psi.shape[0]
    phi = phi.detach().numpy().reshape(n, P, L).transpose(1, 0, 2)
    psi = psi.detach().numpy().reshape(m, P, L).transpose(1, 0, 2)
    shift = 0.5 * (np.einsum("pml,pm->pl", psi, b) - np.einsum("pnl,pn->pl", phi, a))
    return phi + shift[:, None, :], psi - shift[:, None, :]
