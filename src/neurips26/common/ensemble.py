"""Seeds as a batch dimension: S copies of one small model trained in one process as a batched ensemble.

Each member is built right after ``torch.manual_seed(seed)`` (``build``), so its initialisation is what a
single-seed run that seeds torch and then builds the model gets, whatever the other seeds are. ``Ensemble``
stacks the members' parameters along a leading seed dimension (``torch.func.stack_module_state``) and runs them
with ``vmap(functional_call)``. One torch.optim optimizer over ``ens.params`` updates every member by its own
gradient (Adam, AdamW and SGD act elementwise); the loss of a batched step is the sum of the members' losses,
so that each member's gradient is the gradient of its own loss. Clip gradients per member
(``clip_grad_norm_per_member``): a norm over all members would mix them. Randomness inside a vmapped forward
(dropout) cannot use a member's own generator: draw the masks outside, per member (``seed_generators``), and
pass them in.
"""

from __future__ import annotations

import copy
import itertools
from collections.abc import Callable, Iterable, Sequence

import torch
from torch import nn
from torch.func import functional_call, stack_module_state


def build(factory: Callable[[], nn.Module], seeds: Sequence[int]) -> list[nn.Module]:
    """One model per seed, each built by ``factory()`` right after ``torch.manual_seed(seed)``; the global
    random state is left as it was."""
    if not seeds:
        raise ValueError("an ensemble needs at least one seed")
    if len(set(seeds)) != len(seeds):
        raise ValueError(f"seeds repeat: {list(seeds)}")
    models = []
    for seed in seeds:
        with torch.random.fork_rng(devices=[]):
            torch.manual_seed(int(seed))
            models.append(factory())
    return models


def seed_generators(seeds: Sequence[int], device: str | torch.device = "cpu") -> list[torch.Generator]:
    """One generator per seed (data order, masks, noise), each seeded with its seed."""
    return [torch.Generator(device=device).manual_seed(int(seed)) for seed in seeds]


class Ensemble:
    """S models of one architecture as stacked parameters; ``ens(*args)`` maps every member over its slice of
    the inputs' leading dimension (``in_dims``: 0 per argument by default, None for an argument shared by all)."""

    def __init__(self, models: Sequence[nn.Module]):
        if not models:
            raise ValueError("an ensemble needs at least one model")
        kinds = {type(m) for m in models}
        if len(kinds) != 1:
            raise ValueError(
                f"members of one ensemble must share one architecture, got {sorted(k.__name__ for k in kinds)}"
            )
        params, buffers = stack_module_state(list(models))
        self.params: dict[str, torch.Tensor] = params
        self.buffers: dict[str, torch.Tensor] = buffers
        self.size = len(models)
        self._template = copy.deepcopy(models[0]).to("meta")

    def parameters(self) -> list[torch.Tensor]:
        return list(self.params.values())

    def train(self, mode: bool = True) -> Ensemble:
        self._template.train(mode)
        return self

    def eval(self) -> Ensemble:
        return self.train(False)

    def __call__(self, *args, in_dims: tuple | int = 0, randomness: str = "error", **kwargs):
        def member(params, buffers, *member_args):
            return functional_call(self._template, (params, buffers), member_args, kwargs)

        dims = (0, 0, *(in_dims if isinstance(in_dims, tuple) else (in_dims,) * len(args)))
        return torch.vmap(member, in_dims=dims, randomness=randomness)(self.params, self.buffers, *args)

    def state_dict(self, index: int) -> dict[str, torch.Tensor]:
        """Member `index`'s weights, with the keys of the single model's state dict (non-persistent buffers left
        out, as ``nn.Module.state_dict`` leaves them out, so that a strict ``load_state_dict`` accepts it)."""
        if not 0 <= index < self.size:
            raise IndexError(f"member {index} of an ensemble of {self.size}")
        keys = self._template.state_dict().keys()
        stacked = {**self.params, **self.buffers}
        return {name: stacked[name][index].detach().clone() for name in keys if name in stacked}

    def module(self, index: int) -> nn.Module:
        """Member `index` as an ordinary model (on the CPU, with its weights)."""
        model = copy.deepcopy(self._template).to_empty(device=next(iter(self.params.values())).device)
        stacked = {**self.params, **self.buffers}
        with torch.no_grad():
            for name, tensor in itertools.chain(model.named_parameters(), model.named_buffers()):
                tensor.copy_(stacked[name][index])
        return model


def clip_grad_norm_per_member(tensors: Iterable[torch.Tensor], max_norm: float) -> torch.Tensor:
    """Clip each member's gradient (the slices of index i of every tensor) to norm `max_norm`, as
    ``torch.nn.utils.clip_grad_norm_`` does for one model; returns the members' norms before clipping."""
    grads = [t.grad for t in tensors if t.grad is not None]
    if not grads:
        return torch.zeros(0)
    size = grads[0].shape[0]
    norms = torch.linalg.vector_norm(
        torch.stack([torch.linalg.vector_norm(g.reshape(size, -1), dim=1) for g in grads]), dim=0
    )
    scale = torch.clamp(max_norm / (norms + 1e-6), max=1.0)
    for g in grads:
        g.mul_(scale.reshape(size, *([1] * (g.dim() - 1))))
    return norms


class StackedWeights:
    """An ensemble's stacked weights as one checkpointed object of the common loop: ``state_dict`` copies them,
    ``load_state_dict`` restores them in place, so that the optimizers holding them keep working."""

    def __init__(self, params: dict[str, torch.Tensor]):
        self.params = params

    def state_dict(self) -> dict[str, torch.Tensor]:
        """The weights, copied to the host (a checkpoint of a GPU job adds no copy on the device)."""
        return {name: p.detach().to("cpu", copy=True) for name, p in self.params.items()}

    @torch.no_grad()
    def load_state_dict(self, state: dict[str, torch.Tensor]) -> None:
        if set(state) != set(self.params):
            raise ValueError(f"checkpointed weights {sorted(state)} are not the ensemble's {sorted(self.params)}")
        for name, p in self.params.items():
            p.copy_(state[name])
