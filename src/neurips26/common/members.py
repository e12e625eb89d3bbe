"""Every member of a stacked ensemble (``common.ensemble.Ensemble``) called on its own slice of the arguments: under
``torch.vmap`` in one batched call, or member after member as the members' architecture on views of the stacked
weights (``functional_call``; each member then does a single-seed run's arithmetic, which on a CPU is as fast as
vmap for small convolutional networks). The seed-batched trainers call their members through it (paper 03's
``anadiffusion.training``; paper 04's ``bird.training`` has the same loop)."""

from __future__ import annotations

import torch
from torch import nn
from torch.func import functional_call

from neurips26.common.ensemble import Ensemble

__all__ = ["call_members"]


def call_members(ens: Ensemble, model: nn.Module, *args, in_dims: tuple | None = None, vectorize: bool = False):
    """The outputs of every member of `ens`, stacked along a leading member dimension (a tuple output stacked per
    element). Member i gets ``args[j][i]`` where ``in_dims[j]`` is 0 and ``args[j]`` whole where it is None (default:
    0 for every argument). With `vectorize` and more than one member, one vmapped call (``ens(*args, in_dims=...)``);
    otherwise `model` (the members' architecture, any device) is called on member i's weights, one member at a
    time."""
    dims = tuple(in_dims) if in_dims is not None else (0,) * len(args)
    if len(dims) != len(args) or any(d not in (0, None) for d in dims):
        raise ValueError(f"in_dims {in_dims!r}: need 0 or None for each of the {len(args)} arguments")
    if vectorize and ens.size > 1:
        return ens(*args, in_dims=dims)
    weights = {**ens.params, **ens.buffers}
    outs = []
    for i in range(ens.size):
        member = {name: value[i] for name, value in weights.items()}
        outs.append(functional_call(model, member, tuple(a[i] if d == 0 else a for a, d in zip(args, dims))))
    if isinstance(outs[0], tuple):
        return tuple(torch.stack(parts) for parts in zip(*outs))
    return torch.stack(outs)
