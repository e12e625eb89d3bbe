"""The Inception-v3 network of FID (pool3, 2048-d features), in plain torch.

This is pytorch-fid's `fid_inception_v3` (mseitzer/pytorch-fid): the TensorFlow graph
`inception-2015-12-05` (download.tensorflow.org/models/image/imagenet/inception-2015-12-05.tgz)
that the original TTUR FID code uses, ported to PyTorch. Its weights are the file
`pt_inception-2015-12-05-6726825d.pth` (95,628,359 bytes, sha256
6726825d0af5f729cebd5821db510b11b1cfad8faad88a03f1befd49fb9129b2), released at
https://github.com/mseitzer/pytorch-fid/releases/download/fid_weights/ and, under the name
`weights-inception-2015-12-05-6726825d.pth`, by torch-fidelity. Nothing here downloads it.

Module and parameter names follow torchvision's `Inception3` without `AuxLogits` and with a
1008-way `fc`, so the file loads with `strict=True`. The network differs from torchvision's where
TensorFlow's graph does: the average pools of Mixed_5b-5d, 6b-6e and 7b leave the zero padding
out of the mean (`count_include_pad=False`), and Mixed_7c max-pools (3x3) before its
`branch_pool`. Inputs are prepared as pytorch-fid does with `resize_input=True,
normalize_input=True`: images in [0, 1], bilinear resize to 299x299 (align_corners=False),
then `2 x - 1`.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

INPUT_SIZE = 299
FEATURE_DIM = 2048
NUM_CLASSES = 1008  # the graph's softmax layer: unused for FID, but in the weights file
WEIGHTS_NAME = "pt_inception-2015-12-05-6726825d.pth"


class BasicConv2d(nn.Module):
    """Conv (no bias) -> BatchNorm (eps 1e-3) -> ReLU."""

    def __init__(self, in_channels: int, out_channels: int, **conv_kwargs) -> None:
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, bias=False, **conv_kwargs)
        self.bn = nn.BatchNorm2d(out_channels, eps=0.001)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return F.relu(self.bn(self.conv(x)))


def _avg_pool_no_pad() -> nn.Module:
    """TensorFlow's 3x3 'SAME' average pool: the padded zeros do not count in the mean."""
    return nn.AvgPool2d(kernel_size=3, stride=1, padding=1, count_include_pad=False)


