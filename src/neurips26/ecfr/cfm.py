r"""The crossmodal feature mapping baseline of paper 11 (CFM: Costanzino et al., "Multimodal Industrial Anomaly
Detection by Crossmodal Feature Mapping", CVPR 2024, ``CVLAB-Unibo/crossmodal-feature-mapping``), on the same
frozen teacher as ECFR.

Each modality's teacher features at the three scales are upsampled to the finest grid and concatenated; two
per-pixel MLPs (1x1 convolutions with GELU) map RGB features to depth features and back, trained with the cosine
distance on normal images. The anomaly map is the *product* of the two directions' cosine distances (CFM's rule),
upsampled to the image and blurred as ECFR's.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from neurips26.common import loop
from neurips26.common.optim import Adam

from .model import Backbone

__all__ = ["CFM", "cfm_maps", "cfm_maps_and_loss", "train_cfm"]


def _mlp(cin: int, hidden: int, cout: int) -> nn.Sequential:
    return nn.Sequential(nn.Conv2d(cin, hidden, 1), nn.GELU(), nn.Conv2d(hidden, hidden, 1), nn.GELU(),
                         nn.Conv2d(hidden, cout, 1))  # fmt: skip


class CFM(nn.Module):
    def __init__(self, backbone: tuple[int, int, int], hidden: int, seed: int = 0,
                 blocks: tuple[int, int, int] = (2, 2, 2)):  # fmt: skip
        super().__init__()
        self.teacher = Backbone(backbone, seed, blocks)
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


def train_cfm(model: CFM, rgb: torch.Tensor, depth: torch.Tensor, steps: int, batch: int, lr: float, seed: int,
              loop_settings: loop.LoopSettings | None = None,
              log: Callable[[str], None] | None = None) -> list[dict]:  # fmt: skip
    """Fit both MLPs with Adam on normal images (CFM's optimiser), teacher features computed once; one row per step
    (step, loss, lr)."""
    params = [p for p in model.parameters() if p.requires_grad]
    optimiser = Adam(params, lr)
    gen = torch.Generator().manual_seed(seed)
    feats = [(model.features(rgb[i : i + 64]), model.features(depth[i : i + 64])) for i in range(0, len(rgb), 64)]
    f_rgb, f_depth = torch.cat([f[0] for f in feats]), torch.cat([f[1] for f in feats])
    rows: list[dict] = []

    def step_fn(step: int):
        idx = torch.randint(len(f_rgb), (min(batch, len(f_rgb)),), generator=gen)
        a, b = f_rgb[idx], f_depth[idx]
        _, loss = cfm_maps_and_loss(a, b, model.rgb_to_depth(a), model.depth_to_rgb(b))
        for p in params:
            p.grad = None
        loss.backward()
        optimiser.step()
        rows.append({"step": step + 1, "loss": float(loss.detach()), "lr": lr})
        if log and (step + 1) % max(1, steps // 5) == 0:
            log(f"step {step + 1}: loss {rows[-1]['loss']:.4f}")
        return loss

    loop.run_loop(step_fn, steps, {"model": model, "optimiser": optimiser, "batches": gen, "rows": rows}, loop_settings)
    return rows


@torch.no_grad()
def cfm_maps(model: CFM, rgb: torch.Tensor, depth: torch.Tensor, sigma: float, batch: int = 16) -> np.ndarray:
    """(N, H, W) anomaly maps: the product of the two directions' cosine distances, upsampled and blurred."""
    from scipy.ndimage import gaussian_filter

    model.eval()
    out = []
    for i in range(0, len(rgb), batch):
        amap, _ = cfm_maps_and_loss(*model(rgb[i : i + batch], depth[i : i + batch]))
        out.append(F.interpolate(amap, size=rgb.shape[-2:], mode="bilinear", align_corners=False)[:, 0].numpy())
    return np.stack([gaussian_filter(m, sigma) for m in np.concatenate(out)])
