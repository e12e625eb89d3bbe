"""The classifier sizes of paper 15 by name, without torch: the config check run when the workflow is parsed reads the
names, and :mod:`.model` builds the networks from them."""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["MODELS", "ClassifierSize"]


@dataclass(frozen=True)
class ClassifierSize:
    """A named size: the architecture (a key of ``ARCHS``) and its width settings."""

    arch: str
    widths: tuple[int, ...]
    hidden: int = 0  # ConvNet: the MLP's hidden width
    blocks: int = 1  # ResNet: basic blocks per stage
    groups: int = 8  # ResNet: GroupNorm groups


MODELS: dict[str, ClassifierSize] = {
    "convnet_tiny": ClassifierSize("convnet", (8, 16), hidden=64),  # quick and smoke scale, 28x28 grey digits
    "convnet_small": ClassifierSize("convnet", (32, 64), hidden=128),  # MNIST at paper scale
    "resnet_small": ClassifierSize("resnet", (32, 64, 128), blocks=2),  # CIFAR-10 / CIFAR-10H at paper scale
}
