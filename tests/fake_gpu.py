"""A fake accelerator for tests of device placement: the meta device, whose tensors have shapes but no values.

An operation mixing a meta tensor with a CPU tensor (other than a 0-d scalar) raises, as it would with a
CUDA tensor, so a training or sampling function run under `fake_gpu()` fails where a GPU run would crash.
Reading a value off the device (`.item()`, `float()`, `.cpu()`, `.numpy()` after `.cpu()`) is answered with
zeros, as a GPU run would copy values back; what is tested is placement, not numbers.

Inside the block, every module's forward checks that its own parameters and its tensor inputs are on the fake
device, and `loop.run_loop` checks that every module it trains is: code that keeps its model on the CPU
(ignoring `loop.job_device()`) fails even when nothing mixes.
"""

from __future__ import annotations

import os
from contextlib import contextmanager

import torch
from torch.utils._python_dispatch import TorchDispatchMode

from neurips26.common import loop
from neurips26.common.loop import DEVICE_ENV

aten = torch.ops.aten


class _ValuesOffMeta(TorchDispatchMode):
    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        first = args[0] if args else None
        on_meta = torch.is_tensor(first) and first.device.type == "meta"
        if on_meta and func in (aten._local_scalar_dense.default,):
            return False if first.dtype == torch.bool else (0 if not first.is_floating_point() else 0.0)
        if (
            on_meta
            and func is aten._to_copy.default
            and kwargs.get("device") is not None
            and torch.device(kwargs["device"]).type == "cpu"
        ):
            return torch.zeros(first.shape, dtype=kwargs.get("dtype") or first.dtype)
        return func(*args, **kwargs)


def _on_meta(module: torch.nn.Module, inputs: tuple) -> None:
    for name, param in module.named_parameters(recurse=False):
        if param.device.type != "meta":
            raise RuntimeError(f"{type(module).__name__}.{name} is on {param.device}, not on the job's device")
    for value in inputs:
        if torch.is_tensor(value) and value.dim() > 0 and value.device.type != "meta":
            raise RuntimeError(f"{type(module).__name__} got an input on {value.device}, not on the job's device")


@contextmanager
def fake_gpu():
    """Run the block with NEURIPS26_DEVICE=meta (loop.job_device() answers meta) and values read as zeros."""
    previous = os.environ.get(DEVICE_ENV)
    os.environ[DEVICE_ENV] = "meta"
    run_loop = loop.run_loop

    def checked_run_loop(step_fn, steps, state, *args, **kwargs):
        for name, value in state.items():
            if isinstance(value, torch.nn.Module):
                _on_meta(value, ())
                for param in value.parameters():
                    if param.device.type != "meta":
                        raise RuntimeError(f"{name} trains on {param.device}, not on the job's device")
        return run_loop(step_fn, steps, state, *args, **kwargs)

    hook = torch.nn.modules.module.register_module_forward_pre_hook(_on_meta)
    loop.run_loop = checked_run_loop
    try:
        with _ValuesOffMeta():
            yield torch.device("meta")
    finally:
        hook.remove()
        loop.run_loop = run_loop
        if previous is None:
            os.environ.pop(DEVICE_ENV, None)
        else:
            os.environ[DEVICE_ENV] = previous
