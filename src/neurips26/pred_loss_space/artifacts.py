"""Paper 01's stored models: the FD feature network (a state dict) and a trained cell's EMA weights (one state
dict per seed of its job), each one torch file with its settings as a JSON string, read with
`torch.load(weights_only=True)` (no pickled objects tied to class layouts)."""

from __future__ import annotations

import json
from pathlib import Path

import torch

from neurips26.common.io import atomic_path


def save_model(path: str | Path, state_dict: dict[str, torch.Tensor], settings: dict) -> None:
    """Write `state_dict` (CPU tensors) and `settings` (JSON-serialisable) atomically to `path`."""
    payload = {"state_dict": {k: v.detach().cpu() for k, v in state_dict.items()}, "settings": json.dumps(settings)}
    with atomic_path(path) as tmp:
        torch.save(payload, tmp)


def load_model(path: str | Path) -> tuple[dict[str, torch.Tensor], dict]:
    """(state dict, settings) of a file written by `save_model`."""
    payload = torch.load(path, map_location="cpu", weights_only=True)
    if set(payload) != {"state_dict", "settings"}:
        raise ValueError(f"{path} is not a model written by save_model (keys {sorted(payload)}): rerun its rule")
    return payload["state_dict"], json.loads(payload["settings"])


def save_seed_models(path: str | Path, states: dict[int, dict[str, torch.Tensor]], settings: dict) -> None:
    """Write one state dict per seed (`states`: seed -> CPU state dict) and the job's `settings` atomically."""
    payload = {
        "seeds": {str(int(seed)): {k: v.detach().cpu() for k, v in state.items()} for seed, state in states.items()},
        "settings": json.dumps(settings),
    }
    with atomic_path(path) as tmp:
        torch.save(payload, tmp)


def load_seed_models(path: str | Path) -> tuple[dict[int, dict[str, torch.Tensor]], dict]:
    """(seed -> state dict, settings) of a file written by `save_seed_models`."""
    payload = torch.load(path, map_location="cpu", weights_only=True)
    if set(payload) != {"seeds", "settings"}:
        raise ValueError(f"{path} is not a model written by save_seed_models (keys {sorted(payload)}): rerun its rule")
    return {int(seed): state for seed, state in payload["seeds"].items()}, json.loads(payload["settings"])
