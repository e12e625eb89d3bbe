r"""Symmetry-compatible matrix optimizers (Lau and Su 2026, "Symmetry-Compatible Principle for
Optimizer Design", arXiv 2605.18106) and the baselines they are compared with (notes 07, 7.2).

Every matrix optimizer keeps one momentum buffer ``M <- beta M + (1 - beta) G``, applies decoupled
weight decay ``W <- W (1 - lr wd)`` and then steps ``W <- W - lr U(M)``; only the direction ``U``
differs. Each ``U`` is a pure function of its input (the ``*_direction`` functions below), so
:mod:`neurips26.symm_optim.theory` can check its symmetries exactly in float64. Directions, after
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
  eps) where the repo runs 5 Polar Express / Newton-Schulz steps in fp32 (notes 7.3: the quick path
  uses exact eigh/SVD; Gram Newton-Schulz is GPU-only). Everything runs in the parameter's dtype;
* ``nu`` of the one-sided polar step is the trace ``tr(C R)`` (its docstring's ``<M, M R>``). The
  repo's ``RightPolarGradM`` sums every entry of ``C R`` instead, which is not invariant under right
  rotations (``theory`` shows this); ``nu_mode="repo"`` reproduces it. ``LeftPolarGradM`` and the
  hybrid already use the trace / inner product;
* the hybrid's default order is ``row_then_polar``, the default of the repo's routing code
  (``optim/routing.py``); the class ``HybridPolarGradM`` itself defaults to ``polar_then_row``;
* Muon's Newton-Schulz runs in the parameter's dtype (Keller Jordan's casts to bfloat16);
* only 2-D parameters are accepted by the matrix optimizers (the repo silently skips others and also
  takes 3-D expert tensors); a gradient that is not finite raises :class:`FloatingPointError` before
  any parameter of the optimizer changes, naming the param group's ``name`` and the step.

:class:`AdamW` has torch.optim.AdamW's arithmetic (a test compares them) with the same finiteness check.
:func:`build_optimizer` creates one optimizer per parameter kind, as the repo's
``build_transformer_mixed_optimizer`` does per role.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable

import torch

from .settings import KINDS, NU_MODES, ORDERS, ORIENTATIONS, check_group

__all__ = [
    "AdamW",
    "CenteredLeftPolarGrad",
    "CenteredRowNorm",
    "HybridPolarGrad",
    "KINDS",
    "LeftPolarGrad",
    "MATRIX_OPTIMIZERS",
    "MixedOptimizer",
    "Muon",
    "NS_COEFFICIENTS",
    "OPTIMIZERS",
    "RightPolarGrad",
    "RowNorm",
    "SpectralDescent",
    "adam_direction",
    "build_optimizer",
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
    if x.ndim != 2:
        raise ValueError(f"{who} needs a 2-D matrix, got shape {tuple(x.shape)}")


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
    tall = m.shape[0] > m.shape[1]
    x = m.mT if tall else m
    x = x / (torch.linalg.matrix_norm(x) + eps)
    for _ in range(steps):
        gram = x @ x.mT
        x = a * x + (b * gram + c * gram @ gram) @ x
    return x.mT if tall else x


def muon_direction(m: torch.Tensor, exact: bool = False, ns_steps: int = 5) -> torch.Tensor:
    """Muon's direction: ``polar(m)`` (SVD if ``exact`` else Newton-Schulz) times ``sqrt(max(1, rows/cols))``."""
    u = polar(m) if exact else newton_schulz(m, ns_steps)
    return u * math.sqrt(max(1.0, m.shape[0] / m.shape[1]))


def _nu_scale(nu: torch.Tensor, alpha: float, eps: float):
    return nu.clamp_min(eps).pow(alpha) if alpha != 0 else 1.0


def spectral_direction(
    m: torch.Tensor, alpha: float = 1.0, exact: bool = True, ns_steps: int = 5, eps: float = 1e-8
) -> torch.Tensor:
    """Stochastic spectral descent / PolarGrad: ``nu^alpha polar(m)`` with ``nu = <m, polar(m)>`` (the
    nuclear norm when the polar factor is exact)."""
    u = polar(m) if exact else newton_schulz(m, ns_steps)
    return _nu_scale(torch.sum(m * u), alpha, eps) * u


