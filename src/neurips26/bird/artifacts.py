"""Paper 04's stored networks: the weights a training job kept at its checkpoint epochs for each seed of its
group, one torch file holding the state dicts by seed and epoch and the run's settings (architecture, spec, N, the
training subset's indices, the seeds) as a JSON string, read with `torch.load(weights_only=True)` (no pickled
objects tied to class layouts)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

import torch

from neurips26.common.io import atomic_path


def save_checkpoints(path: str | Path, kept: dict[int, dict[int, dict[str, torch.Tensor]]], settings: dict) -> None:
    """Write the kept weights (seed -> epoch -> CPU state dict) and `settings` (JSON-serialisable) atomically."""
    payload = {
        "seeds": {int(s): {int(e): state for e, state in by_epoch.items()} for s, by_epoch in kept.items()},
        "settings": json.dumps(settings),
    }
    with atomic_path(path) as tmp:
        torch.save(payload, tmp)


def load_checkpoints(path: str | Path) -> tuple[dict[int, dict[int, dict[str, torch.Tensor]]], dict]:
    """(seed -> epoch -> state dict, settings) of a file written by `save_checkpoints`."""
    payload = torch.load(path, map_location="cpu", weights_only=True)
    if set(payload) != {"seeds", "settings"}:
        raise ValueError(
            f"{path} is not a file of kept weights by seed (keys {sorted(payload)}): rerun its training rule"
        )
    return payload["seeds"], json.loads(payload["settings"])


def check_seeds(kept: dict[int, dict], seeds: Sequence[int], path: str | Path) -> None:
    """The file holds exactly the seeds of the job that reads it."""
    if sorted(kept) != sorted(int(s) for s in seeds):
        raise ValueError(f"{path} holds the networks of seeds {sorted(kept)}, not of seeds {sorted(seeds)}")
