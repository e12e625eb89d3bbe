"""Paper 04's stored networks: the weights a training run kept at its checkpoint epochs, one torch file holding
the state dicts by epoch and the run's settings (architecture, spec, N, the training subset's indices, seed) as a
JSON string, read with `torch.load(weights_only=True)` (no pickled objects tied to class layouts)."""

from __future__ import annotations

import json
from pathlib import Path

import torch

from neurips26.common.io import atomic_path


def save_checkpoints(path: str | Path, kept: dict[int, dict[str, torch.Tensor]], settings: dict) -> None:
    """Write the kept weights (epoch -> CPU state dict) and `settings` (JSON-serialisable) atomically."""
    payload = {"checkpoints": {int(e): state for e, state in kept.items()}, "settings": json.dumps(settings)}
    with atomic_path(path) as tmp:
        torch.save(payload, tmp)


def load_checkpoints(path: str | Path) -> tuple[dict[int, dict[str, torch.Tensor]], dict]:
    """(epoch -> state dict, settings) of a file written by `save_checkpoints`."""
    payload = torch.load(path, map_location="cpu", weights_only=True)
    if set(payload) != {"checkpoints", "settings"}:
        raise ValueError(f"{path} is not a file of kept weights (keys {sorted(payload)}): rerun its training rule")
    return payload["checkpoints"], json.loads(payload["settings"])
