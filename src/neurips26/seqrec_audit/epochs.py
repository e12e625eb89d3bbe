"""What every trainer of paper 10 shares: its epochs of mini-batches run as steps of the common training loop
(``neurips26.common.loop``: checkpoints, resume, SIGTERM), the log line of an epoch's row, the error of a
non-finite batch loss, and the epoch with the best validation NDCG@10 (its weights kept, restored at the end and
its row marked).

One loop step is one mini-batch: an epoch's random draws (shuffle, masks) are made at its first batch and kept in
the loop's state (:func:`run_epochs`), so a run killed in the middle of an epoch resumes from its last checkpoint
bit-identically on the CPU, and a one-epoch run (smoke scale) still writes checkpoints.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Mapping
from dataclasses import asdict, replace
from typing import Any

import numpy as np
import torch
from torch import nn

from neurips26.common import loop


def row_line(row: dict) -> str:
    """One log line of an epoch's row: floats to 4 significant digits."""
    return " ".join(f"{k}={v:.4g}" if isinstance(v, float) else f"{k}={v}" for k, v in row.items())


def device_of(device: str | torch.device | None) -> torch.device:
    """The given device, or the job's (``loop.job_device()``: CUDA when the job has a GPU) when None."""
    return loop.job_device() if device is None else torch.device(device)


class BatchDiverged(loop.Diverged):
    """A batch's loss is not finite: names the model, epoch, batch, loop step and first non-finite group."""

    def __init__(self, what: str, loss: float, epoch: int, batch: int, step: int, group: str, hint: str):
        self.step, self.group, self.loss, self.epoch, self.batch = step, group, loss, epoch, batch
        FloatingPointError.__init__(
            self,
            f"{what} is {loss} at epoch {epoch}, batch {batch}: training diverged "
            f"(step {step}, first non-finite: {group}); {hint}",
        )


def batch_loss(loss: torch.Tensor, what: str, epoch: int, batch: int, step: int, model: nn.Module, hint: str) -> float:
    """The batch loss as a float (one read off the device); raises BatchDiverged before any backward pass when
    it is not finite."""
    value = loss.item()
    if not math.isfinite(value):
        group = loop.first_non_finite(loop.parameter_groups({"model": model}))
        raise BatchDiverged(what, value, epoch, batch, step, group, hint)
    return value


class BestEpoch:
    """The epoch with the best validation NDCG@10 so far and its weights; without any validation, the last.

    Its ``state_dict``/``load_state_dict`` let the training loop checkpoint it."""

    def __init__(self, last_epoch: int, log: Callable[[str], None] | None = None):
        self.epoch, self.ndcg, self.state = last_epoch, -np.inf, None
        self.say = log or (lambda line: None)

    def offer(self, model: nn.Module | Callable[[], Mapping[str, torch.Tensor]], row: dict) -> None:
        """Log `row` (epoch, and valid_ndcg10 when validated) and copy the weights if it is the best so far:
        `model`'s, or the state dict a callable returns (one seed of a batched ensemble)."""
        ndcg = row.get("valid_ndcg10", np.nan)
        if np.isfinite(ndcg) and ndcg > self.ndcg:
            self.epoch, self.ndcg = row["epoch"], ndcg
            state = model.state_dict() if isinstance(model, nn.Module) else model()
            self.state = {k: v.detach().clone() for k, v in state.items()}
        self.say(row_line(row))

    def restore(self, model: nn.Module, rows: list[dict], config) -> tuple[nn.Module, list[dict]]:
        """Load the kept weights, mark the kept row `best`, return the model in eval mode and the rows."""
        if self.state is not None:
            model.load_state_dict(self.state)
        for row in rows:
            row["best"] = row["epoch"] == self.epoch
        self.say(f"kept epoch {self.epoch} of {config.epochs}; {asdict(config)}")
        return model.eval(), rows

    def state_dict(self) -> dict:
        return {"epoch": self.epoch, "ndcg": self.ndcg, "state": self.state}

    def load_state_dict(self, state: dict) -> None:
        self.epoch, self.ndcg, self.state = state["epoch"], state["ndcg"], state["state"]


def run_epochs(
    name: str,
    epochs: int,
    n_batches: int,
    begin_epoch: Callable[[int], dict],
    train_batch: Callable[[dict, int, int, int], float],
    end_epoch: Callable[[int, dict], None],
    state: Mapping[str, Any],
    settings: loop.LoopSettings | None,
    groups: Mapping[str, Any] | None = None,
) -> loop.LoopResult:
    """Run ``epochs`` epochs of ``n_batches`` mini-batches as ``epochs * n_batches`` steps of ``loop.run_loop``.

    At an epoch's first batch ``begin_epoch(epoch)`` makes the epoch's draws (a dict: its batches, masks, running
    sums), kept in the loop state as ``epoch``; ``train_batch(current, epoch, batch, step)`` trains one batch
    (1-based epoch and batch) and returns its loss; after the last batch ``end_epoch(epoch, current)`` validates
    and records the epoch's row (``current["seconds"]`` holds the epoch's optimisation time). ``state`` names
    everything else a resumed run needs (models, optimiser, generators, rows, best epoch); ``groups`` the parameter
    groups a divergence is reported in (default: the modules' in ``state``)."""
    if n_batches < 1 and epochs:
        raise ValueError(f"{name}: an epoch needs at least one batch")
    current: dict = {}

    def step(index: int) -> float:
        epoch, batch = divmod(index, n_batches)
        if batch == 0:
            current.clear()
            current.update(begin_epoch(epoch + 1), seconds=0.0)
        start = time.perf_counter()
        loss = train_batch(current, epoch + 1, batch + 1, index)
        current["seconds"] += time.perf_counter() - start
        if batch == n_batches - 1:
            end_epoch(epoch + 1, current)
        return loss

    settings = replace(settings or loop.LoopSettings(), name=name)
    return loop.run_loop(step, epochs * n_batches, {**state, "epoch": current}, settings, groups)
