r"""The crossmodal feature mapping baseline of paper 11 (CFM: Costanzino et al., "Multimodal Industrial Anomaly
Detection by Crossmodal Feature Mapping", CVPR 2024, ``CVLAB-Unibo/crossmodal-feature-mapping``), on the same
frozen teacher as ECFR.

Each modality's teacher features at the three scales are upsampled to the finest grid and concatenated; two
per-pixel MLPs (1x1 convolutions with GELU) map RGB features to depth features and back, trained with the cosine
distance on normal images. The anomaly map is the *product* of the two directions' cosine distances (CFM's rule),
upsampled to the image and blurred as ECFR's.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

from .model import Backbone

__all__ = ["CFM", "cfm_maps_and_loss"]


def _mlp(cin: int, hidden: int, cout: int) -> nn.Sequential:
    return nn.Sequential(nn.Conv2d(cin, hidden, 1), nn.GELU(), nn.Conv2d(hidden, hidden, 1), nn.GELU(),
                         nn.Conv2d(hidden, cout, 1))  # fmt: skip


class CFM(nn.Module):
    def __init__(self, backbone: tuple[int, int, int], hidden: int, seed: int = 0):
        super().__init__()
        self.teacher = Backbone(backbone, seed)
        width = sum(backbone)
        with torch.random.fork_rng(devices=[]):
            torch.manual_seed(seed + 1)
            self.rgb_to_depth, self.depth_to_rgb = _mlp(width, hidden, width), _mlp(width, hidden, width)

    def features(self, x: torch.Tensor) -> torch.Tensor:
        with torch.no_grad():
            feats = self.teacher(x)
            size = feats[0].shape[-2:]
            return torch.cat([F.interpolate(f, size=size, mode="bilinear", align_corners=False) for f in feats], 1)

    def forward(self, rgb, depth):
        f_rgb, f_depth = self.features(rgb), self.features(depth)
        return f_rgb, f_depth, self.rgb_to_depth(f_rgb), self.depth_to_rgb(f_depth)


def cfm_maps_and_loss(f_rgb, f_depth, pred_depth, pred_rgb) -> tuple[torch.Tensor, torch.Tensor]:
    """(per-pixel anomaly map on the feature grid, (B, 1, h, w); the training loss, the mean cosine distance of both
    directions)."""
    d_depth = 1 - F.cosine_similarity(pred_depth, f_depth, dim=1)
    d_rgb = 1 - F.cosine_similarity(pred_rgb, f_rgb, dim=1)
    return (d_depth * d_rgb)[:, None], d_depth.mean() + d_rgb.mean()
