"""Adam (Kingma and Ba, 2015) with exactly torch.optim.Adam's update, for short CPU training jobs.

Constructing any torch.optim optimiser imports torch._dynamo (about 800 modules, 1.7 s on our CPUs),
which is most of a smoke-scale training job; this class performs the same arithmetic (L2-free Adam,
bias-corrected, eps added after the square root) with foreach kernels and never touches torch._dynamo.
Its state_dict()/load_state_dict() round-trip, so checkpoints resume bit-identically.
"""

from __future__ import annotations

import math
from collections.abc import Iterable

import torch


class Adam:
    def __init__(
        self,
        params: Iterable[torch.nn.Parameter],
        lr: float,
        betas: tuple[float, float] = (0.9, 0.999),
        eps: float = 1e-8,
    ):
        self.params = [p for p in params if p.requires_grad]
        if not self.params:
            raise ValueError("Adam got no parameters that require gradients")
        if not lr > 0 or not eps > 0 or not all(0 <= beta < 1 for beta in betas):
            raise ValueError(f"Adam needs lr > 0, eps > 0 and betas in [0, 1), got lr={lr}, eps={eps}, betas={betas}")
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
        """One Adam update of every parameter that has a gradient (the order of torch.optim.Adam's ops)."""
        live = [i for i, p in enumerate(self.params) if p.grad is not None]
        if not live:
            return
        params = [self.params[i] for i in live]
        grads = [self.params[i].grad for i in live]
        exp_avg = [self.exp_avg[i] for i in live]
        exp_avg_sq = [self.exp_avg_sq[i] for i in live]
        beta1, beta2 = self.betas
        self.step_count += 1
        torch._foreach_lerp_(exp_avg, grads, 1 - beta1)
        torch._foreach_mul_(exp_avg_sq, beta2)
        torch._foreach_addcmul_(exp_avg_sq, grads, grads, 1 - beta2)
        step_size = self.lr / (1 - beta1**self.step_count)
        bias_correction2_sqrt = math.sqrt(1 - beta2**self.step_count)
        denom = torch._foreach_sqrt(exp_avg_sq)
        torch._foreach_div_(denom, bias_correction2_sqrt)
        torch._foreach_add_(denom, self.eps)
        torch._foreach_addcdiv_(params, exp_avg, denom, -step_size)

    def state_dict(self) -> dict:
        return {
            "step": self.step_count,
            "lr": self.lr,
            "betas": self.betas,
            "eps": self.eps,
            "exp_avg": [t.clone() for t in self.exp_avg],
            "exp_avg_sq": [t.clone() for t in self.exp_avg_sq],
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
