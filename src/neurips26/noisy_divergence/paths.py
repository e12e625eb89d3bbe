"""The names of the training step's numeric paths, kept free of torch so that the config checks run when the
workflow is parsed without importing it: the attention path of a forward without diagnostics (``model.LM``) and the
forward's precision (``training.PRECISIONS`` maps each name to its autocast dtype)."""

from __future__ import annotations

__all__ = ["ATTENTIONS", "PRECISION_NAMES"]

ATTENTIONS = ("explicit", "sdpa")  # explicit math (the smoke and quick path) or torch's fused SDPA kernel
PRECISION_NAMES = ("bf16", "fp32")  # the forward's autocast: bfloat16, or none
