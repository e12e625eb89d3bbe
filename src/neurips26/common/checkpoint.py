"""Checkpoints for long training: written atomically, resumed only when they belong to the same job.

A checkpoint carries a fingerprint (the job's parameters and inputs); a stale checkpoint from a run with
other settings is ignored rather than resumed.
"""

from __future__ import annotations

import hashlib
import json
import logging
from pathlib import Path

import torch

from neurips26.common.io import atomic_path

log = logging.getLogger("neurips26.checkpoint")


def fingerprint(params: dict, inputs: list[str]) -> str:
    """Hash of a job's parameters and of its input files' sizes and modification times."""
    files = [(str(p), Path(p).stat().st_size, Path(p).stat().st_mtime_ns) for p in inputs]
    text = json.dumps([params, files], sort_keys=True, default=str)
    return hashlib.sha256(text.encode()).hexdigest()


def save_checkpoint(path: str | Path, state: dict, print_: str) -> None:
    with atomic_path(path) as tmp:
        torch.save({**state, "fingerprint": print_}, tmp)


def load_checkpoint(path: str | Path | None, print_: str) -> dict | None:
    """The saved state if `path` holds a checkpoint of this very job, else None."""
    if path is None or not Path(path).exists():
        return None
    state = torch.load(path, weights_only=False)
    if state.get("fingerprint") != print_:
        log.warning("ignoring checkpoint %s: it was written by a run with other parameters or inputs", path)
        return None
    log.info("resuming from checkpoint %s at step %d", path, state["step"])
    return state


def resume_training(path, print_: str, model: torch.nn.Module, optimiser):
    """Restore model and optimiser from a matching checkpoint; returns (state or None, losses, first step).

    The caller restores its own random generators from the returned state.
    """
    state = load_checkpoint(path, print_)
    if state is None:
        return None, [], 0
    model.load_state_dict(state["model"])
    optimiser.load_state_dict(state["optimiser"])
    return state, state["losses"], state["step"]


def save_training(path, print_: str, model, optimiser, losses: list[float], step: int, **generators) -> None:
    """Save model, optimiser, losses, the next step and the generators' states (as `generators`)."""
    save_checkpoint(path, {
        "model": model.state_dict(), "optimiser": optimiser.state_dict(), "losses": losses, "step": step, **generators,
    }, print_)
