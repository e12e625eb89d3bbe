"""Seeds as a batch dimension (issue 23): S denoisers of one architecture, one per seed, as one module whose
weights carry a leading seed dimension, so that one job trains all seeds of a cell in the same tensor ops.

`SeedBatch(members)` stacks the members' parameters and buffers (``torch.func.stack_module_state``): each
stacked parameter is one leaf of shape (S, ...), so Adam and the EMA (elementwise) update every member by its
own gradient, and the loss of a batched step is the sum of the members' losses. `SeedBatch(z, t)` maps inputs
of shape (S, B, ...) and (S, B) to outputs (S, B, ...), member i on slice i. The JiT transformer and the toy
MLP have explicit batched forwards (every linear layer one ``baddbmm`` over the seed dimension: the forward of
one member is a few matrix products, so the seeds share the per-op cost of a step); other architectures (the
U-Net, which runs at paper scale with one seed per job) go through ``functional_call`` on the member's slice
(one seed) or ``torch.vmap`` over the seeds. A test keeps each explicit forward equal to the module's own.

Members are built by ``neurips26.common.ensemble.build`` (each right after ``torch.manual_seed(seed)``, as a
single-seed run builds its model); `member_state_dict(i)` gives member i's weights under the single model's
keys, so stored models load into ``models.build_model`` as before.
"""

from __future__ import annotations

import copy
from collections.abc import Sequence

import torch
import torch.nn.functional as F
from torch import nn
from torch.func import functional_call, stack_module_state

from neurips26.common.dit import modulate, timestep_embedding
from neurips26.pred_loss_space.models import JiTTiny, MLPToy


class SeedBatch(nn.Module):
    """S members of one architecture with their parameters and buffers stacked along a leading seed dimension."""

    def __init__(self, members: Sequence[nn.Module]):
        super().__init__()
        if not members:
            raise ValueError("a seed batch needs at least one member")
        kinds = {type(m) for m in members}
        if len(kinds) != 1:
            raise ValueError(
                f"the members of a seed batch share one architecture, got {sorted(k.__name__ for k in kinds)}"
            )
        params, buffers = stack_module_state(list(members))
        self.size = len(members)
        self.names = list(params)
        self.stacked = nn.ParameterList(nn.Parameter(params[name].detach()) for name in self.names)
        self.buffer_names = list(buffers)
        persistent = set(members[0].state_dict())
        for i, name in enumerate(self.buffer_names):
            self.register_buffer(f"buffer_{i}", buffers[name], persistent=name in persistent)
        self._template = [copy.deepcopy(members[0]).to("meta")]  # in a list: not a submodule, no parameters
        self._keys = list(members[0].state_dict())

    @property
    def template(self) -> nn.Module:
        """A member's module on the meta device: its structure and settings, not its weights."""
        return self._template[0]

    def train(self, mode: bool = True) -> SeedBatch:
        self.template.train(mode)
        return super().train(mode)

    def tensors(self) -> dict[str, torch.Tensor]:
        """Every stacked parameter and buffer under the member's name."""
        found = dict(zip(self.names, self.stacked))
        found.update({name: getattr(self, f"buffer_{i}") for i, name in enumerate(self.buffer_names)})
        return found

    def member_state_dict(self, index: int, state: dict[str, torch.Tensor] | None = None) -> dict[str, torch.Tensor]:
        """Member `index`'s weights with the keys of the single model's state dict (its persistent tensors),
        read from this module's `state` (a state dict of it, e.g. EMA weights; default: the current weights)."""
        if not 0 <= index < self.size:
            raise IndexError(f"member {index} of a seed batch of {self.size}")
        state = self.state_dict() if state is None else state
        own = {name: f"stacked.{i}" for i, name in enumerate(self.names)}
        own.update({name: f"buffer_{i}" for i, name in enumerate(self.buffer_names)})
        return {key: state[own[key]][index].detach().clone() for key in self._keys}

    def forward(self, z: torch.Tensor, t: torch.Tensor) -> torch.Tensor:
        """Member i's output on z[i] (S, B, ...) at noise levels t[i] (S, B)."""
        if z.shape[0] != self.size or t.shape[:2] != z.shape[:2]:
            raise ValueError(
                f"a seed batch of {self.size} needs z of shape ({self.size}, B, ...) and t of shape ({self.size}, B), "
                f"got {tuple(z.shape)} and {tuple(t.shape)}"
            )
        tensors, s, b = self.tensors(), z.shape[0], z.shape[1]
        if isinstance(self.template, JiTTiny):
            out = jit_forward(self.template, tensors, z.flatten(0, 1), t.flatten(0, 1), s)
        elif isinstance(self.template, MLPToy):
            out = mlp_forward(self.template, tensors, z.flatten(0, 1), t.flatten(0, 1), s)
        else:
            return self._generic(tensors, z, t)
        return out.reshape(s, b, *out.shape[1:])

    def _generic(self, tensors: dict[str, torch.Tensor], z: torch.Tensor, t: torch.Tensor) -> torch.Tensor:
        """Any architecture: the member's module on its slice of the weights (one seed), or vmapped over seeds."""
        if self.size == 1:
            return functional_call(self.template, {k: v[0] for k, v in tensors.items()}, (z[0], t[0]))[None]

        def member(weights, z_i, t_i):
            return functional_call(self.template, weights, (z_i, t_i))

        return torch.vmap(member)(tensors, z, t)


