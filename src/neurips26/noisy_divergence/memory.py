r"""Device memory of one training step of paper 09, counted by running the step's own code on fake tensors.

:func:`step_memory` builds the ensemble of one job's shape with fake parameters (``FakeTensorMode``: shapes and
dtypes, no storage), and runs what :func:`.training.train_ensemble` runs on a diagnostic step, the heaviest kind:
the forward and backward of two micro-batches (the second is the first with gradients already held, the steady
state of accumulation; further ones repeat it), the per-block gradient norms, per-member clipping, the copy of the
weights for the update norm, AdamW's step, the float32 explicit-attention probe and each member's noisy probe (with
the attention mass on noise keys), the noise-embedding norm ratio, and the checkpoint's copies of weights and AdamW
state (the common loop clones them on the device before writing). A dispatch mode adds up the bytes of every
storage an operation creates and subtracts them when the storage is freed; the peak of that sum is the count.

The fake tensors live on the CPU: bf16 autocast is CPU autocast and SDPA is its CPU fused kernel, standing in for
their CUDA versions, which hold the same tensors (bfloat16 copies of the weights and activations, float32 loss,
no T x T scores). What the count leaves out: the CUDA context and kernels' workspaces (about 1 GB), and the caching
allocator's fragmentation; a plan should keep about 10% of the card free beside the count.
"""

from __future__ import annotations

import weakref
from dataclasses import dataclass, replace

import torch
from torch._subclasses.fake_tensor import FakeTensorMode
from torch.utils._python_dispatch import TorchDispatchMode
from torch.utils._pytree import tree_leaves

from neurips26.common.ensemble import Ensemble, StackedWeights, clip_grad_norm_per_member

from .model import LM, LMConfig
from .training import (
    TrainSettings,
    accumulate_gradients,
    block_gradient_norms,
    embedding_noise_ratio,
    noisy_probe_statistics,
    optimizers_of,
    probe_statistics,
)

__all__ = ["StepMemory", "step_memory"]

GB = 1e9


@dataclass(frozen=True)
class StepMemory:
    """Bytes on the device: the float32 weights, gradients and AdamW state, and the step's peak (everything)."""

    params: int
    grads: int
    optimizer: int
    peak: int

    def gb(self) -> dict[str, float]:
        return {name: getattr(self, name) / GB for name in ("params", "grads", "optimizer", "peak")}


class _LiveBytes(TorchDispatchMode):
    """The bytes of the storages alive (created under the mode or passed to ``track``) and their peak."""

    def __init__(self):
        super().__init__()
        self.live = self.peak = 0
        self._refs: dict[int, weakref.ref] = {}

    def track(self, tensor: torch.Tensor) -> None:
        storage = tensor.untyped_storage()
        key, size = storage._cdata, storage.nbytes()
        if key in self._refs:
            return

        def freed(_, key=key, size=size):
            self.live -= size
            self._refs.pop(key, None)

        self._refs[key] = weakref.ref(storage, freed)
        self.live += size
        self.peak = max(self.peak, self.live)

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        out = func(*args, **(kwargs or {}))
        for value in tree_leaves(out):
            if isinstance(value, torch.Tensor):
                self.track(value)
        return out


def step_memory(config: LMConfig, settings: TrainSettings, members: int = 1) -> StepMemory:
    """Count the device memory of one diagnostic training step of ``members`` models of ``config`` under
    ``settings`` (module docstring)."""
    s = replace(settings, steps=max(settings.steps, 2), warmup=0)
    with torch.device("meta"):
        ens = Ensemble([LM(replace(config, seed=i)) for i in range(members)])
    with FakeTensorMode():
        ens.params = {n: torch.empty(p.shape, dtype=p.dtype).requires_grad_() for n, p in ens.params.items()}
        ens.buffers = {n: torch.empty(b.shape, dtype=b.dtype) for n, b in ens.buffers.items()}
        tracker = _LiveBytes()
        for tensor in (*ens.params.values(), *ens.buffers.values()):
            tracker.track(tensor)
        params = sum(p.numel() * p.element_size() for p in ens.params.values())
        with tracker:
            optimizers = optimizers_of(ens.params, s)
            tokens = torch.zeros(members, s.batch_size, s.seq_len + 1, dtype=torch.int64)
            probe = torch.zeros(s.micro, s.seq_len, dtype=torch.int64)
            alive = torch.ones(members, dtype=torch.bool)
            two = replace(s, batch_size=s.micro * min(2, s.accumulation))  # the steady state of accumulation
            accumulate_gradients(ens, tokens[:, : two.batch_size, :-1], tokens[:, : two.batch_size, 1:], alive, two)
            block_gradient_norms(ens.params, members, config.n_layers)
            clip_grad_norm_per_member(ens.params.values(), s.grad_clip)
            before = {n: p.detach().clone() for n, p in ens.params.items()}
            for opt in optimizers.values():
                opt.step()
            with torch.no_grad():
                update = sum(
                    (p.detach() - before[n]).reshape(members, -1).double().square().sum(1)
                    for n, p in ens.params.items()
                )
                del before, update
                probe_statistics(ens, probe)
                noisy = torch.zeros(members, s.micro, s.seq_len, dtype=torch.int64)
                noisy_probe_statistics(ens, noisy, torch.zeros(members, s.micro, s.seq_len, dtype=torch.bool))
                embedding_noise_ratio(
                    ens.params["embed.weight"], torch.zeros(members, config.vocab_size, dtype=torch.bool)
                )
            saved = [StackedWeights(ens.params).state_dict(), *(opt.state_dict() for opt in optimizers.values())]
            del saved
        return StepMemory(params=params, grads=params, optimizer=2 * params, peak=tracker.peak)
