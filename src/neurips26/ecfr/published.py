r"""The published CFM's architecture, built only to be counted (parameters and multiply-adds, as the paper's Table 2
compares ECFR with the previous multimodal methods): Costanzino et al., "Multimodal Industrial Anomaly Detection by
Crossmodal Feature Mapping", CVPR 2024 (``CVLAB-Unibo/crossmodal-feature-mapping``). Random weights: nothing here is
trained or scored.

* RGB: DINO's ViT-B/8 at 224 pixels (patch 8, width 768, 12 blocks of 12 heads, MLP ratio 4; a class token and
  learned positions), 85.8 M parameters.
* Points: Point-MAE's encoder as M3DM and CFM use it, on 1,024 groups of 128 points (farthest-point sampling and the
  k-nearest-neighbour grouping are not multiply-adds and are left out): a mini-PointNet per group (1x1 convolutions
  3-128-256, max-pooled, concatenated back, 512-512-384, max-pooled), a position MLP of the group centres (3-128-384),
  12 transformer blocks of width 384 and 6 heads.
* The two feature-mapping MLPs between the 768-dimensional RGB features and the 1,152-dimensional point features
  (Point-MAE's three layers concatenated), each ``Linear(in, h) - GELU - Linear(h, h) - GELU - Linear(h, out)`` with
  ``h = (in + out) // 2`` (CFM's ``FeatureProjectionMLP``), on the 28 x 28 grid.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

__all__ = ["PublishedCFM"]


class _Block(nn.Module):
    """A pre-norm ViT block (timm's ``Block``): attention with a fused biased qkv projection, then a GELU MLP."""

    def __init__(self, dim: int, heads: int, ratio: int = 4):
        super().__init__()
        self.heads = heads
        self.norm1, self.norm2 = nn.LayerNorm(dim), nn.LayerNorm(dim)
        self.qkv, self.proj = nn.Linear(dim, 3 * dim), nn.Linear(dim, dim)
        self.fc1, self.fc2 = nn.Linear(dim, ratio * dim), nn.Linear(ratio * dim, dim)

    def forward(self, x):
        b, n, c = x.shape
        q, k, v = self.qkv(self.norm1(x)).reshape(b, n, 3, self.heads, c // self.heads).permute(2, 0, 3, 1, 4)
        x = x + self.proj(F.scaled_dot_product_attention(q, k, v).transpose(1, 2).reshape(b, n, c))
        return x + self.fc2(F.gelu(self.fc1(self.norm2(x))))


class _ViT(nn.Module):
    def __init__(self, size: int = 224, patch: int = 8, dim: int = 768, depth: int = 12, heads: int = 12):
        super().__init__()
        self.embed = nn.Conv2d(3, dim, patch, patch)
        self.cls = nn.Parameter(torch.zeros(1, 1, dim))
        self.pos = nn.Parameter(torch.zeros(1, (size // patch) ** 2 + 1, dim))
        self.blocks = nn.ModuleList(_Block(dim, heads) for _ in range(depth))
        self.norm = nn.LayerNorm(dim)

    def forward(self, x):
        tokens = self.embed(x).flatten(2).transpose(1, 2)
        x = torch.cat([self.cls.expand(len(x), -1, -1), tokens], 1) + self.pos
        for block in self.blocks:
            x = block(x)
        return self.norm(x)[:, 1:]


class _PointMAE(nn.Module):
    def __init__(self, dim: int = 384, depth: int = 12, heads: int = 6):
        super().__init__()
        self.first = nn.Sequential(nn.Conv1d(3, 128, 1), nn.BatchNorm1d(128), nn.ReLU(), nn.Conv1d(128, 256, 1))
        self.second = nn.Sequential(nn.Conv1d(512, 512, 1), nn.BatchNorm1d(512), nn.ReLU(), nn.Conv1d(512, dim, 1))
        self.position = nn.Sequential(nn.Linear(3, 128), nn.GELU(), nn.Linear(128, dim))
        self.cls, self.cls_pos = nn.Parameter(torch.zeros(1, 1, dim)), nn.Parameter(torch.zeros(1, 1, dim))
        self.blocks = nn.ModuleList(_Block(dim, heads) for _ in range(depth))
        self.norm = nn.LayerNorm(dim)

    def forward(self, groups, centres):
        """groups (B, G, K, 3) of points around centres (B, G, 3) -> (B, G, 3 * dim): three blocks' outputs."""
        b, g, k, _ = groups.shape
        f = self.first(groups.reshape(b * g, k, 3).transpose(1, 2))  # (BG, 256, K)
        f = torch.cat([f.max(2, keepdim=True).values.expand(-1, -1, k), f], 1)
        tokens = self.second(f).max(2).values.reshape(b, g, -1)
        x = torch.cat([self.cls.expand(b, -1, -1), tokens], 1)
        pos = torch.cat([self.cls_pos.expand(b, -1, -1), self.position(centres)], 1)
        layers = []
        for i, block in enumerate(self.blocks):
            x = block(x + pos)
            if i in (3, 7, 11):  # M3DM/CFM read the 4th, 8th and 12th blocks
                layers.append(self.norm(x)[:, 1:])
        return torch.cat(layers, -1)


def _mapping(cin: int, cout: int) -> nn.Sequential:
    hidden = (cin + cout) // 2
    return nn.Sequential(nn.Linear(cin, hidden), nn.GELU(), nn.Linear(hidden, hidden), nn.GELU(),
                         nn.Linear(hidden, cout))  # fmt: skip


class PublishedCFM(nn.Module):
    """CFM as published, to count: ``forward(rgb, points)`` with rgb (B, 3, 224, 224) and points (B, G, K, 3)."""

    def __init__(self, groups: int = 1024, group_size: int = 128):
        super().__init__()
        self.groups, self.group_size = groups, group_size
        self.rgb, self.points = _ViT(), _PointMAE()
        self.rgb_to_points, self.points_to_rgb = _mapping(768, 1152), _mapping(1152, 768)

    def forward(self, rgb, points):
        f_rgb = self.rgb(rgb)  # (B, 784, 768): the 28 x 28 grid
        f_points = self.points(points, points.mean(2))  # (B, G, 1152); CFM interpolates them onto the grid
        return self.rgb_to_points(f_rgb), self.points_to_rgb(f_points)
