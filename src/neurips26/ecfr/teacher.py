r"""The quick-scale teacher of paper 11: the reference's frozen ImageNet ResNet-34 cannot load offline, so the
pipeline pretrains its own small ResNet-style :class:`.model.Backbone` on *natural* images that ship with
scikit-image (none of them from the anomaly-detection data), with two pretext tasks on random crops: which picture a
crop was cut from (a stand-in for ImageNet's labels; the pictures' textures and edges make it learnable by a small
network) and which of four rotations (0, 90, 180, 270 degrees) was applied to it (Gidaris et al., ICLR 2018). Two
linear heads on the globally pooled last stage are trained with the sum of the cross-entropies and then dropped; the
backbone is frozen afterwards like the reference's. (Rotation alone stayed near chance, 0.33 after 1,000 steps, in a
pilot; with the picture task the pilot's crops were told apart at 0.84 after 600 steps.)

The crops are grey-levelled at random (so that the teacher also sees 3-channel grey inputs, as the depth image is),
flipped, and normalised with ImageNet's statistics like the anomaly-detection inputs. Pretraining runs on the job's
device (``loop.job_device()``); the crops are cut on the CPU.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from neurips26.common import loop
from neurips26.common.optim import AdamW

from .model import Backbone

__all__ = ["NATURAL_IMAGES", "natural_images", "pretext_batch", "pretrain_teacher"]

# scikit-image's bundled photographs and textures (no download): the teacher's "ImageNet"
NATURAL_IMAGES = ("astronaut", "chelsea", "coffee", "rocket", "camera", "coins", "moon", "page", "text",
                  "immunohistochemistry", "hubble_deep_field", "retina", "colorwheel", "logo")  # fmt: skip
_MEAN = np.array([0.485, 0.456, 0.406], dtype=np.float32)
_STD = np.array([0.229, 0.224, 0.225], dtype=np.float32)


def natural_images(names: tuple[str, ...] = NATURAL_IMAGES) -> list[np.ndarray]:
    """The named scikit-image pictures as (H, W, 3) float32 in [0, 1]."""
    import skimage.data

    out = []
    for name in names:
        image = getattr(skimage.data, name)()
        image = image.astype(np.float32) / (255.0 if image.dtype == np.uint8 else max(1.0, float(image.max())))
        if image.ndim == 2:
            image = np.repeat(image[..., None], 3, -1)
        out.append(np.ascontiguousarray(image[..., :3]))
    return out


def pretext_batch(images: list[np.ndarray], size: int, n: int, rng: np.random.Generator,
                  grey: float = 0.3) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:  # fmt: skip
    """``n`` random ``size``-pixel crops (each from a random picture, zoomed out by 1-3x), randomly greyed and flipped,
    each rotated by a random multiple of 90 degrees: (N, 3, size, size) normalised inputs, (N,) picture labels and
    (N,) rotation labels."""
    crops = np.empty((n, size, size, 3), dtype=np.float32)
    pictures = rng.integers(0, len(images), n)
    labels = rng.integers(0, 4, n)
    for i in range(n):
        image = images[pictures[i]]
        stride = int(rng.integers(1, 4))
        span = size * stride
        while span > min(image.shape[:2]):
            stride -= 1
            span = size * stride
        r, c = rng.integers(0, image.shape[0] - span + 1), rng.integers(0, image.shape[1] - span + 1)
        crop = image[r : r + span : stride, c : c + span : stride]
        if rng.random() < grey:
            crop = np.repeat(crop.mean(-1, keepdims=True), 3, -1)
        if rng.random() < 0.5:
            crop = crop[:, ::-1]
        crops[i] = np.rot90(crop, labels[i])
    x = torch.from_numpy((crops - _MEAN) / _STD).permute(0, 3, 1, 2).contiguous()
    return x, torch.from_numpy(pictures), torch.from_numpy(labels)


def pretrain_teacher(widths: tuple[int, int, int], blocks: tuple[int, int, int], size: int, steps: int, batch: int,
                     lr: float, seed: int, loop_settings: loop.LoopSettings | None = None,
                     log: Callable[[str], None] | None = None,
                     device: torch.device | None = None) -> tuple[Backbone, list[dict]]:  # fmt: skip
    """A :class:`.model.Backbone` trained on the two pretext tasks on ``device`` (default: the job's); returns it
    frozen, on the CPU, and the per-step rows (step, loss, picture_accuracy, rotation_accuracy)."""
    device = loop.job_device() if device is None else torch.device(device)
    backbone = Backbone(widths, seed, blocks).to(device)
    backbone.requires_grad_(True)
    nn.Module.train(backbone, True)  # Backbone.train() keeps eval mode; pretraining needs batch statistics
    images = natural_images()
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed + 1)
        head = nn.Linear(widths[-1], len(images) + 4).to(device)
    params = list(backbone.parameters()) + list(head.parameters())
    optimiser = AdamW(params, lr, weight_decay=1e-4)
    rng = np.random.default_rng(seed)
    rows: list[dict] = []
    k = len(images)

    def step_fn(step: int):
        x, picture, rotation = (t.to(device) for t in pretext_batch(images, size, batch, rng))
        logits = head(backbone(x)[-1].mean((2, 3)))
        loss = F.cross_entropy(logits[:, :k], picture) + F.cross_entropy(logits[:, k:], rotation)
        for p in params:
            p.grad = None
        loss.backward()
        optimiser.step()
        rows.append({"step": step + 1, "loss": float(loss.detach()),
                     "picture_accuracy": float((logits[:, :k].argmax(1) == picture).float().mean()),
                     "rotation_accuracy": float((logits[:, k:].argmax(1) == rotation).float().mean())})  # fmt: skip
        if log and (step + 1) % max(1, steps // 5) == 0:
            r = rows[-1]
            log(f"teacher step {step + 1}: loss {r['loss']:.3f}, picture accuracy {r['picture_accuracy']:.2f}, "
                f"rotation accuracy {r['rotation_accuracy']:.2f}")  # fmt: skip
        return loss

    state = {"backbone": backbone, "head": head, "optimiser": optimiser, "batches": rng, "rows": rows}
    loop.run_loop(step_fn, steps, state, loop_settings)
    backbone.requires_grad_(False)
    backbone.eval()
    return backbone.cpu(), rows
