r"""Float64 checks of the symmetry statements of Lau and Su (2026, "Symmetry-Compatible Principle for Optimizer
Design", arXiv 2605.18106; Section 3 derives each weight block's symmetry group and its equivariant update), the
checks S1-S3 of ``config/claims/symm_optim.yaml``.

An update rule ``U`` is equivariant under a group acting by ``M -> A M B`` when ``U(A M B) = A U(M) B``.
Each check draws a random group element, applies it and returns the largest deviation relative to the
largest entry of the reference: ``max|U(A M B) - A U(M) B| / max|A U(M) B|``. The directions are the pure
functions of :mod:`neurips26.symm_optim.directions` (a single step from zero momentum is ``U(G)`` up to the
factor ``1 - beta``, to which every direction here is scale-covariant), so the checks are exact up to
float64 rounding.

Which symmetries each direction has (``SYMMETRIES``; the paper's Section 3, block by block):

* Muon / spectral descent (bi-orthogonal): left and right orthogonal (hence permutation) equivariant;
* right polar: ``M (M^T M + eps)^{-1/2}`` is also bi-orthogonal; the repo's ``nu`` (sum of entries of
  ``C R``) is not right-orthogonal invariant, so ``nu_mode="repo"`` breaks right equivariance;
* row norm and the hybrid: left permutations and right rotations (``S_V x O(d)``); the hybrid is *not*
  left-orthogonal equivariant (check S2b);
* centered row norm / centered left polar (routers): ``S_E x O(d)``, and invariant to ``M -> M + 1 v^T``;
* Adam's first step and sign: only permutations (and sign flips); orthogonal equivariance fails.

The diagonal lifting (check S3): ``sign(G) = reshape(diag(polar(diag(vec G))))``, the paper's reading of
coordinate-wise updates as spectral updates of a pathological diagonal lifting (its abstract).

The relative error is the max norm rather than a Frobenius ratio (either is far from the checks' thresholds).
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial

import torch

from .directions import (
    adam_direction,
    hybrid_direction,
    left_polar_direction,
    muon_direction,
    polar,
    right_polar_direction,
    row_norm_direction,
    sign_direction,
    spectral_direction,
)

__all__ = [
    "DIRECTIONS",
    "SYMMETRIES",
    "diagonal_lifting_error",
    "adam_sign_limit_error",
    "equivariance_error",
    "equivariance_table",
    "identities_table",
    "polar_singular_value_error",
    "random_orthogonal",
    "random_permutation",
    "relative_deviation",
    "shift_invariance_error",
]

DIRECTIONS: dict[str, Callable[[torch.Tensor], torch.Tensor]] = {
    "muon_exact": partial(muon_direction, exact=True),
    "muon_ns": muon_direction,
    "spectral": spectral_direction,
    "right_polar": right_polar_direction,
    "right_polar_repo_nu": partial(right_polar_direction, nu_mode="repo"),
    "left_polar": left_polar_direction,
    "row_norm": row_norm_direction,
    "hybrid": hybrid_direction,
    "hybrid_polar_then_row": partial(hybrid_direction, order="polar_then_row"),
    "centered_row_norm": partial(row_norm_direction, center=True),
    "centered_left_polar": partial(left_polar_direction, center=True),
    "adam": adam_direction,
    "sign": sign_direction,
}

# group -> whether the direction is equivariant under it. Groups: left_perm, right_perm, left_orth,
# right_orth (random orthogonal matrices), shift (M -> M + 1 v^T, invariance).
_GROUPS = ("left_perm", "right_perm", "left_orth", "right_orth", "shift")


def _sym(*true: str) -> dict[str, bool]:
    return {g: g in true for g in _GROUPS}


SYMMETRIES: dict[str, dict[str, bool]] = {
    "muon_exact": _sym("left_perm", "right_perm", "left_orth", "right_orth"),
    "muon_ns": _sym("left_perm", "right_perm", "left_orth", "right_orth"),
    "spectral": _sym("left_perm", "right_perm", "left_orth", "right_orth"),
    "right_polar": _sym("left_perm", "right_perm", "left_orth", "right_orth"),
    "right_polar_repo_nu": _sym("left_perm", "right_perm", "left_orth"),
    "left_polar": _sym("left_perm", "right_perm", "left_orth", "right_orth"),
    "row_norm": _sym("left_perm", "right_perm", "right_orth"),
    "hybrid": _sym("left_perm", "right_perm", "right_orth"),
    "hybrid_polar_then_row": _sym("left_perm", "right_perm", "right_orth"),
    "centered_row_norm": _sym("left_perm", "right_perm", "right_orth", "shift"),
    "centered_left_polar": _sym("left_perm", "right_perm", "right_orth", "shift"),
    "adam": _sym("left_perm", "right_perm"),
    "sign": _sym("left_perm", "right_perm"),
}


def relative_deviation(a: torch.Tensor, b: torch.Tensor) -> float:
    """``max|a - b| / max|b|`` (``max|a - b|`` when ``b`` is zero)."""
    scale = float(b.abs().max()) if b.numel() else 0.0
    diff = float((a - b).abs().max()) if a.numel() else 0.0
    return diff / scale if scale > 0 else diff


def random_orthogonal(n: int, generator: torch.Generator) -> torch.Tensor:
    """A Haar-random n x n orthogonal matrix in float64 (QR of a Gaussian, signs fixed by diag(R))."""
    q, r = torch.linalg.qr(torch.randn(n, n, generator=generator, dtype=torch.float64))
    return q * torch.sign(torch.diagonal(r))


def random_permutation(n: int, generator: torch.Generator) -> torch.Tensor:
    """A random n x n permutation matrix in float64."""
    return torch.eye(n, dtype=torch.float64)[torch.randperm(n, generator=generator)]


def _check_input(m: torch.Tensor) -> None:
    if m.ndim != 2 or m.dtype != torch.float64:
        raise ValueError(f"the checks need a 2-D float64 matrix, got shape {tuple(m.shape)} and dtype {m.dtype}")


def equivariance_error(
    direction: Callable[[torch.Tensor], torch.Tensor], m: torch.Tensor, group: str, generator: torch.Generator
) -> float:
    """Relative deviation of ``U(A M B)`` from ``A U(M) B`` for a random element of ``group``
    (``left_perm``, ``right_perm``, ``left_orth``, ``right_orth``), or of ``U(M + 1 v^T)`` from ``U(M)``
    for ``shift``."""
    _check_input(m)
    if group == "shift":
        return shift_invariance_error(direction, m, generator)
    rows, cols = m.shape
    eye_r, eye_c = torch.eye(rows, dtype=m.dtype), torch.eye(cols, dtype=m.dtype)
    if group == "left_perm":
        a, b = random_permutation(rows, generator), eye_c
    elif group == "right_perm":
        a, b = eye_r, random_permutation(cols, generator)
    elif group == "left_orth":
        a, b = random_orthogonal(rows, generator), eye_c
    elif group == "right_orth":
        a, b = eye_r, random_orthogonal(cols, generator)
    else:
        raise ValueError(f"group must be one of {_GROUPS}, got {group!r}")
    return relative_deviation(direction(a @ m @ b), a @ direction(m) @ b)


def shift_invariance_error(
    direction: Callable[[torch.Tensor], torch.Tensor], m: torch.Tensor, generator: torch.Generator
) -> float:
    """Relative deviation of ``U(M + 1 v^T)`` from ``U(M)``, ``v`` Gaussian with the scale of ``M``'s rows
    (the softmax shift symmetry of a router)."""
    _check_input(m)
    v = torch.randn(m.shape[1], generator=generator, dtype=m.dtype) * float(m.abs().max())
    return relative_deviation(direction(m + v), direction(m))


def diagonal_lifting_error(g: torch.Tensor) -> float:
    """``max |sign(G) - reshape(diag(polar(diag(vec G))))|`` together with the largest off-diagonal entry
    of that polar factor: the sign update is the spectral update of the diagonal lifting. ``G`` must have
    no zero entry (the polar factor of a singular matrix is not unique)."""
    _check_input(g)
    if bool((g == 0).any()):
        raise ValueError("diagonal_lifting_error needs a G without zero entries")
    u = polar(torch.diag(g.reshape(-1)))
    off = u - torch.diag(torch.diagonal(u))
    return max(float((torch.diagonal(u).reshape(g.shape) - torch.sign(g)).abs().max()), float(off.abs().max()))


def adam_sign_limit_error(g: torch.Tensor, eps: float = 1e-30) -> float:
    """``max |adam_direction(G, eps) - sign(G)|``: Adam's first step tends to sign(G) as eps -> 0."""
    _check_input(g)
    return float((adam_direction(g, eps) - sign_direction(g)).abs().max())


