"""Paper 05's stored models: trained decoders written and read back (their settings and state dicts, loaded with
``weights_only=True``). A file holds one decoder, or the several seeds of one run trained in one job (a batched
ensemble); a reader names the seed it wants. Result tables are read by :mod:`.summary`."""

from __future__ import annotations

from collections.abc import Sequence

import torch

from neurips26.common.io import atomic_path

from .model import Decoder, DecoderConfig


def _entry(model: Decoder, config: DecoderConfig) -> dict:
    return {"config": config.__dict__, "state": {k: v.cpu() for k, v in model.state_dict().items()}}


def save_decoder(path, model: Decoder, config: DecoderConfig) -> None:
    """The decoder as {"config": DecoderConfig fields, "state": CPU weights}, written atomically."""
    with atomic_path(path) as tmp:
        torch.save(_entry(model, config), tmp)


def save_decoders(path, models: Sequence[Decoder], configs: Sequence[DecoderConfig]) -> None:
    """Several seeds of one run in one file ({"members": [one :func:`save_decoder` entry per seed]}); one model
    is written as :func:`save_decoder` writes it."""
    if len(models) != len(configs) or not models:
        raise ValueError(f"save_decoders needs one config per model, got {len(models)} models, {len(configs)} configs")
    if len(models) == 1:
        save_decoder(path, models[0], configs[0])
        return
    seeds = [c.seed for c in configs]
    if len(set(seeds)) != len(seeds):
        raise ValueError(f"the members' seeds repeat: {seeds}")
    with atomic_path(path) as tmp:
        torch.save({"members": [_entry(m, c) for m, c in zip(models, configs)]}, tmp)


def load_decoder(path, device: str | torch.device = "cpu", seed: int | None = None) -> Decoder:
    """The decoder saved by :func:`save_decoder` (or seed `seed` of a file of :func:`save_decoders`), in eval
    mode on `device` (the job's: neurips26.common.loop.job_device()). With `seed`, a decoder of another seed is
    refused: a job never runs a copy it did not ask for."""
    saved = torch.load(path, map_location="cpu", weights_only=True)
    entries = saved.get("members", [saved])
    if seed is None:
        if len(entries) > 1:
            raise ValueError(f"{path} holds the seeds {[e['config']['seed'] for e in entries]}: name one")
        entry = entries[0]
    else:
        found = [e for e in entries if e["config"]["seed"] == int(seed)]
        if not found:
            raise ValueError(f"{path} holds no decoder of seed {seed} (seeds {[e['config']['seed'] for e in entries]})")
        entry = found[0]
    model = Decoder(DecoderConfig(**entry["config"]))
    model.load_state_dict(entry["state"])
    return model.to(device).eval()