def inverse_sqrt_psd(c: torch.Tensor, eps: float) -> torch.Tensor:
    """``(c + eps I)^{-1/2}`` of a symmetric PSD matrix by eigendecomposition (eigenvalues clamped at 0)."""
    c = 0.5 * (c + c.mT)
    lam, vec = torch.linalg.eigh(c)
    return (vec * (lam.clamp_min(0) + eps).rsqrt()) @ vec.mT


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
    nu = torch.trace(prod) if nu_mode == "trace" else torch.sum(prod)
    return _nu_scale(nu, alpha, eps) * u


def left_polar_direction(m: torch.Tensor, alpha: float = 1.0, eps: float = 1e-8, center: bool = False) -> torch.Tensor:
    """Left spectral step ``nu^alpha (M_c M_c^T + eps I)^{-1/2} M_c`` (``LeftPolarGradM``), ``M_c`` the
    momentum with its row mean removed if ``center`` (routers), ``nu = tr(C L)``."""
    _matrix(m, "left_polar_direction")
    work = _center_rows(m) if center else m
    u, gram, inv = _one_sided_polar(work, left=True, eps=eps)
    if alpha == 0:
        return u
    return _nu_scale(torch.trace(gram @ inv), alpha, eps) * u


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
        out = _nu_scale(torch.sum(work * u), alpha, eps) * u
    else:
        u, _, _ = _one_sided_polar(work, left, eps)
        out = row_norm_direction(_nu_scale(torch.sum(work * u), alpha, eps) * u, eps)
    return _orient(out, orientation)


def adam_direction(g: torch.Tensor, eps: float = 1e-8) -> torch.Tensor:
    """Adam's first (bias-corrected) step from zero state: ``G / (|G| + eps)``."""
    return g / (g.abs() + eps)


def sign_direction(g: torch.Tensor) -> torch.Tensor:
    """``sign(G)``, Adam's first step in the limit ``eps -> 0`` (signSGD)."""
    return torch.sign(g)


# ----------------------------------------------------------------------------------------------
# Optimizers
# ----------------------------------------------------------------------------------------------


class _Base(torch.optim.Optimizer):
    """Shared validation, finiteness check and per-parameter step counter."""

    matrix_only = True

    def _validate(self, group: dict) -> None:
        who = type(self).__name__
        check_group(who, group)
        if self.matrix_only:
            for p in group["params"]:
                if p.ndim != 2:
                    raise ValueError(
                        f"{who} updates 2-D matrices only, got a parameter of shape "
                        f"{tuple(p.shape)} in param group {group.get('name')!r}"
                    )

    def add_param_group(self, param_group: dict) -> None:
        super().add_param_group(param_group)
        self._validate(self.param_groups[-1])

    def _check_finite(self) -> None:
        for group in self.param_groups:
            for p in group["params"]:
                if p.grad is None:
                    continue
                if p.grad.is_sparse:
                    raise RuntimeError(
                        f"{type(self).__name__} does not support sparse gradients (param group {group.get('name')!r})"
                    )
                if bool(torch.isfinite(p.grad).logical_not().any()):  # 'any bad': a fake GPU's zeros read 'no'
                    step = self.state[p].get("step", 0) + 1
                    raise FloatingPointError(
                        f"{type(self).__name__}: non-finite gradient in param group "
                        f"{group.get('name')!r} at step {step} (shape {tuple(p.shape)})"
                    )

    def _direction(self, m: torch.Tensor, group: dict) -> torch.Tensor:  # pragma: no cover - abstract
        raise NotImplementedError

    @torch.no_grad()
    def step(self, closure: Callable[[], torch.Tensor] | None = None):
        loss = None
        if closure is not None:
            with torch.enable_grad():
                loss = closure()
        self._check_finite()
        for group in self.param_groups:
            lr, wd = group["lr"], group["weight_decay"]
            for p in group["params"]:
                if p.grad is None:
                    continue
                state = self.state[p]
                if not state:
                    state["step"] = 0
                state["step"] += 1
                update = self._update(p, state, group)
                if wd:
                    p.mul_(1.0 - lr * wd)
                p.add_(update, alpha=-lr)
        return loss

    def _update(self, p: torch.Tensor, state: dict, group: dict) -> torch.Tensor:
        """The step direction of one parameter: momentum ``M <- beta M + (1 - beta) G``, then the direction."""
        if "momentum" not in state:
            state["momentum"] = torch.zeros_like(p)
        m = state["momentum"]
        m.lerp_(p.grad, 1.0 - group["beta"])
        return self._direction(m, group)


