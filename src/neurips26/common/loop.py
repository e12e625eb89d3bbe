"""The training loop every paper's training runs in: device, divergence, progress, checkpoints, resume, SIGTERM.

A paper writes one training step, ``step_fn(step) -> loss`` (it draws its batch, runs forward and backward
and steps its optimizer), and names the objects whose state a resumed run needs (models, optimizers,
schedulers, generators, EMA weights, the list of logged rows). ``run_loop`` then

- calls ``step_fn`` for steps ``start .. steps - 1`` and stops with ``Diverged`` (naming the step and the
  first parameter group with a non-finite weight or gradient) when the loss is not finite, or, where
  divergence is the measured outcome (``record_divergence``), ends the run there and returns the ``Diverged``
  in ``LoopResult.diverged``;
- logs step, loss, steps/s and ETA at most every ``progress_seconds`` (and at the first and last step);
- writes a checkpoint atomically every ``every_steps`` steps and every ``every_seconds`` seconds, holding
  the named states, the global random states (python, numpy, torch, CUDA) and the next step;
- resumes from a checkpoint of the same job (same ``fingerprint``), so that a resumed run is bit-identical
  to an uninterrupted one on the CPU; a checkpoint of another job (other params or inputs) is ignored;
- answers SIGTERM (what Slurm sends before the time limit; ``profiles/slurm`` asks for it ahead of time)
  by finishing the current step, writing a checkpoint and exiting with ``Preempted`` (a non-zero exit), so
  that the retry resumes.

The checkpoint is the caller's to delete once the job's outputs are written (``finish``).
"""

from __future__ import annotations

import logging
import math
import os
import random
import signal
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import torch

from neurips26.common import faults, tensor_memory
from neurips26.common.io import atomic_path

log = logging.getLogger("neurips26.loop")

DEVICE_ENV = "NEURIPS26_DEVICE"  # tests set it to "meta" to find tensors left off the job's device


class Diverged(FloatingPointError):
    """The loss stopped being finite; `step` and `group` (first group with a non-finite tensor) say where."""

    def __init__(self, step: int, group: str, loss: float, detail: str = ""):
        self.step, self.group, self.loss = step, group, loss
        super().__init__(
            f"training diverged at step {step}: loss {loss}; first non-finite: {group}"
            + (f" ({detail})" if detail else "")
            + "; lower the learning rate or check the data"
        )


class Preempted(SystemExit):
    """SIGTERM arrived: a checkpoint was written and the job exits non-zero, so that a retry resumes."""

    def __init__(self, step: int, path: Path | None):
        where = f"checkpoint written to {path}; rerun to resume" if path else "no checkpoint configured"
        super().__init__(f"SIGTERM at step {step}: {where}")
        self.code = 143  # 128 + SIGTERM, as a shell reports a terminated process
        self.step = step


def job_device() -> torch.device:
    """The job's device: CUDA when the job was given a GPU, else the CPU (NEURIPS26_DEVICE overrides)."""
    name = os.environ.get(DEVICE_ENV)
    if name:
        return torch.device(name)
    return torch.device("cuda" if torch.cuda.is_available() else "cpu")


def checkpoint_path(output: str | Path) -> Path:
    """Where the job writing `output` keeps its checkpoint: beside it, never declared as an output, so that
    Snakemake keeps it when the job fails and the retry finds it."""
    output = Path(output)
    return output.with_name(f".{output.name}.ckpt")


@dataclass
class LoopSettings:
    """How often to checkpoint and report; none of these change what is computed."""

    checkpoint: Path | None = None  # None: no checkpoints, no resume
    fingerprint: str = ""  # the job's params and inputs (common.checkpoint.fingerprint)
    every_steps: int | None = None  # default: a tenth of the run
    every_seconds: float = 1800.0
    progress_seconds: float = 30.0
    check_finite: bool = True  # False where divergence is the measured outcome (step_fn handles it)
    record_divergence: bool = False  # True: a non-finite loss ends the run as an outcome (LoopResult.diverged)
    name: str = "training"


@dataclass
class LoopResult:
    steps: int  # steps completed in total (including those before a resume; not the one that raised StopTraining)
    resumed_from: int  # 0 when the run started afresh
    seconds: float  # wall time of this process's part of the run
    stopped_early: bool = False  # step_fn raised StopTraining, or the run diverged with record_divergence
    diverged: Diverged | None = None  # the divergence that ended the run (record_divergence only)


class StopTraining(Exception):
    """Raised by a step function to end the run early (e.g. divergence recorded as an outcome)."""


# ---- states of the named objects ---------------------------------------------------------------------------


def _get_state(obj: Any) -> Any:
    if isinstance(obj, torch.Generator):
        return obj.get_state()
    if isinstance(obj, np.random.Generator):
        return obj.bit_generator.state
    if isinstance(obj, random.Random):
        return obj.getstate()
    if hasattr(obj, "state_dict"):
        return obj.state_dict()
    if isinstance(obj, list):
        return list(obj)
    if isinstance(obj, dict):
        return {k: v.detach().to("cpu", copy=True) if torch.is_tensor(v) else v for k, v in obj.items()}
    raise TypeError(f"cannot checkpoint an object of type {type(obj).__name__}")


