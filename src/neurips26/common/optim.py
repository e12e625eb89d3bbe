"""The one optimiser family of the training jobs: Adam and AdamW (Kingma and Ba, 2015; Loshchilov and
Hutter, 2019) with torch.optim's arithmetic, and an exponential learning-rate decay.

Policy (measured on the 2-core CPU machine the quick runs use, torch 2.13, best of 3 under load):
constructing any torch.optim optimiser, a subclass of ``torch.optim.Optimizer`` included, imports
``torch._dynamo`` (822 more modules: 1945 loaded instead of 1123). A process that imports torch takes
2.9 s; one that imports torch and constructs ``torch.optim.AdamW`` takes 5.3 s, so construction adds
about 2.4 s (``-X importtime`` puts ``torch._dynamo`` alone at 5.8 s under load). Smoke-scale training
jobs take 3.1-7.0 s of CPU time in all (bbo_pile ``train`` 4.3 s, ``train_seed`` 3.5 s, symm_optim
``train`` 6.8-7.0 s, seqrec_audit ``train`` 4.4-5.1 s, bird ``train`` 3.1 s, the ``cpu_time`` column of
``results/smoke/*/benchmarks``), about 3 s of it importing torch: constructing a torch.optim optimiser
would cost more than a smoke job's compute. At quick scale the jobs take 19-420 s (``s`` column of
``results/quick/*/benchmarks``: symm_optim ``train`` 19-221 s, bbo_pile ``train`` 30-250 s, seqrec_audit
``train`` 40-255 s), where 2.4 s is 1-12 %. So every training job uses these in-house classes, which
construct in 2 ms and never import ``torch._dynamo``; the torch.optim classes appear only in tests, as
the reference the in-house ones are checked against.

Arithmetic (the order of torch.optim's foreach path, ``torch/optim/adam.py: _multi_tensor_adam``):
for AdamW the decoupled decay ``p <- p (1 - lr wd)`` first, then ``m <- lerp(m, g, 1 - beta1)``,
``v <- beta2 v + (1 - beta2) g g``, ``p <- p - lr / (1 - beta1^t) * m / (sqrt(v) / sqrt(1 - beta2^t) + eps)``,
with foreach kernels (on CPU they run the same per-tensor kernels as ``foreach=False``). One
deliberate difference: ``sqrt(1 - beta2^t)`` is ``math.sqrt`` where torch writes ``** 0.5``; the two
differ in the last bit for about 0.1 % of (beta2, t) pairs, so parameters agree with torch.optim to
float rounding (~1e-7 relative), bitwise where no such step occurs. ``math.sqrt`` is kept so that every
model trained with this Adam before (and its checkpoints) stays bit-identical; amortized_ot, which trained
with torch.optim.Adam before, moved onto this class and its Meta-OT fits (2000 steps at quick scale, first
such step t = 1270 for beta2 = 0.999) can differ from the torch.optim runs in the last bits. A second
difference: one step count serves all parameters, where torch counts the steps of each parameter; they
agree while every parameter gets a gradient at every step, and differ for a parameter that skips steps
(its bias correction uses the shared count). Kept because the papers that trained with this class before
(amortix, whose policy has several heads) must keep their numbers.

:class:`ExponentialDecay` multiplies the learning rate by ``gamma`` per call of ``step()``, as
``torch.optim.lr_scheduler.ExponentialLR`` does (its chainable form ``lr <- lr * gamma``).

Every class's ``state_dict()`` / ``load_state_dict()`` round-trip (tensors and the learning rate), so a
checkpointed run resumes bit-identically.
"""

from __future__ import annotations

import math
from collections.abc import Iterable

import torch

__all__ = ["Adam", "AdamW", "ExponentialDecay", "adam_update"]


@torch.no_grad()
def adam_update(
    params: list[torch.Tensor],
    grads: list[torch.Tensor],
    exp_avg: list[torch.Tensor],
    exp_avg_sq: list[torch.Tensor],
    *,
    step: int,
    lr: float,
    betas: tuple[float, float],
    eps: float,
    weight_decay: float = 0.0,
) -> None:
    """Step ``step`` (counted from 1) of AdamW on parameters sharing a step count, in place (Adam when
    ``weight_decay`` is 0): torch.optim.AdamW's foreach arithmetic, in its order (module docstring)."""
    beta1, beta2 = betas
    if weight_decay != 0:
        torch._foreach_mul_(params, 1 - lr * weight_decay)
    torch._foreach_lerp_(exp_avg, grads, 1 - beta1)
    torch._foreach_mul_(exp_avg_sq, beta2)
    torch._foreach_addcmul_(exp_avg_sq, grads, grads, 1 - beta2)
    step_size = lr / (1 - beta1**step)
    bias_correction2_sqrt = math.sqrt(1 - beta2**step)
    denom = torch._foreach_sqrt(exp_avg_sq)
    torch._foreach_div_(denom, bias_correction2_sqrt)
    torch._foreach_add_(denom, eps)
    torch._foreach_addcdiv_(params, exp_avg, denom, -step_size)


