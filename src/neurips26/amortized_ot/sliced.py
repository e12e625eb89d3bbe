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
    """Exact 1-D duals of every pair along every direction, cost |s - t|^2.

    Returns phi (P, n, L) evaluated at the source atoms and psi (P, m, L) at the target atoms,
    centered per (pair, direction) so that <phi, a> = <psi, b>.

    The duals are the gradients of the 1-D OT cost with respect to the weights, as POT's
    `ot.lp.emd_1d_dual_backprop` computes them by backpropagating through `ot.wasserstein_1d`
    (`sliced_potentials_backprop`), written out in closed form: the same operations in the same order,
    without the autograd graph, with numpy's argsort where a row has no tied values and torch's sort
    (the order POT's route gives tied values) where it has. The results are the same bit for bit; the
    ties matter because the 1-D plan is degenerate there (duplicate atoms, equal cumulative weights) and
    the dual is not unique.
    """
    _check_dimension(x, theta)
    P, L = x.shape[0], theta.shape[0]
    # one 1-D problem per row, (P * L, atoms), the same numbers as POT's (atoms, P * L) layout transposed
    proj_x = np.einsum("pnd,ld->pln", x, theta).reshape(P * L, -1)
    proj_y = np.einsum("pmd,ld->plm", y, theta).reshape(P * L, -1)
    rows_a = np.repeat(a[:, None, :], L, axis=1).reshape(P * L, -1)
    rows_b = np.repeat(b[:, None, :], L, axis=1).reshape(P * L, -1)
    grad_a, grad_b = _weight_gradients(proj_x, rows_a, proj_y, rows_b)
    wa, wb = (torch.from_numpy(_weight_columns(w, L)) for w in (a, b))
    return _centered(grad_a.T.contiguous(), grad_b.T.contiguous(), wa, wb, a, b, P, L)


def sliced_potentials_backprop(
    x: np.ndarray, a: np.ndarray, y: np.ndarray, b: np.ndarray, theta: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """`sliced_potentials` by POT's autograd route (ot.lp.emd_1d_dual_backprop): the reference it is tested
    against, and the implementation before the closed form (the speed profile's 'before')."""
    import ot

    P, L = x.shape[0], theta.shape[0]
    proj_x, proj_y, wa, wb = (torch.as_tensor(v) for v in _batched_problems(x, a, y, b, theta))
    phi, psi, _ = ot.lp.emd_1d_dual_backprop(proj_x, proj_y, wa, wb, p=2)
    n, m = phi.shape[0], psi.shape[0]
    phi = phi.detach().numpy().reshape(n, P, L).transpose(1, 0, 2)
    psi = psi.detach().numpy().reshape(m, P, L).transpose(1, 0, 2)
    shift = 0.5 * (np.einsum("pml,pm->pl", psi, b) - np.einsum("pnl,pn->pl", phi, a))
    return phi + shift[:, None, :], psi - shift[:, None, :]


def _sort_order(values: np.ndarray, group_rows: bool = False) -> torch.Tensor:
    """The permutation torch.sort(values, dim=-1) returns, per row of a (rows, k) float64 array.

    Rows without tied values have one sorting permutation, found by numpy's faster argsort; rows with
    ties are sorted by torch, whose (unstable) order among equal values is the one POT's route uses.
    `group_rows`: sort identical tied rows once (the same row gives the same permutation).
    """
    tied = (np.diff(np.sort(values, axis=-1), axis=-1) == 0).any(axis=-1)
    if not tied.any():
        return torch.from_numpy(np.argsort(values, axis=-1))
    order = np.empty(values.shape, dtype=np.int64)
    if not tied.all():
        order[~tied] = np.argsort(values[~tied], axis=-1)
    rows, inverse = values[tied], slice(None)
    if group_rows:
        rows, inverse = _distinct_rows(rows)
    order[tied] = torch.sort(torch.from_numpy(rows), dim=-1)[1].numpy()[inverse]
    return torch.from_numpy(order)


def _distinct_rows(rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Distinct rows and the index of each row among them; one comparison when all rows are equal (uniform
    weights give every 1-D problem the same cumulative weights)."""
    if (rows == rows[0]).all():
        return rows[:1], np.zeros(len(rows), dtype=np.int64)
    distinct, inverse = np.unique(rows, axis=0, return_inverse=True)
    return distinct, inverse.reshape(-1)


def _reversed_cumsum(values: torch.Tensor) -> torch.Tensor:
    return torch.flip(torch.cumsum(torch.flip(values, (-1,)), -1), (-1,))


def _weight_gradients(u: np.ndarray, wu: np.ndarray, v: np.ndarray, wv: np.ndarray):
    """d W2^2 / d weights of every row's 1-D problem (rows of u, v: atom positions; wu, wv: weights).

    ot.wasserstein_1d (p = 2) sorts both measures, merges their cumulative weights into the quantile levels
    q_0 <= ... <= q_{n+m-1}, and sums (q_k - q_{k-1}) D_k with D_k = |F_u^{-1}(q_k) - F_v^{-1}(q_k)|^2. Its
    gradient: D_k - D_{k+1} at the level q_k, summed back from the cumulative weights onto the weights
    (a reversed cumulative sum) and unsorted.
    """
    n, m = u.shape[1], v.shape[1]
    sort_u, sort_v = _sort_order(u), _sort_order(v)
    u, wu, v, wv = (torch.from_numpy(t) for t in (u, wu, v, wv))
    u_sorted, v_sorted = torch.gather(u, -1, sort_u), torch.gather(v, -1, sort_v)
    cum_u = torch.cumsum(torch.gather(wu, -1, sort_u), -1)
    cum_v = torch.cumsum(torch.gather(wv, -1, sort_v), -1)
    levels_unsorted = torch.cat([cum_u, cum_v], -1)
    perm = _sort_order(levels_unsorted.numpy(), group_rows=True)
    levels = torch.gather(levels_unsorted, -1, perm)
    # searchsorted(cum, level, side='left'): the cumulative weights strictly below the level are the u (v)
    # entries before the level's run of equal levels
    starts = torch.ones(levels.shape, dtype=torch.bool)
    starts[:, 1:] = levels[:, 1:] != levels[:, :-1]
    run_start = torch.cummax(torch.where(starts, torch.arange(n + m), 0), -1).values
    from_u = (perm < n).long()
    index_u = torch.gather(torch.cumsum(from_u, -1) - from_u, -1, run_start)
    index_v = (run_start - index_u).clamp_(0, m - 1)
    index_u.clamp_(0, n - 1)
    D = torch.pow(torch.abs(torch.gather(u_sorted, -1, index_u) - torch.gather(v_sorted, -1, index_v)), 2)
    grad_levels = D.clone()
    grad_levels[:, :-1] -= D[:, 1:]
    grad_cum = torch.empty_like(grad_levels).scatter_(-1, perm, grad_levels)
    grad_u = torch.empty_like(u).scatter_(-1, sort_u, _reversed_cumsum(grad_cum[:, :n]))
    grad_v = torch.empty_like(v).scatter_(-1, sort_v, _reversed_cumsum(grad_cum[:, n:]))
    return grad_u, grad_v
