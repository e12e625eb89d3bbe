"""Tensor memory and FLOPs of training steps, counted by shape: what a job would hold on its device.

CPU torch keeps no allocator peak, so the count follows storages instead: a dispatch mode records the bytes of
every storage an operation creates and drops it when the storage is freed; the storages alive when counting
starts (parameters, optimizer state, data already on the device) are counted from the start. The peak is the
most bytes alive at once. It works on any device, the meta device included (no values are computed there), so a
step at a real shape can be counted on a machine that could not hold it. FLOPs come from torch's own
`FlopCounterMode` (matrix products and convolutions, forward and backward).

The rehearsal (tools/rehearse.py) sets NEURIPS26_TENSOR_MEMORY to a folder: the common loop then counts its first
steps and writes one JSON per job there (`record`), named after the job's log file.
"""

from __future__ import annotations

import gc
import json
import os
import warnings
from pathlib import Path

import torch
from torch.multiprocessing.reductions import StorageWeakRef
from torch.utils._python_dispatch import TorchDispatchMode
from torch.utils._pytree import tree_leaves

__all__ = ["ENV", "StepCounter", "TensorMemory", "record", "storage_bytes"]

ENV = "NEURIPS26_TENSOR_MEMORY"
JOB_LOG_ENV = "NEURIPS26_JOB_LOG"  # set by runtime.start_job: names the job's record


def storage_bytes(tensors) -> int:
    """Bytes of the distinct storages behind `tensors` (views share their base's storage)."""
    seen: dict[int, int] = {}
    for tensor in tensors:
        if torch.is_tensor(tensor):
            storage = tensor.untyped_storage()
            seen[StorageWeakRef(storage).cdata] = storage.nbytes()
    return sum(seen.values())


class TensorMemory(TorchDispatchMode):
    """Bytes of tensor storage alive on `device` (all devices when None): `current` and its `peak`.

    Storages that exist when the mode is entered are counted if reachable from `resident` (modules, optimizers,
    tensors) or, with `scan=True`, from every live tensor the garbage collector knows.
    """

    def __init__(self, device: str | None = None, resident=(), scan: bool = False):
        super().__init__()
        self.device = device
        self.live: dict[int, tuple[StorageWeakRef, int]] = {}
        self.current = self.peak = self.resident = 0
        self._resident, self._scan = resident, scan

    def _wanted(self, tensor) -> bool:
        return torch.is_tensor(tensor) and (self.device is None or tensor.device.type == self.device)

    def _add(self, tensor) -> None:
        storage = tensor.untyped_storage()
        ref = StorageWeakRef(storage)
        if ref.cdata in self.live:
            return
        nbytes = storage.nbytes()
        self.live[ref.cdata] = (ref, nbytes)
        self.current += nbytes

    def _drop_expired(self) -> None:
        expired = [key for key, (ref, _) in self.live.items() if ref.expired()]
        for key in expired:
            self.current -= self.live.pop(key)[1]

    def __enter__(self):
        for tensor in _tensors_of(self._resident):
            if self._wanted(tensor):
                self._add(tensor)
        if self._scan:
            with warnings.catch_warnings():  # isinstance on torch's deprecated module proxies warns
                warnings.simplefilter("ignore")
                live = [obj for obj in gc.get_objects() if self._wanted(obj)]
            for tensor in live:
                self._add(tensor)
        self.resident = self.peak = self.current
        return super().__enter__()

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        out = func(*args, **(kwargs or {}))
        self._drop_expired()
        for tensor in tree_leaves(out):
            if self._wanted(tensor):
                self._add(tensor)
        self.peak = max(self.peak, self.current)
        return out


def _tensors_of(objects):
    for obj in objects:
        if torch.is_tensor(obj):
            yield obj
        elif isinstance(obj, torch.nn.Module):
            yield from obj.parameters()
            yield from obj.buffers()
        elif isinstance(obj, torch.optim.Optimizer):
            for group in obj.param_groups:
                yield from group["params"]
            for state in obj.state.values():
                yield from (v for v in state.values() if torch.is_tensor(v))


class StepCounter:
    """Counts the first `steps` steps of a training loop: peak tensor bytes on the job's device and FLOPs per step.

    Use `with counter.step(): ...` around each step; `result()` gives the record.
    """

    def __init__(self, device: torch.device, state, steps: int = 2):
        self.device, self.state, self.steps = device, state, steps
        self.peaks: list[int] = []
        self.flops: list[int] = []
        self.resident = 0
        self._mode = None

    def wants(self, step_index: int) -> bool:
        return step_index < self.steps

    def run(self, fn):
        from torch.utils.flop_counter import FlopCounterMode

        objects = [v for v in self.state.values() if isinstance(v, (torch.nn.Module, torch.optim.Optimizer))]
        memory = TensorMemory(self.device.type, resident=objects, scan=True)
        flops = FlopCounterMode(display=False)
        with memory, flops:
            out = fn()
        if not self.peaks:
            self.resident = memory.resident
        self.peaks.append(memory.peak)
        self.flops.append(flops.get_total_flops())
        return out

    def result(self) -> dict:
        params = storage_bytes(p for v in self.state.values() if isinstance(v, torch.nn.Module) for p in v.parameters())
        return {
            "device": self.device.type,
            "steps_counted": len(self.peaks),
            "peak_bytes": max(self.peaks, default=0),
            "resident_bytes": self.resident,
            "parameter_bytes": params,
            "flops_per_step": max(self.flops, default=0),
        }


_WRITTEN: set[Path] = set()


def record(result: dict, extra: dict | None = None) -> Path | None:
    """Write a job's count where the rehearsal asked for it (ENV), one JSON per job; None when not asked."""
    folder = os.environ.get(ENV)
    job = os.environ.get(JOB_LOG_ENV)
    if not folder or not job:
        return None
    path = Path(folder) / (job.replace("/", "__") + ".json")
    path.parent.mkdir(parents=True, exist_ok=True)
    # a job's first loop replaces what an earlier run of the same job wrote; its later loops add to it
    previous = json.loads(path.read_text()) if path in _WRITTEN and path.exists() else {"loops": []}
    _WRITTEN.add(path)
    previous["loops"].append({**result, **(extra or {})})
    path.write_text(json.dumps(previous, indent=1))
    return path