class Adam:
    """Adam without weight decay (``torch.optim.Adam(params, lr, betas, eps)``); ``lr`` may be changed
    between steps (a schedule sets ``optimiser.lr``)."""

    def __init__(
        self,
        params: Iterable[torch.nn.Parameter],
        lr: float,
        betas: tuple[float, float] = (0.9, 0.999),
        eps: float = 1e-8,
    ):
        self.params = [p for p in params if p.requires_grad]
        if not self.params:
            raise ValueError(f"{type(self).__name__} got no parameters that require gradients")
        if not lr > 0 or not eps > 0 or not all(0 <= beta < 1 for beta in betas):
            raise ValueError(
                f"{type(self).__name__} needs lr > 0, eps > 0 and betas in [0, 1), got lr={lr}, eps={eps}, "
                f"betas={betas}"
            )
        self.lr, self.betas, self.eps = lr, tuple(betas), eps
        self.step_count = 0
        self.exp_avg = [torch.zeros_like(p) for p in self.params]
        self.exp_avg_sq = [torch.zeros_like(p) for p in self.params]

    def zero_grad(self, set_to_none: bool = True) -> None:
        for p in self.params:
            if set_to_none:
                p.grad = None
            elif p.grad is not None:
                p.grad.zero_()

    @torch.no_grad()
    def step(self) -> None:
        """One update of every parameter that has a gradient (see :func:`adam_update`)."""
        live = [i for i, p in enumerate(self.params) if p.grad is not None]
        if not live:
            return
        self.step_count += 1
        adam_update(
            [self.params[i] for i in live],
            [self.params[i].grad for i in live],
            [self.exp_avg[i] for i in live],
            [self.exp_avg_sq[i] for i in live],
            step=self.step_count,
            lr=self.lr,
            betas=self.betas,
            eps=self.eps,
            weight_decay=self._weight_decay(),
        )

    def _weight_decay(self) -> float:
        return 0.0

    def state_dict(self) -> dict:
        return {
            "step": self.step_count,
            "lr": self.lr,
            "betas": self.betas,
            "eps": self.eps,
            # copied to the host: a checkpoint of a GPU job adds no copy of the moments on the device
            "exp_avg": [t.detach().to("cpu", copy=True) for t in self.exp_avg],
            "exp_avg_sq": [t.detach().to("cpu", copy=True) for t in self.exp_avg_sq],
        }

    def load_state_dict(self, state: dict) -> None:
        if len(state["exp_avg"]) != len(self.params):
            raise ValueError(
                f"optimiser state holds {len(state['exp_avg'])} tensors, the model has "
                f"{len(self.params)} parameters: it belongs to another model"
            )
        self.step_count = int(state["step"])
        self.lr = state["lr"]  # a decayed learning rate resumes where it was
        for mine, saved in zip(self.exp_avg + self.exp_avg_sq, state["exp_avg"] + state["exp_avg_sq"]):
            mine.copy_(saved)


class AdamW(Adam):
    """AdamW (``torch.optim.AdamW(params, lr, betas, eps, weight_decay)``): Adam after the decoupled
    decay ``p <- p (1 - lr wd)`` of every parameter that has a gradient, at that step's ``lr``."""

    def __init__(
        self,
        params: Iterable[torch.nn.Parameter],
        lr: float,
        betas: tuple[float, float] = (0.9, 0.999),
        eps: float = 1e-8,
        weight_decay: float = 1e-2,
    ):
        super().__init__(params, lr, betas, eps)
        if not weight_decay >= 0:
            raise ValueError(f"AdamW needs weight_decay >= 0, got {weight_decay}")
        self.weight_decay = weight_decay

    def _weight_decay(self) -> float:
        return self.weight_decay

    def state_dict(self) -> dict:
        return {**super().state_dict(), "weight_decay": self.weight_decay}


class ExponentialDecay:
    """``lr <- lr * gamma`` at each ``step()`` (call it after the optimiser's step, as with
    ``torch.optim.lr_scheduler.ExponentialLR``); ``last_epoch`` counts the calls."""

    def __init__(self, optimiser: Adam, gamma: float):
        if not 0 < gamma <= 1:
            raise ValueError(f"ExponentialDecay needs gamma in (0, 1], got {gamma}")
        self.optimiser, self.gamma = optimiser, gamma
        self.last_epoch = 0

    def step(self) -> None:
        self.last_epoch += 1
        self.optimiser.lr = self.optimiser.lr * self.gamma

    def get_last_lr(self) -> float:
        return self.optimiser.lr

    def state_dict(self) -> dict:
        return {"gamma": self.gamma, "last_epoch": self.last_epoch}

    def load_state_dict(self, state: dict) -> None:
        self.gamma, self.last_epoch = state["gamma"], int(state["last_epoch"])
