"""The classifiers trained on each label condition (arXiv 2605.18648 trains one small image classifier per label
condition; its architecture is not given in what we could read, so these are ours).

- :class:`ConvNet`: two 3x3 convolutions (ReLU, 2x2 max pooling after each) and a one-hidden-layer MLP head, the
  usual small MNIST network; ``convnet_tiny`` is the quick-scale size, ``convnet_small`` the MNIST paper-scale size.
- :class:`ResNet`: a small ResNet (He et al. 2016) for 32x32 colour images (CIFAR-10 / CIFAR-10H): a 3x3 stem, three
  stages of basic blocks (stride 2 between stages), global average pooling, a linear head. GroupNorm stands where
  ResNet has BatchNorm, so that a member's output does not depend on the other items of its batch and the members
  of a seed-batched ensemble (``torch.vmap``) carry no running statistics.

Every network maps images (B, C, H, W) to logits (B, K). :func:`build_classifier` builds one from the registry
``MODELS`` of named sizes.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

from neurips26.common.validation import check_int

from .sizes import MODELS, ClassifierSize

__all__ = ["MODELS", "ClassifierSize", "ConvNet", "ResNet", "build_classifier", "n_parameters"]


class ConvNet(nn.Module):
    """conv3x3(C -> w1) - ReLU - maxpool2 - conv3x3(w1 -> w2) - ReLU - maxpool2 - Linear(hidden) - ReLU - Linear(K).

    Padding keeps each convolution's size, so a side of H gives H // 4 after the two poolings."""

    def __init__(self, in_channels: int, image_size: int, num_classes: int, widths: tuple[int, int], hidden: int):
        super().__init__()
        if image_size < 4:
            raise ValueError(f"ConvNet needs images of at least 4 x 4 pixels (two 2x2 poolings), got {image_size}")
        w1, w2 = widths
        self.conv1 = nn.Conv2d(in_channels, w1, 3, padding=1)
        self.conv2 = nn.Conv2d(w1, w2, 3, padding=1)
        self.fc = nn.Linear(w2 * (image_size // 4) ** 2, hidden)
        self.head = nn.Linear(hidden, num_classes)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = F.max_pool2d(F.relu(self.conv1(x)), 2)
        x = F.max_pool2d(F.relu(self.conv2(x)), 2)
        return self.head(F.relu(self.fc(x.flatten(1))))


class _BasicBlock(nn.Module):
    """Two 3x3 convolutions with GroupNorm, plus the input (a 1x1 strided projection where the shape changes)."""

    def __init__(self, c_in: int, c_out: int, stride: int, groups: int):
        super().__init__()
        self.conv1 = nn.Conv2d(c_in, c_out, 3, stride, 1, bias=False)
        self.norm1 = nn.GroupNorm(groups, c_out)
        self.conv2 = nn.Conv2d(c_out, c_out, 3, 1, 1, bias=False)
        self.norm2 = nn.GroupNorm(groups, c_out)
        self.skip = (
            nn.Identity()
            if stride == 1 and c_in == c_out
            else nn.Sequential(nn.Conv2d(c_in, c_out, 1, stride, bias=False), nn.GroupNorm(groups, c_out))
        )

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        out = F.relu(self.norm1(self.conv1(x)))
        return F.relu(self.norm2(self.conv2(out)) + self.skip(x))


class ResNet(nn.Module):
    """A small ResNet: conv3x3(C -> widths[0]) - GroupNorm - ReLU, then one stage of `blocks` basic blocks per
    width (the first block of every stage but the first halves the side), global average pooling, Linear(K)."""

    def __init__(
        self, in_channels: int, image_size: int, num_classes: int, widths: tuple[int, ...], blocks: int, groups: int
    ):
        super().__init__()
        if any(w % groups for w in widths):
            raise ValueError(f"ResNet widths {widths} must be divisible by the GroupNorm groups ({groups})")
        if image_size < 2 ** (len(widths) - 1):
            raise ValueError(f"ResNet with {len(widths)} stages needs images of at least {2 ** (len(widths) - 1)} px")
        self.stem = nn.Sequential(
            nn.Conv2d(in_channels, widths[0], 3, 1, 1, bias=False), nn.GroupNorm(groups, widths[0]), nn.ReLU()
        )
        layers, c_in = [], widths[0]
        for stage, width in enumerate(widths):
            for b in range(blocks):
                layers.append(_BasicBlock(c_in, width, 2 if stage > 0 and b == 0 else 1, groups))
                c_in = width
        self.stages = nn.Sequential(*layers)
        self.head = nn.Linear(c_in, num_classes)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.head(self.stages(self.stem(x)).mean(dim=(2, 3)))


def _convnet(size: ClassifierSize, in_channels: int, image_size: int, num_classes: int) -> nn.Module:
    return ConvNet(in_channels, image_size, num_classes, (size.widths[0], size.widths[1]), size.hidden)


def _resnet(size: ClassifierSize, in_channels: int, image_size: int, num_classes: int) -> nn.Module:
    return ResNet(in_channels, image_size, num_classes, size.widths, size.blocks, size.groups)


ARCHS = {"convnet": _convnet, "resnet": _resnet}


def build_classifier(name: str, in_channels: int, image_size: int, num_classes: int) -> nn.Module:
    """The classifier of size `name` (a key of ``MODELS``) for square images of `image_size` pixels with
    `in_channels` channels and `num_classes` classes; its initialisation draws from torch's global generator."""
    if name not in MODELS:
        raise ValueError(f"unknown classifier size {name!r} (allowed values: {', '.join(sorted(MODELS))})")
    check_int("in_channels", in_channels, 1, who="build_classifier")
    check_int("image_size", image_size, 1, who="build_classifier")
    check_int("num_classes", num_classes, 2, who="build_classifier")
    size = MODELS[name]
    return ARCHS[size.arch](size, in_channels, image_size, num_classes)


def n_parameters(model: nn.Module) -> int:
    """The number of trainable parameters of `model`."""
    return sum(p.numel() for p in model.parameters() if p.requires_grad)
