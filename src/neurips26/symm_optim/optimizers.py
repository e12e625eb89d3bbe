r"""The optimizers of the symm_optim comparison (Lau and Su 2026, "Symmetry-Compatible Principle for
Optimizer Design", arXiv 2605.18106): parameter updates along the directions of
:mod:`neurips26.symm_optim.directions`, and one optimizer per parameter role (:func:`build_optimizer`).

Every matrix optimizer keeps one momentum buffer ``M <- beta M + (1 - beta) G`` (Muon: its own Nesterov
momentum), applies decoupled weight decay ``W <- W (1 - lr wd)`` and then steps ``W <- W - lr U(M)``;
only the direction ``U`` differs. Only 2-D parameters are accepted by the matrix optimizers (the
reference code, ``timlautk/equivariant_optimizers``, silently skips others and also takes 3-D expert
tensors); a gradient that is not finite raises :class:`FloatingPointError` before any parameter of the
optimizer changes, naming the param group's ``name`` and the step.

Ensembles (seeds as a batch dimension): a param group with ``members: S`` holds stacked parameters whose leading
dimension indexes the members (``build_optimizer(..., members=S)``). The matrix optimizers then take stacks of S
matrices and compute every direction per matrix of the stack (batched SVD, eigh and Newton-Schulz, norms and
inner products per member), AdamW acts elementwise, and the step count and hyper-parameters are shared; so each
member's update is the one it would get alone, whatever the other members hold.

:class:`AdamW` steps with :func:`neurips26.common.optim.adam_update`, torch.optim.AdamW's arithmetic, with
the same finiteness check. None of these classes derives from ``torch.optim.Optimizer``: constructing one
imports ``torch._dynamo``, which costs more than a smoke-scale training job (the measurements are in
:mod:`neurips26.common.optim`). They keep its interface as far as the training code uses it:
``param_groups`` (a list of dicts with ``params`` and the hyper-parameters, ``lr`` set by the schedule),
``state`` (per parameter), ``zero_grad``, ``step`` and a ``state_dict`` / ``load_state_dict`` that
round-trips. :func:`build_optimizer` creates one optimizer per parameter kind, as the repo's
``build_transformer_mixed_optimizer`` does per role.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Callable, Iterable

import torch

from neurips26.common.optim import adam_update

from .directions import (
    NS_COEFFICIENTS,
    adam_direction,
    hybrid_direction,
    inverse_sqrt_psd,
    left_polar_direction,
    muon_direction,
    newton_schulz,
    polar,
    right_polar_direction,
    row_norm_direction,
    sign_direction,
    spectral_direction,
)
from .settings import KINDS, check_group

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
    "OPTIMIZERS",
    "RightPolarGrad",
    "RowNorm",
    "SpectralDescent",
    "build_optimizer",
]
# the directions, importable from here as before the split (theory and tests import some from here)
__all__ += [
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


class _Base:
    """Param groups, per-parameter state, validation, finiteness check and the momentum step shared by the
    optimizers (the part of ``torch.optim.Optimizer`` they use, without importing ``torch._dynamo``)."""

    matrix_only = True

    def __init__(self, params, defaults: dict):
        self.defaults = dict(defaults)
        self.state: defaultdict[torch.Tensor, dict] = defaultdict(dict)
        self.param_groups: list[dict] = []
        groups = list(params)
        if not groups:
            raise ValueError(f"{type(self).__name__} got an empty parameter list")
        if not isinstance(groups[0], dict):
            groups = [{"params": groups}]
        for group in groups:
            self.add_param_group(group)

    def add_param_group(self, param_group: dict) -> None:
        group = dict(param_group)
        params = group["params"]
        group["params"] = [params] if isinstance(params, torch.Tensor) else list(params)
        seen = {id(p) for g in self.param_groups for p in g["params"]}
        for p in group["params"]:
            if not isinstance(p, torch.Tensor) or not p.is_leaf:
                raise ValueError(f"{type(self).__name__} can only optimize leaf tensors")
            if id(p) in seen:
                raise ValueError(f"{type(self).__name__}: a parameter appears in more than one param group")
        for key, value in self.defaults.items():
            group.setdefault(key, value)
        self._validate(group)
        self.param_groups.append(group)

    def _validate(self, group: dict) -> None:
        who = type(self).__name__
        check_group(who, group)
        members = group.get("members")
        if members is not None:
            for p in group["params"]:
                if p.ndim < 1 or p.shape[0] != members:
                    raise ValueError(
                        f"{who}: param group {group.get('name')!r} has {members} members, got a parameter of "
                        f"shape {tuple(p.shape)}"
                    )
        if self.matrix_only:
            for p in group["params"]:
                if p.ndim != 2 + (members is not None):
                    shape = "2-D matrices" if members is None else f"stacks of {members} 2-D matrices"
                    raise ValueError(
                        f"{who} updates {shape} only, got a parameter of shape "
                        f"{tuple(p.shape)} in param group {group.get('name')!r}"
                    )

    def zero_grad(self, set_to_none: bool = True) -> None:
        for group in self.param_groups:
            for p in group["params"]:
                if set_to_none:
                    p.grad = None
                elif p.grad is not None:
                    p.grad.detach_()
                    p.grad.zero_()

    def state_dict(self) -> dict:
        """``torch.optim.Optimizer``'s layout: ``state`` keyed by the parameter's index over all groups,
        ``param_groups`` with those indices in place of the parameters."""
        index: dict[int, int] = {}
        groups = []
        for group in self.param_groups:
            ids = []
            for p in group["params"]:
                index.setdefault(id(p), len(index))
                ids.append(index[id(p)])
            groups.append({**{k: v for k, v in group.items() if k != "params"}, "params": ids})
        state = {
            index[id(p)]: {k: v.clone() if torch.is_tensor(v) else v for k, v in s.items()}
            for p, s in self.state.items()
            if s
        }
        return {"state": state, "param_groups": groups}

    def load_state_dict(self, state_dict: dict) -> None:
        saved = state_dict["param_groups"]
        if len(saved) != len(self.param_groups) or any(
            len(a["params"]) != len(b["params"]) for a, b in zip(saved, self.param_groups)
        ):
            raise ValueError(f"{type(self).__name__}: the saved state has other param groups than this optimizer")
        by_index = {
            i: p for group, old in zip(self.param_groups, saved) for i, p in zip(old["params"], group["params"])
        }
        self.state = defaultdict(dict)
        for i, s in state_dict["state"].items():
            p = by_index[int(i)]
            self.state[p] = {
                k: v.to(p.device, p.dtype) if torch.is_tensor(v) and k != "step" else v for k, v in s.items()
            }
        for group, old in zip(self.param_groups, saved):
            group.update({k: v for k, v in old.items() if k != "params"})

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
        return u * math.sqrt(max(1.0, p.shape[-2] / p.shape[-1]))


class AdamW(_Base):
    """AdamW with torch.optim.AdamW's arithmetic (:func:`neurips26.common.optim.adam_update`: decay
    ``p (1 - lr wd)``, bias-corrected moments, eps added after the square root); any parameter shape."""

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
            by_step: dict[int, list[torch.Tensor]] = {}  # parameters that share a step count update together
            for p in group["params"]:
                if p.grad is None:
                    continue
                state = self.state[p]
                if not state:
                    state["step"] = 0
                    state["exp_avg"] = torch.zeros_like(p)
                    state["exp_avg_sq"] = torch.zeros_like(p)
                state["step"] += 1
                by_step.setdefault(state["step"], []).append(p)
            for step, params in by_step.items():
                adam_update(
                    params,
                    [p.grad for p in params],
                    [self.state[p]["exp_avg"] for p in params],
                    [self.state[p]["exp_avg_sq"] for p in params],
                    step=step,
                    lr=group["lr"],
                    betas=group["betas"],
                    eps=group["eps"],
                    weight_decay=group["weight_decay"],
                )
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

    def __init__(self, optimizers: dict[str, _Base], names: dict[str, list[str]]):
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
    members: int | None = None,
) -> MixedOptimizer:
    """One optimizer per kind of parameter (``KINDS``: hidden, mlp_gate_up, mlp_down, embedding, lm_head, router,
    vector).

    ``assignment[kind]`` is ``{"name": <key of OPTIMIZERS>, "lr": ..., <other constructor arguments>}``;
    ``kind_of(name, param)`` says each trainable parameter's kind. A parameter listed twice (tied weights,
    ``named_parameters(remove_duplicate=False)``) must get the same kind both times. Refused with
    ValueError: an unknown kind or optimizer name, a kind with parameters but no assignment, a non-2-D
    parameter assigned a matrix optimizer, an assignment that is not a dict with ``name``.

    ``members``: the parameters are an ensemble's, stacked along a leading dimension of that size (module
    docstring); ``kind_of`` and the shape checks see one member's slice."""
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
        member = p if members is None else p[0]
        kind = kind_of(name, member)
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
        if opt_name in MATRIX_OPTIMIZERS and member.ndim != 2:
            raise ValueError(
                f"parameter {name!r} of shape {tuple(member.shape)} (kind {kind!r}) cannot be "
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
        group = {"params": params[kind], "name": kind} | ({} if members is None else {"members": members})
        optimizers[kind] = cls([group], **spec)
    if not optimizers:
        raise ValueError("build_optimizer got no trainable parameters")
    return MixedOptimizer(optimizers, names)
