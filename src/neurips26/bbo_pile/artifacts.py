"""Paper 05's stored models: a trained decoder written and read back (its settings and a state dict, loaded with
``weights_only=True``). Result tables are read by :mod:`.summary`."""

from __future__ import annotations

import torch

from neurips26.common.io import atomic_path

from .model import Decoder, DecoderConfig


def save_decoder(path, model: Decoder, config: DecoderConfig) -> None:
    """The decoder as {"config": DecoderConfig fields, "state": CPU weights}, written atomically."""
    with atomic_path(path) as tmp:
        torch.save({"config": config.__dict__, "state": {k: v.cpu() for k, v in model.state_dict().items()}}, tmp)


def load_decoder(path, device: str | torch.device = "cpu") -> Decoder:
    """The decoder saved by :func:`save_decoder`, in eval mode on `device` (the job's:
    neurips26.common.loop.job_device())."""
    saved = torch.load(path, map_location="cpu", weights_only=True)
    model = Decoder(DecoderConfig(**saved["config"]))
    model.load_state_dict(saved["state"])
    return model.to(device).eval()
