"""DiT's transformer trunk (Peebles & Xie, 2023; facebookresearch/DiT `models.py`), shared by the transformers
of papers 01 (`pred_loss_space.models.JiTTiny`) and 04 (`bird.networks.DiT`).

- `sincos_pos_embed_2d`: fixed 2-D sin-cos position embedding (MAE/DiT layout).
- `timestep_embedding`: DiT's `TimestepEmbedder.timestep_embedding` of 1000 t, for t in [0, 1].
- `modulate`, `DiTBlock`: the adaLN-Zero block (pre-norm attention and MLP, each shifted, scaled and gated
  from the conditioning vector; the modulation starts at zero).
- `AdaLNZeroTrunk`: a module base class holding the blocks and DiT's final layer (adaLN-modulated LayerNorm,
  linear head, both zero at the start), so a fresh network outputs exactly zero.
- `unpatchify`: tokens (B, grid^2, p^2 C) back to images, DiT's layout (p, p, C) inside a token.

A paper's network keeps its own patch embedding, time MLP and initialisation around these; parameter names
(`blocks.i.qkv`, `ada_out.1`, `head`, ...) and the order in which they are created are part of the contract:
seeded initialisations of either paper depend on them.
"""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F
from torch import nn

T_SCALE = 1000.0  # t in [0, 1] is DiT's integer timestep / 1000: the sinusoid frequencies span its range


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


def timestep_embedding(t: torch.Tensor, dim: int, max_period: float = 10000.0) -> torch.Tensor:
    """Sinusoidal features (B, dim) [cos, sin] of T_SCALE t, t (B,) in [0, 1] (an odd `dim` gets a zero column)."""
    half = dim // 2
    freqs = torch.exp(-math.log(max_period) * torch.arange(half, dtype=torch.float32, device=t.device) / half)
    args = T_SCALE * t.float()[:, None] * freqs[None]
    emb = torch.cat([torch.cos(args), torch.sin(args)], dim=-1)
    if dim % 2:
        emb = torch.cat([emb, torch.zeros_like(emb[:, :1])], dim=-1)
    return emb


def modulate(x: torch.Tensor, shift: torch.Tensor, scale: torch.Tensor) -> torch.Tensor:
    return x * (1 + scale[:, None]) + shift[:, None]


def unpatchify(tokens: torch.Tensor, patch: int, grid: int, channels: int) -> torch.Tensor:
    """(B, grid^2, p^2 C) -> (B, C, grid p, grid p), DiT's layout (p, p, C) inside a token."""
    b, p, g, c = tokens.shape[0], patch, grid, channels
    return tokens.reshape(b, g, g, p, p, c).permute(0, 5, 1, 3, 2, 4).reshape(b, c, g * p, g * p)


class DiTBlock(nn.Module):
    """Pre-norm attention and MLP, each modulated (shift, scale) and gated by adaLN-Zero from the conditioning.

    `activation` is the MLP's (DiT: tanh-approximated GELU). The modulation `ada` starts at zero, so a fresh
    block is the identity.
    """

    def __init__(self, width: int, heads: int, mlp_ratio: float = 4.0, activation: type[nn.Module] | None = None):
        super().__init__()
        self.heads = heads
        self.norm1 = nn.LayerNorm(width, elementwise_affine=False, eps=1e-6)
        self.qkv = nn.Linear(width, 3 * width)
        self.proj = nn.Linear(width, width)
        self.norm2 = nn.LayerNorm(width, elementwise_affine=False, eps=1e-6)
        hidden = int(width * mlp_ratio)
        act = activation() if activation is not None else nn.GELU(approximate="tanh")
        self.mlp = nn.Sequential(nn.Linear(width, hidden), act, nn.Linear(hidden, width))
        self.ada = nn.Sequential(nn.SiLU(), nn.Linear(width, 6 * width))
        nn.init.zeros_(self.ada[1].weight)
        nn.init.zeros_(self.ada[1].bias)

    def attention(self, x: torch.Tensor) -> torch.Tensor:
        b, n, c = x.shape
        q, k, v = self.qkv(x).reshape(b, n, 3, self.heads, c // self.heads).permute(2, 0, 3, 1, 4)
        # one token attends only to itself: softmax over one key is 1, so the output is v (and much faster)
        out = v if n == 1 else F.scaled_dot_product_attention(q, k, v)
        return self.proj(out.transpose(1, 2).reshape(b, n, c))

    def forward(self, x: torch.Tensor, c: torch.Tensor) -> torch.Tensor:
        shift1, scale1, gate1, shift2, scale2, gate2 = self.ada(c).chunk(6, dim=-1)
        x = x + gate1[:, None] * self.attention(modulate(self.norm1(x), shift1, scale1))
        return x + gate2[:, None] * self.mlp(modulate(self.norm2(x), shift2, scale2))


class AdaLNZeroTrunk(nn.Module):
    """Base class of a DiT-style network: `build_trunk` adds `blocks`, `norm_out`, `ada_out` and `head` (in this
    order, after the subclass's embeddings); `trunk(h, c)` runs the blocks and the final layer on tokens h with
    conditioning c and returns (B, tokens, out_dim)."""

    def build_trunk(
        self,
        width: int,
        heads: int,
        depth: int,
        mlp_ratio: float,
        out_dim: int,
        activation: type[nn.Module] | None = None,
    ) -> None:
        if width % heads:
            raise ValueError(f"width {width} is not divisible by {heads} heads")
        self.blocks = nn.ModuleList(DiTBlock(width, heads, mlp_ratio, activation) for _ in range(depth))
        self.norm_out = nn.LayerNorm(width, elementwise_affine=False, eps=1e-6)
        self.ada_out = nn.Sequential(nn.SiLU(), nn.Linear(width, 2 * width))
        self.head = nn.Linear(width, out_dim)
        for layer in (self.ada_out[1], self.head):
            nn.init.zeros_(layer.weight)
            nn.init.zeros_(layer.bias)

    def trunk(self, h: torch.Tensor, c: torch.Tensor) -> torch.Tensor:
        for block in self.blocks:
            h = block(h, c)
        shift, scale = self.ada_out(c).chunk(2, dim=-1)
        return self.head(modulate(self.norm_out(h), shift, scale))