class FIDInceptionA(nn.Module):
    """Mixed_5b/5c/5d (35x35)."""

    def __init__(self, in_channels: int, pool_features: int) -> None:
        super().__init__()
        self.branch1x1 = BasicConv2d(in_channels, 64, kernel_size=1)
        self.branch5x5_1 = BasicConv2d(in_channels, 48, kernel_size=1)
        self.branch5x5_2 = BasicConv2d(48, 64, kernel_size=5, padding=2)
        self.branch3x3dbl_1 = BasicConv2d(in_channels, 64, kernel_size=1)
        self.branch3x3dbl_2 = BasicConv2d(64, 96, kernel_size=3, padding=1)
        self.branch3x3dbl_3 = BasicConv2d(96, 96, kernel_size=3, padding=1)
        self.pool = _avg_pool_no_pad()
        self.branch_pool = BasicConv2d(in_channels, pool_features, kernel_size=1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        b1 = self.branch1x1(x)
        b5 = self.branch5x5_2(self.branch5x5_1(x))
        b3 = self.branch3x3dbl_3(self.branch3x3dbl_2(self.branch3x3dbl_1(x)))
        bp = self.branch_pool(self.pool(x))
        return torch.cat([b1, b5, b3, bp], 1)


class InceptionB(nn.Module):
    """Mixed_6a: 35x35 -> 17x17."""

    def __init__(self, in_channels: int) -> None:
        super().__init__()
        self.branch3x3 = BasicConv2d(in_channels, 384, kernel_size=3, stride=2)
        self.branch3x3dbl_1 = BasicConv2d(in_channels, 64, kernel_size=1)
        self.branch3x3dbl_2 = BasicConv2d(64, 96, kernel_size=3, padding=1)
        self.branch3x3dbl_3 = BasicConv2d(96, 96, kernel_size=3, stride=2)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        b3 = self.branch3x3(x)
        b3dbl = self.branch3x3dbl_3(self.branch3x3dbl_2(self.branch3x3dbl_1(x)))
        bp = F.max_pool2d(x, kernel_size=3, stride=2)
        return torch.cat([b3, b3dbl, bp], 1)


class FIDInceptionC(nn.Module):
    """Mixed_6b..6e (17x17) with factorised 7x7 convolutions of width c7."""

    def __init__(self, in_channels: int, channels_7x7: int) -> None:
        super().__init__()
        c7 = channels_7x7
        self.branch1x1 = BasicConv2d(in_channels, 192, kernel_size=1)
        self.branch7x7_1 = BasicConv2d(in_channels, c7, kernel_size=1)
        self.branch7x7_2 = BasicConv2d(c7, c7, kernel_size=(1, 7), padding=(0, 3))
        self.branch7x7_3 = BasicConv2d(c7, 192, kernel_size=(7, 1), padding=(3, 0))
        self.branch7x7dbl_1 = BasicConv2d(in_channels, c7, kernel_size=1)
        self.branch7x7dbl_2 = BasicConv2d(c7, c7, kernel_size=(7, 1), padding=(3, 0))
        self.branch7x7dbl_3 = BasicConv2d(c7, c7, kernel_size=(1, 7), padding=(0, 3))
        self.branch7x7dbl_4 = BasicConv2d(c7, c7, kernel_size=(7, 1), padding=(3, 0))
        self.branch7x7dbl_5 = BasicConv2d(c7, 192, kernel_size=(1, 7), padding=(0, 3))
        self.pool = _avg_pool_no_pad()
        self.branch_pool = BasicConv2d(in_channels, 192, kernel_size=1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        b1 = self.branch1x1(x)
        b7 = self.branch7x7_3(self.branch7x7_2(self.branch7x7_1(x)))
        b7dbl = self.branch7x7dbl_1(x)
        for conv in (
            self.branch7x7dbl_2,
            self.branch7x7dbl_3,
            self.branch7x7dbl_4,
            self.branch7x7dbl_5,
        ):
            b7dbl = conv(b7dbl)
        bp = self.branch_pool(self.pool(x))
        return torch.cat([b1, b7, b7dbl, bp], 1)


class InceptionD(nn.Module):
    """Mixed_7a: 17x17 -> 8x8."""

    def __init__(self, in_channels: int) -> None:
        super().__init__()
        self.branch3x3_1 = BasicConv2d(in_channels, 192, kernel_size=1)
        self.branch3x3_2 = BasicConv2d(192, 320, kernel_size=3, stride=2)
        self.branch7x7x3_1 = BasicConv2d(in_channels, 192, kernel_size=1)
        self.branch7x7x3_2 = BasicConv2d(192, 192, kernel_size=(1, 7), padding=(0, 3))
        self.branch7x7x3_3 = BasicConv2d(192, 192, kernel_size=(7, 1), padding=(3, 0))
        self.branch7x7x3_4 = BasicConv2d(192, 192, kernel_size=3, stride=2)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        b3 = self.branch3x3_2(self.branch3x3_1(x))
        b7 = self.branch7x7x3_4(self.branch7x7x3_3(self.branch7x7x3_2(self.branch7x7x3_1(x))))
        bp = F.max_pool2d(x, kernel_size=3, stride=2)
        return torch.cat([b3, b7, bp], 1)


class FIDInceptionE(nn.Module):
    """Mixed_7b/7c (8x8) with split 1x3 / 3x1 convolutions; `pool` comes before `branch_pool`."""

    def __init__(self, in_channels: int, pool: nn.Module) -> None:
        super().__init__()
        self.branch1x1 = BasicConv2d(in_channels, 320, kernel_size=1)
        self.branch3x3_1 = BasicConv2d(in_channels, 384, kernel_size=1)
        self.branch3x3_2a = BasicConv2d(384, 384, kernel_size=(1, 3), padding=(0, 1))
        self.branch3x3_2b = BasicConv2d(384, 384, kernel_size=(3, 1), padding=(1, 0))
        self.branch3x3dbl_1 = BasicConv2d(in_channels, 448, kernel_size=1)
        self.branch3x3dbl_2 = BasicConv2d(448, 384, kernel_size=3, padding=1)
        self.branch3x3dbl_3a = BasicConv2d(384, 384, kernel_size=(1, 3), padding=(0, 1))
        self.branch3x3dbl_3b = BasicConv2d(384, 384, kernel_size=(3, 1), padding=(1, 0))
        self.pool = pool
        self.branch_pool = BasicConv2d(in_channels, 192, kernel_size=1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        b1 = self.branch1x1(x)
        b3 = self.branch3x3_1(x)
        b3 = torch.cat([self.branch3x3_2a(b3), self.branch3x3_2b(b3)], 1)
        b3dbl = self.branch3x3dbl_2(self.branch3x3dbl_1(x))
        b3dbl = torch.cat([self.branch3x3dbl_3a(b3dbl), self.branch3x3dbl_3b(b3dbl)], 1)
        bp = self.branch_pool(self.pool(x))
        return torch.cat([b1, b3, b3dbl, bp], 1)


class FIDInceptionE_1(FIDInceptionE):
    """Mixed_7b: average pool without the padded zeros."""

    def __init__(self, in_channels: int) -> None:
        super().__init__(in_channels, _avg_pool_no_pad())


class FIDInceptionE_2(FIDInceptionE):
    """Mixed_7c: the TensorFlow graph max-pools here (3x3, stride 1, pad 1), not average-pools."""

    def __init__(self, in_channels: int) -> None:
        super().__init__(in_channels, nn.MaxPool2d(kernel_size=3, stride=1, padding=1))


def fid_preprocess(images01: torch.Tensor) -> torch.Tensor:
    """pytorch-fid's input transform: (N, 3, H, W) in [0, 1] -> bilinear 299x299 -> [-1, 1]."""
    x = F.interpolate(images01, size=(INPUT_SIZE, INPUT_SIZE), mode="bilinear", align_corners=False)
    return 2 * x - 1


class FIDInceptionV3(nn.Module):
    """Maps images (N, 3, H, W) in [0, 1] to the 2048-d pool3 features (N, 2048)."""

    def __init__(self) -> None:
        super().__init__()
        self.Conv2d_1a_3x3 = BasicConv2d(3, 32, kernel_size=3, stride=2)
        self.Conv2d_2a_3x3 = BasicConv2d(32, 32, kernel_size=3)
        self.Conv2d_2b_3x3 = BasicConv2d(32, 64, kernel_size=3, padding=1)
        self.maxpool1 = nn.MaxPool2d(kernel_size=3, stride=2)
        self.Conv2d_3b_1x1 = BasicConv2d(64, 80, kernel_size=1)
        self.Conv2d_4a_3x3 = BasicConv2d(80, 192, kernel_size=3)
        self.maxpool2 = nn.MaxPool2d(kernel_size=3, stride=2)
        self.Mixed_5b = FIDInceptionA(192, pool_features=32)
        self.Mixed_5c = FIDInceptionA(256, pool_features=64)
        self.Mixed_5d = FIDInceptionA(288, pool_features=64)
        self.Mixed_6a = InceptionB(288)
        self.Mixed_6b = FIDInceptionC(768, channels_7x7=128)
        self.Mixed_6c = FIDInceptionC(768, channels_7x7=160)
        self.Mixed_6d = FIDInceptionC(768, channels_7x7=160)
        self.Mixed_6e = FIDInceptionC(768, channels_7x7=192)
        self.Mixed_7a = InceptionD(768)
        self.Mixed_7b = FIDInceptionE_1(1280)
        self.Mixed_7c = FIDInceptionE_2(2048)
        self.fc = nn.Linear(FEATURE_DIM, NUM_CLASSES)  # unused: there for the strict load

    def forward(self, images01: torch.Tensor) -> torch.Tensor:
        x = fid_preprocess(images01)
        x = self.Conv2d_2b_3x3(self.Conv2d_2a_3x3(self.Conv2d_1a_3x3(x)))
        x = self.maxpool1(x)
        x = self.maxpool2(self.Conv2d_4a_3x3(self.Conv2d_3b_1x1(x)))
        for name in ("5b", "5c", "5d", "6a", "6b", "6c", "6d", "6e", "7a", "7b", "7c"):
            x = getattr(self, f"Mixed_{name}")(x)
        return x.mean(dim=(2, 3))  # global average pool: pool3


def load_inception(path: str | Path, device: str | torch.device = "cpu") -> FIDInceptionV3:
    """The FID network with the weights at `path`, loaded strictly, in eval mode on `device`."""
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"Inception weights not found: {path} (expected {WEIGHTS_NAME})")
    model = FIDInceptionV3()
    try:
        model.load_state_dict(torch.load(path, map_location="cpu", weights_only=True), strict=True)
    except Exception as err:  # unreadable file, wrong keys or wrong shapes: say which file, and why
        msg = f"{path} is not the FID Inception-v3 state dict ({WEIGHTS_NAME}): {err}"
        raise ValueError(msg) from err
    return model.to(device).eval().requires_grad_(False)


def _check_images(images: torch.Tensor) -> None:
    if images.ndim != 4 or images.shape[1] not in (1, 3):
        raise ValueError(f"images must have shape (N, 1 or 3, H, W), got {tuple(images.shape)}")


def to_rgb(images: torch.Tensor) -> torch.Tensor:
    """Repeat a single (grayscale) channel to three; three-channel images pass unchanged."""
    _check_images(images)
    return images.repeat(1, 3, 1, 1) if images.shape[1] == 1 else images


def inception_features(model: nn.Module, images, batch: int = 100, device: str | torch.device = "cpu") -> np.ndarray:
    """pool3 features (N, 2048), float64, of images (N, 1 or 3, H, W) in [-1, 1], in batches."""
    images = torch.as_tensor(images)
    _check_images(images)
    if batch < 1:
        raise ValueError(f"batch must be positive, got {batch}")
    model.eval()
    out = []
    with torch.no_grad():
        for start in range(0, images.shape[0], batch):
            chunk = to_rgb(images[start : start + batch]).to(device=device, dtype=torch.float32)
            out.append(model((chunk + 1) / 2).double().cpu().numpy())
    return np.concatenate(out) if out else np.zeros((0, FEATURE_DIM))
