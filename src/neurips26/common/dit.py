"""Pieces of DiT (Peebles & Xie, 2023) shared by papers 01 and 04's transformers."""

from __future__ import annotations

import torch


def sincos_pos_embed_2d(width: int, grid: int) -> torch.Tensor:
    """Fixed 2-D sin-cos position embedding (grid^2, width), MAE/DiT layout (half for rows, half for columns)."""
    if width % 4:
        raise ValueError(f"the sin-cos position embedding needs a width divisible by 4, got {width}")
    quarter = width // 4
    omega = 1.0 / 10000 ** (torch.arange(quarter, dtype=torch.float64) / quarter)
    coords = torch.arange(grid, dtype=torch.float64)
    rows, cols = torch.meshgrid(coords, coords, indexing="ij")

    def embed(pos: torch.Tensor) -> torch.Tensor:
        out = pos.reshape(-1)[:, None] * omega[None]
        return torch.cat([torch.sin(out), torch.cos(out)], dim=1)

    return torch.cat([embed(cols), embed(rows)], dim=1).float()


def modulate(x: torch.Tensor, shift: torch.Tensor, scale: torch.Tensor) -> torch.Tensor:
    return x * (1 + scale[:, None]) + shift[:, None]
