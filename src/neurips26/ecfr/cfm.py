r"""The crossmodal feature mapping baseline of paper 11 (CFM: Costanzino et al., "Multimodal Industrial Anomaly
Detection by Crossmodal Feature Mapping", CVPR 2024, ``CVLAB-Unibo/crossmodal-feature-mapping``), on the same
frozen teacher as ECFR.

Each modality's teacher features at the three scales are upsampled to the finest grid and concatenated; two
per-pixel MLPs (1x1 convolutions with GELU) map RGB features to depth features and back, trained with the cosine
distance on normal images. The anomaly map is the *product* of the two directions' cosine distances (CFM's rule),
upsampled to the image and blurred as ECFR's.

Training keeps the teacher's three scales of every training image on the job's device (``loop.job_device()``) and
upsamples a batch's when it is drawn: the upsampled features would take 448 / 112 = 4 times the memory (43 GB for
MVTec 3D-AD's 2,950 training images of 256 pixels, against 10.8 GB).
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

    @torch.no_grad()
    def scales(self, x: torch.Tensor) -> list[torch.Tensor]:
        """The frozen teacher's three scales."""
        return self.teacher(x)

    @staticmethod
    def fuse(feats: list[torch.Tensor]) -> torch.Tensor:
        """The three scales upsampled to the finest grid and concatenated."""
        size = feats[0].shape[-2:]
        return torch.cat([F.interpolate(f, size=size, mode="bilinear", align_corners=True) for f in feats], 1)

    def features(self, x: torch.Tensor) -> torch.Tensor:
        return self.fuse(self.scales(x))

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
              loop_settings: loop.LoopSettings | None = None, log: Callable[[str], None] | None = None,
              device: torch.device | None = None) -> list[dict]:  # fmt: skip
    """Fit both MLPs with Adam on normal images (CFM's optimiser) on ``device`` (default: the job's), teacher
    features computed once; one row per step (step, loss, lr)."""
    device = loop.job_device() if device is None else torch.device(device)
    model.to(device)
    params = [p for p in model.parameters() if p.requires_grad]
    optimiser = Adam(params, lr)
    gen = torch.Generator().manual_seed(seed)
    chunks = [(model.scales(rgb[i : i + 64].to(device)), model.scales(depth[i : i + 64].to(device)))
              for i in range(0, len(rgb), 64)]  # fmt: skip
    s_rgb = [torch.cat([c[0][k] for c in chunks]) for k in range(3)]
    s_depth = [torch.cat([c[1][k] for c in chunks]) for k in range(3)]
    del chunks
    rows: list[dict] = []

    def step_fn(step: int):
        idx = torch.randint(len(rgb), (min(batch, len(rgb)),), generator=gen).to(device)
        a, b = model.fuse([s[idx] for s in s_rgb]), model.fuse([s[idx] for s in s_depth])
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
def cfm_maps(model: CFM, rgb: torch.Tensor, depth: torch.Tensor, sigma: float, batch: int = 16,
             device: torch.device | None = None) -> np.ndarray:  # fmt: skip
    """(N, H, W) anomaly maps on ``device`` (default: the job's): the product of the two directions' cosine
    distances, upsampled and blurred."""
    from scipy.ndimage import gaussian_filter

    device = loop.job_device() if device is None else torch.device(device)
    model.to(device).eval()
    out = []
    for i in range(0, len(rgb), batch):
        amap, _ = cfm_maps_and_loss(*model(rgb[i : i + batch].to(device), depth[i : i + batch].to(device)))
        amap = F.interpolate(amap, size=rgb.shape[-2:], mode="bilinear", align_corners=True)
        out.append(amap[:, 0].cpu().numpy())
    return np.stack([gaussian_filter(m, sigma) for m in np.concatenate(out)])
