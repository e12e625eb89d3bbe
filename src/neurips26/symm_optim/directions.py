r"""Update directions of the symmetry-compatible matrix optimizers (Lau and Su 2026, "Symmetry-Compatible
Principle for Optimizer Design", arXiv 2605.18106) and of the baselines they are compared with: pure functions
of the momentum (or gradient), so that :mod:`neurips26.symm_optim.theory` can check their symmetries exactly in
float64; :mod:`neurips26.symm_optim.optimizers` steps parameters along them (``W <- W - lr U(M)``, M
the momentum). Each takes a matrix or a stack of matrices (..., m, n), every matrix of the stack on its own
(an ensemble's seeds: batched SVD, eigh and Newton-Schulz, norms and traces per matrix). Directions, after
``timlautk/equivariant_optimizers`` (``optim/rownorm.py``, ``rightpolargrad.py``,
``leftpolargrad.py``, ``hybrid.py``, ``row_ops.py``):

* :func:`row_norm_direction` (``RowNormM``): ``U_i = M_i / (||M_i||_2 + eps)``, optionally after
  centering the rows (``center=True``: ``M - mean_i M_i``, the router's softmax shift symmetry) and
  on the transpose (``orientation="col"``, for SwiGLU down projections);
* :func:`right_polar_direction` (``RightPolarGradM``, one-sided spectral for V x d embeddings and LM
  heads): ``nu^alpha M (M^T M + eps I)^{-1/2}`` with ``nu = tr(M^T M R)``, R the inverse square root;
* :func:`left_polar_direction` (``LeftPolarGradM``, for E x d routers): ``nu^alpha (C + eps I)^{-1/2}
  M_c`` with ``C = M_c M_c^T``, ``M_c`` the (optionally) centered momentum, ``nu = tr(C L)``;
* :func:`hybrid_direction` (``HybridPolarGradM``): ``order="row_then_polar"`` row-normalises and then
  applies the one-sided polar step with ``nu = <R, U>``; ``"polar_then_row"`` the other way round;
* :func:`muon_direction` (Keller Jordan's Muon): the quintic Newton-Schulz iteration with coefficients
  (3.4445, -4.7750, 2.0315), 5 steps, after dividing by the Frobenius norm, on the wide orientation,
  times ``sqrt(max(1, rows / cols))``; ``exact=True`` takes the polar factor ``U_s V_s^T`` of an SVD;
* :func:`spectral_direction` (stochastic spectral descent / PolarGrad): ``nu^alpha polar(M)`` with
  ``nu = <M, polar(M)> = ||M||_*``;
* :func:`adam_direction` / :func:`sign_direction`: Adam's bias-corrected first step ``G / (|G| + eps)``
  and its ``eps -> 0`` limit ``sign(G)``, the coordinate-wise updates the paper contrasts.

Deliberate differences from the reference code:

* the inverse square roots are exact (``torch.linalg.eigh``, eigenvalues clamped at 0 before adding
  eps) where the repo runs 5 Polar Express / Newton-Schulz steps in fp32 (its Gram Newton-Schulz
  kernels are GPU-only). Everything runs in the parameter's dtype;
* ``nu`` of the one-sided polar step is the trace ``tr(C R)`` (its docstring's ``<M, M R>``). The
  repo's ``RightPolarGradM`` sums every entry of ``C R`` instead, which is not invariant under right
  rotations (``theory`` shows this); ``nu_mode="repo"`` reproduces it. ``LeftPolarGradM`` and the
  hybrid already use the trace / inner product;
* the hybrid's default order is ``row_then_polar``, the default of the repo's routing code
  (``optim/routing.py``); the class ``HybridPolarGradM`` itself defaults to ``polar_then_row``;
* Muon's Newton-Schulz runs in the parameter's dtype (Keller Jordan's, and torch.optim.Muon, cast to
  bfloat16), divides by ``||M||_F + eps`` (torch.optim.Muon: ``max(||M||_F, eps)``) and forms
  ``a X + (b A + c A^2) X`` from separate products (torch.optim.Muon: two fused ``addmm``); the
  ``sqrt(max(1, rows / cols))`` factor multiplies the direction (torch.optim.Muon multiplies the learning
  rate, ``adjust_lr_fn="original"``), the same step up to rounding.
"""

from __future__ import annotations

import math

import torch

from .settings import NU_MODES, ORDERS, ORIENTATIONS