class RowNorm(_Base):
    """``RowNormM``: momentum, then row normalisation (optionally centered, optionally on the transpose)."""

    def __init__(
        self,
        params,
        lr: float = 1e-3,
        beta: float = 0.95,
        weight_decay: float = 0.0,
        eps: float = 1e-8,
        center: bool = False,
        orientation: str = "row",
    ):
        super().__init__(
            params, dict(lr=lr, beta=beta, weight_decay=weight_decay, eps=eps, center=center, orientation=orientation)
        )

    def _direction(self, m, group):
        return row_norm_direction(m, group["eps"], group["center"], group["orientation"])


class CenteredRowNorm(RowNorm):
    """``RowNormM(center_rows=True)``: the MoE router's centered row normalisation."""

    def __init__(
        self,
        params,
        lr: float = 1e-3,
        beta: float = 0.95,
        weight_decay: float = 0.0,
        eps: float = 1e-8,
        orientation: str = "row",
    ):
        super().__init__(params, lr, beta, weight_decay, eps, center=True, orientation=orientation)


class RightPolarGrad(_Base):
    """``RightPolarGradM``: one-sided (right) spectral step for vocabulary-indexed V x d matrices."""

    def __init__(
        self,
        params,
        lr: float = 1e-3,
        beta: float = 0.95,
        alpha: float = 1.0,
        eps: float = 1e-8,
        weight_decay: float = 0.0,
        nu_mode: str = "trace",
    ):
        super().__init__(
            params, dict(lr=lr, beta=beta, alpha=alpha, eps=eps, weight_decay=weight_decay, nu_mode=nu_mode)
        )

    def _direction(self, m, group):
        return right_polar_direction(m, group["alpha"], group["eps"], group["nu_mode"])


class LeftPolarGrad(_Base):
    """``LeftPolarGradM``: left spectral step for E x d routers (``center`` removes the expert mean)."""

    def __init__(
        self,
        params,
        lr: float = 1e-3,
        beta: float = 0.95,
        alpha: float = 1.0,
        eps: float = 1e-8,
        weight_decay: float = 0.0,
        center: bool = False,
    ):
        super().__init__(params, dict(lr=lr, beta=beta, alpha=alpha, eps=eps, weight_decay=weight_decay, center=center))

    def _direction(self, m, group):
        return left_polar_direction(m, group["alpha"], group["eps"], group["center"])


class CenteredLeftPolarGrad(LeftPolarGrad):
    """``LeftPolarGradM(center_rows=True)``."""

    def __init__(
        self,
        params,
        lr: float = 1e-3,
        beta: float = 0.95,
        alpha: float = 1.0,
        eps: float = 1e-8,
        weight_decay: float = 0.0,
    ):
        super().__init__(params, lr, beta, alpha, eps, weight_decay, center=True)


class HybridPolarGrad(_Base):
    """``HybridPolarGradM``: row normalisation combined with a one-sided polar step."""

    def __init__(
        self,
        params,
        lr: float = 1e-3,
        beta: float = 0.95,
        alpha: float = 1.0,
        weight_decay: float = 0.0,
        eps: float = 1e-8,
        order: str = "row_then_polar",
        left: bool = False,
        center: bool = False,
        orientation: str = "row",
    ):
        super().__init__(
            params,
            dict(
                lr=lr,
                beta=beta,
                alpha=alpha,
                weight_decay=weight_decay,
                eps=eps,
                order=order,
                left=left,
                center=center,
                orientation=orientation,
            ),
        )

    def _direction(self, m, group):
        return hybrid_direction(
            m, group["alpha"], group["eps"], group["order"], group["left"], group["center"], group["orientation"]
        )