def polar_singular_value_error(direction: Callable[[torch.Tensor], torch.Tensor], m: torch.Tensor) -> float:
    """``max |sigma_i - 1|`` over the singular values of ``direction(M)`` (a polar factor has all 1)."""
    _check_input(m)
    return float((torch.linalg.svdvals(direction(m)) - 1).abs().max())


def equivariance_table(seed: int = 0, rows: int = 24, cols: int = 8) -> list[dict]:
    """Every direction of ``DIRECTIONS`` against every group on a random ``rows x cols`` float64 matrix:
    rows of ``{optimizer, group, rel_err, expected}`` (``expected`` True where the direction should be
    equivariant / invariant). ``left_polar`` directions get the transposed, wide shape (routers E < d)."""
    gen = torch.Generator().manual_seed(seed)
    tall = torch.randn(rows, cols, generator=gen, dtype=torch.float64)
    wide = torch.randn(cols, rows, generator=gen, dtype=torch.float64)
    out = []
    for name, fn in DIRECTIONS.items():
        m = wide if "left_polar" in name else tall
        for group in _GROUPS:
            out.append(
                {
                    "optimizer": name,
                    "group": group,
                    "rel_err": equivariance_error(fn, m, group, gen),
                    "expected": SYMMETRIES[name][group],
                }
            )
    return out


def identities_table(seed: int = 0, rows: int = 12, cols: int = 5) -> list[dict]:
    """The identities on a random ``rows x cols`` float64 G: rows of ``{identity, value}`` for the diagonal
    lifting (check S3), the polar factor's singular values and Adam's sign limit."""
    gen = torch.Generator().manual_seed(seed)
    g = torch.randn(rows, cols, generator=gen, dtype=torch.float64)
    return [
        {"identity": "diagonal_lifting", "value": diagonal_lifting_error(g)},
        {"identity": "polar_singular_values", "value": polar_singular_value_error(polar, g)},
        {"identity": "adam_sign_limit", "value": adam_sign_limit_error(g)},
    ]
