"""Advantages of G completions of each of B scaffolds (arXiv:2602.12162; GRXForm's rl_updates.py).

drgrpo  A = r - mean over the scaffold's group            (Dr. GRPO, the authors' default)
grpo    A = (r - group mean) / (group std + 1e-8)          (GRPO)
global  A = r - mean over the whole batch                  ("standard RL": one global baseline)
none    A = r                                              (plain REINFORCE)
"""

from __future__ import annotations

import numpy as np

VARIANTS = ("drgrpo", "grpo", "global", "none")
GROUPED = ("drgrpo", "grpo")


def advantages(rewards: np.ndarray, variant: str) -> np.ndarray:
    """rewards (B, G) -> advantages (B, G)."""
    rewards = np.asarray(rewards, dtype=np.float64)
    if rewards.ndim != 2:
        raise ValueError(f"rewards must be (scaffolds, group) shaped, got {rewards.shape}")
    if variant not in VARIANTS:
        raise ValueError(f"unknown advantage variant {variant!r}; choose one of {VARIANTS}")
    if not np.isfinite(rewards).all():
        raise ValueError("rewards contain NaN or inf")
    if variant in GROUPED and rewards.shape[1] < 2:
        raise ValueError(
            f"group normalisation ({variant}) needs at least 2 completions per scaffold, "
            f"got group size {rewards.shape[1]}: the group baseline is undefined"
        )
    if variant == "drgrpo":
        return rewards - rewards.mean(axis=1, keepdims=True)
    if variant == "grpo":
        centred = rewards - rewards.mean(axis=1, keepdims=True)
        return centred / (rewards.std(axis=1, ddof=1, keepdims=True) + 1e-8)
    if variant == "global":
        return rewards - rewards.mean()
    return rewards.copy()