class SpectralDescent(_Base):
    """Stochastic spectral descent / PolarGrad: ``nu^alpha polar(M)``, ``nu`` the nuclear norm."""

    def __init__(
        self,
        params,
        lr: float = 1e-3,
        beta: float = 0.95,
        alpha: float = 1.0,
        eps: float = 1e-8,
        weight_decay: float = 0.0,
        exact: bool = True,
        ns_steps: int = 5,
    ):
        super().__init__(
            params,
            dict(lr=lr, beta=beta, alpha=alpha, eps=eps, weight_decay=weight_decay, exact=exact, ns_steps=ns_steps),
        )

    def _direction(self, m, group):
        return spectral_direction(m, group["alpha"], group["exact"], group["ns_steps"], group["eps"])


class Muon(_Base):
    """Keller Jordan's Muon: ``B <- lerp(B, G, 1 - momentum)``; the direction is taken of
    ``lerp(G, B, momentum)`` (Nesterov) or ``B``; decoupled decay; step ``lr * sqrt(max(1, m/n)) polar``."""

    def __init__(
        self,
        params,
        lr: float = 0.02,
        momentum: float = 0.95,
        nesterov: bool = True,
        weight_decay: float = 0.0,
        exact: bool = False,
        ns_steps: int = 5,
        eps: float = 1e-7,
    ):
        super().__init__(
            params,
            dict(
                lr=lr,
                momentum=momentum,
                nesterov=nesterov,
                weight_decay=weight_decay,
                exact=exact,
                ns_steps=ns_steps,
                eps=eps,
            ),
        )

    def _update(self, p: torch.Tensor, state: dict, group: dict) -> torch.Tensor:
        if "momentum_buffer" not in state:
            state["momentum_buffer"] = torch.zeros_like(p)
        buf = state["momentum_buffer"]
        mu = group["momentum"]
        buf.lerp_(p.grad, 1.0 - mu)
        m = p.grad.lerp(buf, mu) if group["nesterov"] else buf
        u = polar(m) if group["exact"] else newton_schulz(m, group["ns_steps"], group["eps"])
        return u * math.sqrt(max(1.0, p.shape[0] / p.shape[1]))


class AdamW(_Base):
    """AdamW with torch.optim.AdamW's arithmetic (decay ``p (1 - lr wd)``, bias-corrected moments,
    eps added after the square root); any parameter shape."""

    matrix_only = False

    def __init__(
        self,
        params,
        lr: float = 1e-3,
        betas: tuple[float, float] = (0.9, 0.999),
        eps: float = 1e-8,
        weight_decay: float = 0.01,
    ):
        super().__init__(
            params,
            dict(lr=lr, betas=tuple(betas) if isinstance(betas, list) else betas, eps=eps, weight_decay=weight_decay),
        )

    @torch.no_grad()
    def step(self, closure=None):
        loss = None
        if closure is not None:
            with torch.enable_grad():
                loss = closure()
        self._check_finite()
        for group in self.param_groups:
            lr, (b1, b2), eps, wd = group["lr"], group["betas"], group["eps"], group["weight_decay"]
            for p in group["params"]:
                if p.grad is None:
                    continue
                state = self.state[p]
                if not state:
                    state["step"] = 0
                    state["exp_avg"] = torch.zeros_like(p)
                    state["exp_avg_sq"] = torch.zeros_like(p)
                state["step"] += 1
                t = state["step"]
                g = p.grad
                p.mul_(1.0 - lr * wd)
                state["exp_avg"].lerp_(g, 1.0 - b1)
                state["exp_avg_sq"].mul_(b2).addcmul_(g, g, value=1.0 - b2)
                denom = (state["exp_avg_sq"].sqrt() / math.sqrt(1.0 - b2**t)).add_(eps)
                p.addcdiv_(state["exp_avg"], denom, value=-lr / (1.0 - b1**t))
        return loss


OPTIMIZERS: dict[str, type] = {
    "adamw": AdamW,
    "muon": Muon,
    "spectral": SpectralDescent,
    "row_norm": RowNorm,
    "centered_row_norm": CenteredRowNorm,
    "right_polar": RightPolarGrad,
    "left_polar": LeftPolarGrad,
    "centered_left_polar": CenteredLeftPolarGrad,
    "hybrid": HybridPolarGrad,
}
MATRIX_OPTIMIZERS = frozenset(name for name, cls in OPTIMIZERS.items() if cls.matrix_only)


# ----------------------------------------------------------------------------------------------
# One optimizer per parameter kind
# ----------------------------------------------------------------------------------------------


