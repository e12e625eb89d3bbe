"""Reading paper 05's checkpoints back: a trained decoder from the file the train step writes."""

from __future__ import annotations

import torch

from neurips26.bbo_pile.model import Decoder, DecoderConfig


def load_decoder(path, device: str | torch.device = "cpu") -> Decoder:
    """The decoder saved by the train step ({"config": DecoderConfig fields, "state": weights}), in eval mode on
    `device` (the job's: neurips26.common.loop.job_device())."""
    saved = torch.load(path, map_location="cpu", weights_only=True)
    model = Decoder(DecoderConfig(**saved["config"]))
    model.load_state_dict(saved["state"])
    return model.to(device).eval()