__all__ = [
    "NS_COEFFICIENTS",
    "adam_direction",
    "hybrid_direction",
    "inverse_sqrt_psd",
    "left_polar_direction",
    "muon_direction",
    "newton_schulz",
    "polar",
    "right_polar_direction",
    "row_norm_direction",
    "sign_direction",
    "spectral_direction",
]

NS_COEFFICIENTS = (3.4445, -4.7750, 2.0315)  # Keller Jordan's quintic Newton-Schulz coefficients


# ----------------------------------------------------------------------------------------------
# Pure update directions
# ----------------------------------------------------------------------------------------------


def _matrix(x: torch.Tensor, who: str) -> None:
    if x.ndim < 2:
        raise ValueError(f"{who} needs a 2-D matrix (or a stack of them), got shape {tuple(x.shape)}")


def _inner(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """``<a, b>`` of each matrix of the stack (shape (..., 1, 1))."""
    return torch.sum(a * b, dim=(-2, -1), keepdim=True)


def _trace(a: torch.Tensor) -> torch.Tensor:
    """``tr(a)`` of each square matrix of the stack (shape (..., 1, 1)), as ``torch.trace`` sums on the CPU (in
    order, in float64), so that a stack's traces are bit for bit those of its matrices one by one."""
    return a.diagonal(dim1=-2, dim2=-1).double().cumsum(-1)[..., -1, None, None].to(a.dtype)


def polar(m: torch.Tensor) -> torch.Tensor:
    """The polar factor ``U_s V_s^T`` of the thin SVD of ``m`` (exact, any 2-D shape)."""
    _matrix(m, "polar")
    u, _, vh = torch.linalg.svd(m, full_matrices=False)
    return u @ vh


def newton_schulz(m: torch.Tensor, steps: int = 5, eps: float = 1e-7) -> torch.Tensor:
    """Keller Jordan's quintic Newton-Schulz approximation of ``polar(m)``: ``X <- a X + (b A + c A^2) X``
    with ``A = X X^T`` on the wide orientation, started from ``m / (||m||_F + eps)``. Its singular
    values land in roughly [0.7, 1.2], not at 1: the coefficients trade accuracy for speed."""
    _matrix(m, "newton_schulz")
    a, b, c = NS_COEFFICIENTS
    tall = m.shape[-2] > m.shape[-1]
    x = m.mT if tall else m
    x = x / (torch.linalg.matrix_norm(x, keepdim=True) + eps)
    for _ in range(steps):
        gram = x @ x.mT
        x = a * x + (b * gram + c * gram @ gram) @ x
    return x.mT if tall else x


def muon_direction(m: torch.Tensor, exact: bool = False, ns_steps: int = 5) -> torch.Tensor:
    """Muon's direction: ``polar(m)`` (SVD if ``exact`` else Newton-Schulz) times ``sqrt(max(1, rows/cols))``."""
    u = polar(m) if exact else newton_schulz(m, ns_steps)
    return u * math.sqrt(max(1.0, m.shape[-2] / m.shape[-1]))


def _nu_scale(nu: torch.Tensor, alpha: float, eps: float):
    return nu.clamp_min(eps).pow(alpha) if alpha != 0 else 1.0


def spectral_direction(
    m: torch.Tensor, alpha: float = 1.0, exact: bool = True, ns_steps: int = 5, eps: float = 1e-8
) -> torch.Tensor:
    """Stochastic spectral descent / PolarGrad: ``nu^alpha polar(m)`` with ``nu = <m, polar(m)>`` (the
    nuclear norm when the polar factor is exact)."""
    u = polar(m) if exact else newton_schulz(m, ns_steps)
    return _nu_scale(_inner(m, u), alpha, eps) * u


def inverse_sqrt_psd(c: torch.Tensor, eps: float) -> torch.Tensor:
    """``(c + eps I)^{-1/2}`` of a symmetric PSD matrix by eigendecomposition (eigenvalues clamped at 0)."""
    c = 0.5 * (c + c.mT)
    lam, vec = torch.linalg.eigh(c)
    return (vec * (lam.clamp_min(0) + eps).rsqrt().unsqueeze(-2)) @ vec.mT


def _orient(m: torch.Tensor, orientation: str) -> torch.Tensor:
    if orientation not in ORIENTATIONS:
        raise ValueError(f"orientation must be one of {ORIENTATIONS}, got {orientation!r}")
    return m.mT if orientation == "col" else m


def _center_rows(m: torch.Tensor) -> torch.Tensor:
    return m - m.mean(dim=-2, keepdim=True)


def row_norm_direction(
    m: torch.Tensor, eps: float = 1e-8, center: bool = False, orientation: str = "row"
) -> torch.Tensor:
    """Row normalisation ``M_i / (||M_i|| + eps)`` (``RowNormM``, ``row_mode="inverse_eps"``), of the
    centered rows if ``center`` and of the transpose if ``orientation="col"``."""
    _matrix(m, "row_norm_direction")
    work = _orient(m, orientation)
    if center:
        work = _center_rows(work)
    out = work / (torch.linalg.vector_norm(work, dim=-1, keepdim=True) + eps)
    return _orient(out, orientation)


def _one_sided_polar(x: torch.Tensor, left: bool, eps: float) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """(direction, Gram, inverse square root): ``(X X^T + eps)^{-1/2} X`` if ``left`` else
    ``X (X^T X + eps)^{-1/2}``."""
    if left:
        gram = x @ x.mT
        inv = inverse_sqrt_psd(gram, eps)
        return inv @ x, gram, inv
    gram = x.mT @ x
    inv = inverse_sqrt_psd(gram, eps)
    return x @ inv, gram, inv


def right_polar_direction(
    m: torch.Tensor, alpha: float = 1.0, eps: float = 1e-8, nu_mode: str = "trace"
) -> torch.Tensor:
    """One-sided (right) spectral step ``nu^alpha M (M^T M + eps I)^{-1/2}`` (``RightPolarGradM``); ``nu``
    is ``tr(C R)`` (``nu_mode="trace"``) or the repo's sum of the entries of ``C R`` (``"repo"``)."""
    _matrix(m, "right_polar_direction")
    if nu_mode not in NU_MODES:
        raise ValueError(f"nu_mode must be one of {NU_MODES}, got {nu_mode!r}")
    u, gram, inv = _one_sided_polar(m, left=False, eps=eps)
    if alpha == 0:
        return u
    prod = gram @ inv
    nu = _trace(prod) if nu_mode == "trace" else torch.sum(prod, dim=(-2, -1), keepdim=True)
    return _nu_scale(nu, alpha, eps) * u


def left_polar_direction(m: torch.Tensor, alpha: float = 1.0, eps: float = 1e-8, center: bool = False) -> torch.Tensor:
    """Left spectral step ``nu^alpha (M_c M_c^T + eps I)^{-1/2} M_c`` (``LeftPolarGradM``), ``M_c`` the
    momentum with its row mean removed if ``center`` (routers), ``nu = tr(C L)``."""
    _matrix(m, "left_polar_direction")
    work = _center_rows(m) if center else m
    u, gram, inv = _one_sided_polar(work, left=True, eps=eps)
    if alpha == 0:
        return u
    return _nu_scale(_trace(gram @ inv), alpha, eps) * u


def hybrid_direction(
    m: torch.Tensor,
    alpha: float = 1.0,
    eps: float = 1e-8,
    order: str = "row_then_polar",
    left: bool = False,
    center: bool = False,
    orientation: str = "row",
) -> torch.Tensor:
    """Hybrid row-norm / one-sided spectral step (``HybridPolarGradM``). ``row_then_polar``: ``R = rownorm(M)``,
    ``U = polar_side(R)``, scaled by ``<R, U>^alpha``; ``polar_then_row``: ``rownorm(<M, U> ^alpha U)``,
    ``U = polar_side(M)``. ``left`` picks the left polar step (default right)."""
    _matrix(m, "hybrid_direction")
    if order not in ORDERS:
        raise ValueError(f"order must be one of {ORDERS}, got {order!r}")
    work = _orient(m, orientation)
    if center:
        work = _center_rows(work)
    if order == "row_then_polar":
        work = row_norm_direction(work, eps)
        u, _, _ = _one_sided_polar(work, left, eps)
        out = _nu_scale(_inner(work, u), alpha, eps) * u
    else:
        u, _, _ = _one_sided_polar(work, left, eps)
        out = row_norm_direction(_nu_scale(_inner(work, u), alpha, eps) * u, eps)
    return _orient(out, orientation)


def adam_direction(g: torch.Tensor, eps: float = 1e-8) -> torch.Tensor:
    """Adam's first (bias-corrected) step from zero state: ``G / (|G| + eps)``."""
    return g / (g.abs() + eps)


def sign_direction(g: torch.Tensor) -> torch.Tensor:
    """``sign(G)``, Adam's first step in the limit ``eps -> 0`` (signSGD)."""
    return torch.sign(g)