def linear(tensors: dict[str, torch.Tensor], name: str, x: torch.Tensor, seeds: int) -> torch.Tensor:
    """nn.Linear `name` of every member on its rows of x: x (S * N, ..., in) with member i's rows i N .. (i+1) N - 1."""
    weight, bias = tensors[f"{name}.weight"], tensors[f"{name}.bias"]
    flat = x.reshape(seeds, -1, x.shape[-1])
    out = torch.baddbmm(bias.unsqueeze(1), flat, weight.transpose(1, 2))
    return out.reshape(*x.shape[:-1], weight.shape[1])


def jit_forward(model: JiTTiny, tensors: dict[str, torch.Tensor], z: torch.Tensor, t: torch.Tensor, seeds: int):
    """`JiTTiny.forward` (with common.dit's DiTBlock and final layer) of `seeds` members on z (S B, C, H, W) and
    t (S B,), member-major; `model` gives the structure, `tensors` the stacked weights."""
    tokens = model.patchify(z)
    h = linear(tensors, "embed", tokens, seeds)
    h = (h.reshape(seeds, -1, *h.shape[1:]) + tensors["pos"]).reshape(h.shape)
    time = model.time.net
    c = linear(
        tensors,
        "time.net.2",
        time[1](linear(tensors, "time.net.0", timestep_embedding(t, model.time.freq_dim), seeds)),
        seeds,
    )
    for i, block in enumerate(model.blocks):
        name = f"blocks.{i}"
        shift1, scale1, gate1, shift2, scale2, gate2 = linear(tensors, f"{name}.ada.1", block.ada[0](c), seeds).chunk(
            6, dim=-1
        )
        h = h + gate1[:, None] * _attention(block, tensors, name, modulate(block.norm1(h), shift1, scale1), seeds)
        hidden = block.mlp[1](linear(tensors, f"{name}.mlp.0", modulate(block.norm2(h), shift2, scale2), seeds))
        h = h + gate2[:, None] * linear(tensors, f"{name}.mlp.2", hidden, seeds)
    shift, scale = linear(tensors, "ada_out.1", model.ada_out[0](c), seeds).chunk(2, dim=-1)
    return model.unpatchify(linear(tensors, "head", modulate(model.norm_out(h), shift, scale), seeds))


def _attention(block, tensors: dict[str, torch.Tensor], name: str, x: torch.Tensor, seeds: int) -> torch.Tensor:
    """DiTBlock.attention with the members' own qkv and proj weights."""
    b, n, c = x.shape
    q, k, v = (
        linear(tensors, f"{name}.qkv", x, seeds).reshape(b, n, 3, block.heads, c // block.heads).permute(2, 0, 3, 1, 4)
    )
    out = v if n == 1 else F.scaled_dot_product_attention(q, k, v)
    return linear(tensors, f"{name}.proj", out.transpose(1, 2).reshape(b, n, c), seeds)


def mlp_forward(model: MLPToy, tensors: dict[str, torch.Tensor], z: torch.Tensor, t: torch.Tensor, seeds: int):
    """`MLPToy.forward` of `seeds` members on z (S B, D) and t (S B,), member-major."""
    h = torch.cat([z, timestep_embedding(t, model.t_dim).to(z.dtype)], dim=-1)
    for index, layer in enumerate(model.net):
        h = linear(tensors, f"net.{index}", h, seeds) if isinstance(layer, nn.Linear) else layer(h)
    return h