def _set_state(obj: Any, state: Any) -> None:
    if isinstance(obj, torch.Generator):
        obj.set_state(state)
    elif isinstance(obj, np.random.Generator):
        obj.bit_generator.state = state
    elif isinstance(obj, random.Random):
        obj.setstate(state)
    elif hasattr(obj, "load_state_dict"):
        obj.load_state_dict(state)
    elif isinstance(obj, list):
        obj[:] = state
    elif isinstance(obj, dict):
        for key, value in state.items():
            if torch.is_tensor(obj.get(key)) and torch.is_tensor(value):
                obj[key].copy_(value)
            else:
                obj[key] = value
    else:
        raise TypeError(f"cannot restore an object of type {type(obj).__name__}")


def _global_rng() -> dict:
    states = {"python": random.getstate(), "numpy": np.random.get_state(), "torch": torch.get_rng_state()}
    if torch.cuda.is_available() and torch.cuda.is_initialized():
        states["cuda"] = torch.cuda.get_rng_state_all()
    return states


def _set_global_rng(states: dict) -> None:
    random.setstate(states["python"])
    np.random.set_state(states["numpy"])
    torch.set_rng_state(states["torch"])
    if "cuda" in states and torch.cuda.is_available():
        torch.cuda.set_rng_state_all(states["cuda"])


# what a checkpoint may hold beyond tensors and Python builtins: numpy arrays and scalars (the global numpy
# random state, arrays in a checkpointed list or dict); loading allows these and no other class
_NUMPY_GLOBALS = [
    np._core.multiarray._reconstruct,
    np._core.multiarray.scalar,
    np.ndarray,
    np.dtype,
    *(getattr(np.dtypes, name) for name in np.dtypes.__all__),
]


def save(path: Path, fingerprint: str, step: int, state: Mapping[str, Any]) -> None:
    """Write the named states, the global random states and the next step, atomically."""
    payload = {
        "fingerprint": fingerprint,
        "step": step,
        "rng": _global_rng(),
        "state": {name: _get_state(obj) for name, obj in state.items()},
    }
    with atomic_path(path) as tmp:
        torch.save(payload, tmp)


def load_checkpoint(path: str | Path) -> dict:
    """A checkpoint's payload (fingerprint, step, rng, state), loaded with weights_only=True."""
    with torch.serialization.safe_globals(_NUMPY_GLOBALS):  # numpy arrays and scalars, no other class
        return torch.load(path, weights_only=True, map_location="cpu")


def restore(path: Path | None, fingerprint: str, state: Mapping[str, Any]) -> int:
    """Restore a checkpoint of this job into `state`; returns the step to continue from (0 when none)."""
    if path is None or not Path(path).exists():
        return 0
    payload = load_checkpoint(path)
    if payload.get("fingerprint") != fingerprint:
        log.warning("ignoring checkpoint %s: it was written by a run with other parameters or inputs", path)
        return 0
    missing = set(state) ^ set(payload["state"])
    if missing:
        log.warning("ignoring checkpoint %s: it holds other states (%s)", path, ", ".join(sorted(missing)))
        return 0
    for name, obj in state.items():
        _set_state(obj, payload["state"][name])
    _set_global_rng(payload["rng"])
    return int(payload["step"])


# ---- divergence --------------------------------------------------------------------------------------------


def parameter_groups(state: Mapping[str, Any]) -> dict[str, list[torch.nn.Parameter]]:
    """Parameters of every module in `state`, grouped by '<name>.<top-level child>'."""
    groups: dict[str, list] = {}
    for name, obj in state.items():
        if isinstance(obj, torch.nn.Module):
            for pname, param in obj.named_parameters():
                groups.setdefault(f"{name}.{pname.split('.')[0]}", []).append(param)
    return groups


def first_non_finite(groups: Mapping[str, Iterable[torch.Tensor]]) -> str:
    """The first group holding a non-finite weight (or else gradient), or 'loss' when all are finite."""
    for what in ("weight", "gradient"):
        for name, params in groups.items():
            for p in params:
                tensor = p.detach() if what == "weight" else p.grad
                if tensor is not None and tensor.device.type != "meta" and not bool(torch.isfinite(tensor).all()):
                    return f"{what} of {name}"
    return "loss"


def check_finite(loss: Any, step: int, groups: Mapping[str, Iterable[torch.Tensor]]) -> None:
    """Raise Diverged when `loss` is not finite, naming the first group with a non-finite weight or gradient.

    Called by a step function between backward and the optimizer's step, it names the group where the
    trouble started; the loop's own check after the step sees every group already spoilt by the update.
    """
    value = _scalar(loss)
    if not math.isfinite(value):
        raise Diverged(step, first_non_finite(groups), value)


def _scalar(loss: Any) -> float:
    if torch.is_tensor(loss):
        if loss.device.type == "meta":
            return 0.0  # shape-only tensors have no value (tests of device placement)
        return float(loss.detach())
    return float(loss)


# ---- the loop ----------------------------------------------------------------------------------------------


