r"""Training and scoring of paper 11's reconstruction models, as the official trainer (``trainer/ecfr.py``) and
ADer's ``cal_anomaly_map`` do.

* Inputs: the RGB image and the depth image, the latter as the reference makes it from the z channel of the
  organised point cloud: invalid points are 0 (MVTec 3D-AD stores them so; our NaN become 0), then the image is
  min-max normalised per image over *all* its pixels, zeros included, and replicated to three channels. Both are
  normalised with ImageNet's mean and standard deviation.
* Loss: ``sum over the compared pairs and the three scales of 5 * MSE(teacher, student)`` (the reference's
  ``lam = 5``); which pairs are compared (cross- or same-modal) is :func:`.model.pairs`'.
* Anomaly map: per pair and scale ``1 - cos(teacher, student)`` per pixel, bilinearly upsampled to the image with
  the grids' corners aligned (ADer's ``F.interpolate(..., mode='bilinear', align_corners=True)``), summed (the
  reference's ``amap_mode='add'``), then a Gaussian blur (sigma 4 at 256 pixels, scaled with the image); the
  image score is the map's maximum.
* Optimisation: AdamW (weight decay 1e-4) with the learning rate divided by 10 at 80% of the steps, in the common
  loop (resumable); batches drawn by a seeded generator.
* Device: the model, the teacher's features and every batch live on the job's device (``loop.job_device()``: CUDA
  when the job was given a GPU); the prepared images stay on the CPU and go to the device a chunk at a time.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import torch
import torch.nn.functional as F

from neurips26.common import loop
from neurips26.common.optim import AdamW

from .model import ECFR, pairs

__all__ = ["LOSS_WEIGHT", "anomaly_maps", "prepare", "reconstruction_loss", "train"]

LOSS_WEIGHT = 5.0
_MEAN = torch.tensor([0.485, 0.456, 0.406]).view(1, 3, 1, 1)
_STD = torch.tensor([0.229, 0.224, 0.225]).view(1, 3, 1, 1)


def prepare(rgb: np.ndarray, depth: np.ndarray) -> tuple[torch.Tensor, torch.Tensor]:
    """(N, H, W, 3) RGB in [0, 1] and (N, H, W) depth (NaN where invalid) -> two (N, 3, H, W) float tensors."""
    x = torch.as_tensor(rgb, dtype=torch.float32).permute(0, 3, 1, 2)
    d = torch.as_tensor(depth, dtype=torch.float32)
    d = torch.nan_to_num(d, nan=0.0)  # an invalid point is 0, as in the reference's point clouds
    flat = d.flatten(1)
    low, high = flat.min(1).values, flat.max(1).values
    d = ((d - low[:, None, None]) / (high - low).clamp_min(1e-6)[:, None, None])[:, None].expand(-1, 3, -1, -1)
    return (x - _MEAN) / _STD, (d - _MEAN) / _STD


def reconstruction_loss(compared) -> torch.Tensor:
    return sum(LOSS_WEIGHT * F.mse_loss(s, t) for teacher, student in compared for t, s in zip(teacher, student))


@torch.no_grad()
def anomaly_maps(model: ECFR, rgb: torch.Tensor, depth: torch.Tensor, cross: bool, sigma: float, batch: int = 16,
                 device: torch.device | None = None) -> np.ndarray:  # fmt: skip
    """(N, H, W) anomaly maps of prepared inputs, computed on ``device`` (default: the job's)."""
    from scipy.ndimage import gaussian_filter

    device = loop.job_device() if device is None else torch.device(device)
    model.to(device).eval()
    size = rgb.shape[-2:]
    out = []
    for i in range(0, len(rgb), batch):
        compared = pairs(*model(rgb[i : i + batch].to(device), depth[i : i + batch].to(device)), cross)
        amap = 0
        for teacher, student in compared:
            for t, s in zip(teacher, student):
                distance = 1 - F.cosine_similarity(t, s, dim=1)[:, None]
                amap = amap + F.interpolate(distance, size=size, mode="bilinear", align_corners=True)
        out.append(amap[:, 0].cpu().numpy())
    maps = np.concatenate(out)
    return np.stack([gaussian_filter(m, sigma) for m in maps])


def train(model: ECFR, rgb: torch.Tensor, depth: torch.Tensor, steps: int, batch: int, lr: float, cross: bool,
          seed: int, weight_decay: float = 1e-4, decay_at: float = 0.8,
          loop_settings: loop.LoopSettings | None = None, log: Callable[[str], None] | None = None,
          device: torch.device | None = None) -> list[dict]:  # fmt: skip
    """Fit the student on normal images (on ``device``, default: the job's); returns one row per step (step, loss,
    lr)."""
    if len(rgb) != len(depth):
        raise ValueError(f"{len(rgb)} RGB images against {len(depth)} depth images")
    device = loop.job_device() if device is None else torch.device(device)
    model.to(device).train()
    params = [p for p in model.parameters() if p.requires_grad]
    optimiser = AdamW(params, lr, weight_decay=weight_decay)
    gen = torch.Generator().manual_seed(seed)
    rows: list[dict] = []
    # the teacher is frozen and the inputs are not augmented: its features are computed once, in chunks
    teacher = [model.teach(rgb[i : i + 64].to(device), depth[i : i + 64].to(device)) for i in range(0, len(rgb), 64)]
    t_rgb = [torch.cat([c[0][s] for c in teacher]) for s in range(3)]
    t_depth = [torch.cat([c[1][s] for c in teacher]) for s in range(3)]

    def step_fn(step: int):
        optimiser.lr = lr * (0.1 if step >= decay_at * steps else 1.0)
        idx = torch.randint(len(rgb), (min(batch, len(rgb)),), generator=gen).to(device)
        tr, td = [t[idx] for t in t_rgb], [t[idx] for t in t_depth]
        loss = reconstruction_loss(pairs(tr, td, *model.student(tr, td), cross))
        for p in params:
            p.grad = None
        loss.backward()
        optimiser.step()
        rows.append({"step": step + 1, "loss": float(loss.detach()), "lr": optimiser.lr})
        if log and (step + 1) % max(1, steps // 5) == 0:
            log(f"step {step + 1}: loss {rows[-1]['loss']:.4f}")
        return loss

    # stochastic depth draws from torch's global generator: seeded here, apart from the caller's, and saved with
    # every checkpoint by the loop, so that a resumed run draws what the uninterrupted one did
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed + 2)
        state = {"model": model, "optimiser": optimiser, "batches": gen, "rows": rows}
        loop.run_loop(step_fn, steps, state, loop_settings)
    return rows