class MixedOptimizer:
    """One optimizer per parameter kind, stepped together (the repo's ``MixedOptimizer``)."""

    def __init__(self, optimizers: dict[str, torch.optim.Optimizer], names: dict[str, list[str]]):
        self.optimizers = optimizers
        self.names = names  # kind -> parameter names, in order

    def zero_grad(self, set_to_none: bool = True) -> None:
        for opt in self.optimizers.values():
            opt.zero_grad(set_to_none=set_to_none)

    def step(self) -> None:
        for opt in self.optimizers.values():  # each checks its own gradients first
            opt._check_finite()
        for opt in self.optimizers.values():
            opt.step()

    def state_dict(self) -> dict:
        return {kind: opt.state_dict() for kind, opt in self.optimizers.items()}

    def load_state_dict(self, state: dict) -> None:
        if set(state) != set(self.optimizers):
            raise ValueError(f"optimizer state has kinds {sorted(state)}, this optimizer {sorted(self.optimizers)}")
        for kind, opt in self.optimizers.items():
            opt.load_state_dict(state[kind])


def build_optimizer(
    named_parameters: Iterable[tuple[str, torch.nn.Parameter]],
    assignment: dict[str, dict],
    kind_of: Callable[[str, torch.nn.Parameter], str],
) -> MixedOptimizer:
    """One optimizer per kind of parameter (``KINDS``: hidden, mlp_gate_up, mlp_down, embedding, lm_head, router,
    vector).

    ``assignment[kind]`` is ``{"name": <key of OPTIMIZERS>, "lr": ..., <other constructor arguments>}``;
    ``kind_of(name, param)`` says each trainable parameter's kind. A parameter listed twice (tied weights,
    ``named_parameters(remove_duplicate=False)``) must get the same kind both times. Refused with
    ValueError: an unknown kind or optimizer name, a kind with parameters but no assignment, a non-2-D
    parameter assigned a matrix optimizer, an assignment that is not a dict with ``name``."""
    for kind, spec in assignment.items():
        if kind not in KINDS:
            raise ValueError(f"assignment: unknown kind {kind!r}, expected one of {KINDS}")
        if not isinstance(spec, dict) or "name" not in spec:
            raise ValueError(f"assignment[{kind!r}] must be a dict with a 'name' key, got {spec!r}")
        if spec["name"] not in OPTIMIZERS:
            raise ValueError(
                f"assignment[{kind!r}]: unknown optimizer {spec['name']!r}, expected one of {sorted(OPTIMIZERS)}"
            )
    params: dict[str, list] = {}
    names: dict[str, list[str]] = {}
    seen: dict[int, tuple[str, str]] = {}
    for name, p in named_parameters:
        if not p.requires_grad:
            continue
        kind = kind_of(name, p)
        if kind not in KINDS:
            raise ValueError(f"kind_of({name!r}) returned unknown kind {kind!r}, expected one of {KINDS}")
        if id(p) in seen:
            first_name, first_kind = seen[id(p)]
            if first_kind != kind:
                raise ValueError(
                    f"parameter {name!r} is tied to {first_name!r} but has kind {kind!r} "
                    f"where {first_name!r} has {first_kind!r}: tied weights need one optimizer"
                )
            continue
        seen[id(p)] = (name, kind)
        if kind not in assignment:
            raise ValueError(
                f"parameter {name!r} has kind {kind!r}, which the assignment does not cover "
                f"(it covers {sorted(assignment)})"
            )
        opt_name = assignment[kind]["name"]
        if opt_name in MATRIX_OPTIMIZERS and p.ndim != 2:
            raise ValueError(
                f"parameter {name!r} of shape {tuple(p.shape)} (kind {kind!r}) cannot be "
                f"updated by the matrix optimizer {opt_name!r}, which needs 2-D parameters"
            )
        params.setdefault(kind, []).append(p)
        names.setdefault(kind, []).append(name)
    optimizers = {}
    for kind in KINDS:
        if kind not in params:
            continue
        spec = dict(assignment[kind])
        cls = OPTIMIZERS[spec.pop("name")]
        optimizers[kind] = cls([{"params": params[kind], "name": kind}], **spec)
    if not optimizers:
        raise ValueError("build_optimizer got no trainable parameters")
    return MixedOptimizer(optimizers, names)