def run_loop(
    step_fn: Callable[[int], Any],
    steps: int,
    state: Mapping[str, Any],
    settings: LoopSettings | None = None,
    groups: Mapping[str, Iterable[torch.Tensor]] | None = None,
) -> LoopResult:
    """Run `step_fn(step)` for step = start .. steps-1, where start is 0 or the step of a resumed checkpoint.

    `step_fn` returns the step's loss (a tensor or number; None skips the finiteness check) and may raise
    StopTraining to end early. `state` names every object whose state a resumed run needs; `groups` names the
    parameter groups reported on divergence (default: the top-level children of every module in `state`).
    """
    s = settings or LoopSettings()
    if steps < 0:
        raise ValueError(f"{s.name}: need steps >= 0, got {steps}")
    every = s.every_steps if s.every_steps is not None else max(1, steps // 10)
    if every < 1:
        raise ValueError(f"{s.name}: checkpoint every_steps must be >= 1, got {every}")
    start = restore(s.checkpoint, s.fingerprint, state)
    if start:
        log.info("%s: resuming from checkpoint %s at step %d of %d", s.name, s.checkpoint, start, steps)
    terminated: list[int] = []
    signal_only = faults.slow_steps()  # a test of SIGTERM: no other checkpoint may stand in for it
    previous = _install_sigterm(terminated)
    counter = _step_counter(state)  # the rehearsal's tensor-memory and FLOP count of the first steps, or None
    began = last_report = last_save = time.perf_counter()
    step = start
    stopped = False
    diverged = None
    try:
        for step in range(start, steps):
            try:
                if counter is not None and counter.wants(step - start):
                    loss = counter.run(lambda: step_fn(step))  # noqa: B023 (called at once)
                else:
                    loss = step_fn(step)
            except StopTraining:
                stopped = True
                break
            if loss is not None and s.check_finite:
                value = _scalar(loss)
                if not math.isfinite(value):
                    where = first_non_finite(groups if groups is not None else parameter_groups(state))
                    diverged = Diverged(step, where, value, "after the update")
                    if not s.record_divergence:
                        raise diverged
                    log.warning("%s: %s; recorded as the run's outcome", s.name, diverged)
                    stopped = True
                    break
            done = step + 1
            faults.step_done()
            now = time.perf_counter()
            if now - last_report >= s.progress_seconds or step == start or done == steps:
                rate = (done - start) / max(now - began, 1e-9)
                eta = (steps - done) / rate if rate > 0 else math.inf
                log.info(
                    "%s: step %d/%d loss %s, %.2f steps/s, ETA %s",
                    s.name,
                    done,
                    steps,
                    "n/a" if loss is None else f"{_scalar(loss):.4g}",
                    rate,
                    _duration(eta),
                )
                last_report = now
            periodic = not signal_only and (done % every == 0 or now - last_save >= s.every_seconds)
            if s.checkpoint is not None and done < steps and (periodic or terminated):
                save(s.checkpoint, s.fingerprint, done, state)
                last_save = time.perf_counter()
                log.info("%s: checkpoint at step %d written to %s", s.name, done, s.checkpoint)
                faults.checkpoint_written(s.checkpoint)
            if terminated and done < steps:
                log.warning(
                    "%s: SIGTERM received; stopping at step %d (checkpoint: %s) so that a retry resumes",
                    s.name,
                    done,
                    s.checkpoint,
                )
                raise Preempted(done, s.checkpoint)  # the checkpoint of this step was written above
        else:
            step = steps
    finally:
        if previous is not _NOT_MAIN_THREAD:
            signal.signal(signal.SIGTERM, signal.SIG_DFL if previous is None else previous)
    total = step if stopped else steps
    if counter is not None:
        tensor_memory.record(counter.result(), {"name": s.name, "steps": steps})
    return LoopResult(
        steps=total, resumed_from=start, seconds=time.perf_counter() - began, stopped_early=stopped, diverged=diverged
    )


def _step_counter(state: Mapping[str, Any]):
    """A counter of the first steps' tensor memory and FLOPs when the rehearsal asks for one (tensor_memory.ENV)."""
    if not os.environ.get(tensor_memory.ENV):
        return None
    return tensor_memory.StepCounter(job_device(), state)


def finish(settings: LoopSettings) -> None:
    """Delete the checkpoint once the job's outputs are written."""
    if settings.checkpoint is not None:
        Path(settings.checkpoint).unlink(missing_ok=True)


_NOT_MAIN_THREAD = object()


def _install_sigterm(flag: list[int]):
    """Note SIGTERM instead of dying; returns the previous handler (None when it was not set from Python),
    or _NOT_MAIN_THREAD where signals cannot be handled (a thread other than the main one)."""
    try:
        return signal.signal(signal.SIGTERM, lambda signum, frame: flag.append(signum))
    except ValueError:
        return _NOT_MAIN_THREAD


def _duration(seconds: float) -> str:
    if not math.isfinite(seconds):
        return "?"
    seconds = int(seconds)
    return f"{seconds // 3600}:{seconds // 60 % 60:02d}:{seconds % 60:02d}"
