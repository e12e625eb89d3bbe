"""Feature networks for AnaDiffusion's regional Frechet distance (arXiv 2608.23014, Table 1: "MedicalNet FID" per
region: whole brain, left and right hemisphere, cerebellum-brainstem, seam).

* Paper scale: MedicalNet (Chen, Ma and Zheng 2019, "Med3D", Tencent/MedicalNet), a 3D ResNet pretrained on 23
  medical segmentation datasets. The architecture is MONAI's `monai.networks.nets.resnet10/18/50` (spatial_dims=3,
  one input channel, MedicalNet's shortcut type and downsample bias from MONAI's
  `get_medicalnet_pretrained_resnet_args`) with MedicalNet's geometry: a 7^3 stride-2 stem, layer3 and layer4 at
  stride 1 with dilation 2 and 4 (MONAI strides them by 2 instead). Features are the global average of layer4
  (512-d for ResNet-10/18, 2048-d for ResNet-50), as 3D FID evaluations of brain MRI generators do. The weights come
  from the project's download rule with a pinned hash; `load_medicalnet` maps MedicalNet's checkpoint layout (a
  `state_dict` entry, DataParallel's `module.` prefix, the segmentation head `conv_seg.*`, which is dropped) and
  refuses any other mismatch by name. Each input volume is z-scored (mean and SD over all its voxels, the -1
  background included; MedicalNet trained on z-scored volumes); which depth and normalisation the paper used is
  not published.
* Quick scale: `rand3d`, a PROXY, not MedicalNet: a fixed-seed random 3D CNN (three 3^3 stride-2 convolutions with
  16/32/64 channels and ReLU, He-normal weights drawn from numpy's PCG64 so the network is the same on every
  machine) whose channel-wise spatial mean and standard deviation give 128 features.

Regional features: the network sees the volume masked to the region, with background (-1, the paper's [-1, 1]
scaling) outside it.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from functools import partial
from pathlib import Path

import numpy as np
import torch
from torch import nn
from torch.nn import functional as F

from neurips26.anadiffusion.metrics import check_scaled_volumes
from neurips26.anadiffusion.monai_import import monai_module

__all__ = [
    "FEATURE_NETWORKS",
    "MEDICALNET_DEPTHS",
    "REGIONS",
    "FeatureNetwork",
    "RandomProxy3D",
    "build_feature_network",
    "load_medicalnet",
    "load_medicalnet_state",
    "masked_to_region",
    "medicalnet_backbone",
    "regional_features",
    "volume_features",
]

REGIONS = ("whole", "LH", "RH", "CB", "seam")  # the columns of the paper's Table 1
BACKGROUND = -1.0
_SEGMENTATION_HEAD = "conv_seg."  # MedicalNet's decoder, absent from a feature extractor


class RandomProxy3D(nn.Module):
    """A PROXY feature network, not MedicalNet: fixed-seed random 3D convolutions (3^3, stride 2, padding 1, ReLU)
    with `channels` outputs each, then the spatial mean and standard deviation of every channel of the last layer
    (2 * channels[-1] features). Weights are He-normal from numpy's PCG64 with `seed`, biases 0, never trained."""

    def __init__(self, channels: tuple[int, ...] = (16, 32, 64), seed: int = 0):
        super().__init__()
        if not channels or any(int(c) < 1 for c in channels):
            raise ValueError(f"channels must be positive integers, got {channels!r}")
        rng = np.random.default_rng(seed)
        convs, previous = [], 1
        for width in channels:
            conv = nn.Conv3d(previous, int(width), kernel_size=3, stride=2, padding=1)
            std = np.sqrt(2.0 / (previous * 27))
            conv.weight.data = torch.from_numpy(rng.normal(0.0, std, size=conv.weight.shape).astype(np.float32))
            conv.bias.data.zero_()
            convs.append(conv)
            previous = int(width)
        self.convs = nn.ModuleList(convs)
        self.requires_grad_(False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        for conv in self.convs:
            x = F.relu(conv(x))
        flat = x.flatten(2)
        return torch.cat([flat.mean(-1), flat.std(-1, correction=0)], dim=1)


# ------------------------------------------------------------------------------------------------------- MedicalNet


def _medicalnet_builders() -> dict[int, Callable]:
    nets = monai_module("monai.networks.nets")
    return {10: nets.resnet10, 18: nets.resnet18, 50: nets.resnet50}


MEDICALNET_DEPTHS = (10, 18, 50)
_LAYER_DILATION = {"layer3": 2, "layer4": 4}  # MedicalNet's models/resnet.py: stride 1, dilated


def medicalnet_backbone(depth: int = 10) -> nn.Module:
    """MedicalNet's 3D ResNet-`depth` encoder (random weights), built with MONAI and given MedicalNet's strides and
    dilations; its forward returns the global average of layer4 (B, 512 or 2048)."""
    if depth not in MEDICALNET_DEPTHS:
        raise ValueError(f"MedicalNet depth must be one of {MEDICALNET_DEPTHS}, got {depth!r}")
    resnet = monai_module("monai.networks.nets.resnet")

    bias_downsample, shortcut_type = resnet.get_medicalnet_pretrained_resnet_args(depth)
    model = _medicalnet_builders()[depth](
        spatial_dims=3,
        n_input_channels=1,
        conv1_t_size=7,
        conv1_t_stride=2,
        shortcut_type=shortcut_type,
        bias_downsample=bias_downsample,
        feed_forward=False,
    )
    for name, dilation in _LAYER_DILATION.items():
        for block in getattr(model, name):
            for conv in block.modules():
                if isinstance(conv, nn.Conv3d):
                    conv.stride = (1, 1, 1)
                    if conv.kernel_size == (3, 3, 3):
                        conv.dilation, conv.padding = (dilation,) * 3, (dilation,) * 3
            if isinstance(block.downsample, partial):  # shortcut type A: strided average pool and zero channels
                block.downsample = partial(block.downsample.func, **{**block.downsample.keywords, "stride": 1})
    return model.eval()


def load_medicalnet_state(model: nn.Module, checkpoint: Mapping, depth: int, source: str = "checkpoint") -> None:
    """Loads a MedicalNet checkpoint into `model` (from `medicalnet_backbone(depth)`): takes its `state_dict` entry
    when present, strips DataParallel's `module.` prefix, drops the segmentation head (`conv_seg.*`), and refuses
    missing keys, unexpected keys and shape mismatches with their names (BatchNorm's `num_batches_tracked`, absent
    from old checkpoints, may be missing)."""
    state = checkpoint.get("state_dict", checkpoint) if isinstance(checkpoint, Mapping) else None
    if not isinstance(state, Mapping) or not state:
        raise ValueError(f"{source}: not a state dict (a mapping of parameter names to tensors)")
    mapped = {}
    for key, value in state.items():
        name = key[len("module.") :] if key.startswith("module.") else key
        if not name.startswith(_SEGMENTATION_HEAD):
            mapped[name] = value
    expected = model.state_dict()
    missing = [k for k in expected if k not in mapped and not k.endswith("num_batches_tracked")]
    unexpected = [k for k in mapped if k not in expected]
    if missing or unexpected:
        raise ValueError(
            f"{source}: not a MedicalNet ResNet-{depth} checkpoint: {len(missing)} missing keys {missing[:4]}, "
            f"{len(unexpected)} unexpected keys {unexpected[:4]}"
        )
    for key, value in mapped.items():
        if tuple(value.shape) != tuple(expected[key].shape):
            raise ValueError(
                f"{source}: {key} has shape {tuple(value.shape)}, MedicalNet ResNet-{depth} expects "
                f"{tuple(expected[key].shape)}"
            )
    model.load_state_dict({**expected, **mapped})


def load_medicalnet(path: str | Path, depth: int = 10) -> nn.Module:
    """MedicalNet ResNet-`depth` with the weights of the checkpoint file at `path` (e.g. resnet_10_23dataset.pth);
    the file's hash is checked by the download rule, not here."""
    path = Path(path)
    if not path.is_file():
        raise ValueError(f"MedicalNet weights {path} do not exist; fetch them with the download rule")
    model = medicalnet_backbone(depth)
    load_medicalnet_state(model, torch.load(path, map_location="cpu", weights_only=True), depth, source=str(path))
    return model.eval()


# --------------------------------------------------------------------------------------------------- the registry


def _zscore(x: torch.Tensor) -> torch.Tensor:
    flat = x.flatten(1)
    mean, std = flat.mean(1), flat.std(1, correction=0).clamp_min(1e-6)
    return (x - mean.view(-1, *[1] * (x.ndim - 1))) / std.view(-1, *[1] * (x.ndim - 1))


class FeatureNetwork(nn.Module):
    """A named feature network: `normalise` applied to each input volume (B, 1, D, H, W), then `backbone`, giving
    (B, feature_dim). `proxy` is True where it stands in for the paper's network."""

    def __init__(self, name: str, backbone: nn.Module, proxy: bool, zscore: bool):
        super().__init__()
        self.name, self.proxy, self.zscore = name, proxy, zscore
        self.backbone = backbone.eval().requires_grad_(False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.backbone(_zscore(x) if self.zscore else x)


def _rand3d(weights, seed: int) -> FeatureNetwork:
    if weights is not None:
        raise ValueError("rand3d is a fixed-seed random network: it takes a seed, not weights")
    return FeatureNetwork("rand3d", RandomProxy3D(seed=seed), proxy=True, zscore=False)


def _medicalnet(weights, seed: int, depth: int) -> FeatureNetwork:
    if weights is None:
        raise ValueError(f"medicalnet_resnet{depth} needs its pretrained weights file (the download rule's output)")
    return FeatureNetwork(f"medicalnet_resnet{depth}", load_medicalnet(weights, depth), proxy=False, zscore=True)


FEATURE_NETWORKS: dict[str, Callable[..., FeatureNetwork]] = {
    "rand3d": _rand3d,
    **{f"medicalnet_resnet{d}": partial(_medicalnet, depth=d) for d in MEDICALNET_DEPTHS},
}


def build_feature_network(name: str, weights: str | Path | None = None, seed: int = 0) -> FeatureNetwork:
    """The feature network `name` of FEATURE_NETWORKS: `rand3d` (proxy; `seed`) or `medicalnet_resnet{10,18,50}`
    (`weights`: the MedicalNet checkpoint file)."""
    if name not in FEATURE_NETWORKS:
        raise ValueError(f"unknown feature network {name!r}; known: {sorted(FEATURE_NETWORKS)}")
    return FEATURE_NETWORKS[name](weights, seed)


# --------------------------------------------------------------------------------------------- regional features


def _check_mask(mask, volumes: np.ndarray, name: str) -> np.ndarray:
    mask = np.asarray(mask)
    if mask.dtype != bool:
        raise ValueError(f"region {name}: mask must be boolean, got {mask.dtype}")
    if mask.shape not in (volumes.shape[1:], volumes.shape):
        raise ValueError(f"region {name}: mask shape {mask.shape} is neither {volumes.shape[1:]} nor {volumes.shape}")
    empty = mask.reshape(-1, *volumes.shape[1:]).sum(axis=(1, 2, 3)) == 0
    if empty.any():
        raise ValueError(f"region {name}: mask is empty (volume {int(np.argmax(empty))})")
    return mask


def masked_to_region(volumes: torch.Tensor, mask: torch.Tensor, background: float = BACKGROUND) -> torch.Tensor:
    """`volumes` (B, D, H, W) inside `mask` (D, H, W or B, D, H, W), `background` outside."""
    return torch.where(mask, volumes, torch.as_tensor(background, dtype=volumes.dtype, device=volumes.device))


@torch.no_grad()
def regional_features(
    network: nn.Module,
    volumes,
    regions: Mapping[str, np.ndarray],
    batch_size: int = 8,
    device: str | torch.device = "cpu",
    background: float = BACKGROUND,
) -> dict[str, np.ndarray]:
    """Features (N, feature_dim) per region of `volumes` (N, D, H, W) in [-1, 1]: `network` applied to each volume
    masked to the region's mask (D, H, W for a fixed template region, or N, D, H, W per volume), `background`
    outside. `batch_size` volumes at a time on `device`; float64 on the CPU."""
    volumes = check_scaled_volumes(volumes)
    masks = {name: _check_mask(mask, volumes, name) for name, mask in regions.items()}
    if not masks:
        raise ValueError("regions is empty: name at least one region mask")
    network = network.to(device).eval()
    out: dict[str, list[np.ndarray]] = {name: [] for name in masks}
    for start in range(0, len(volumes), batch_size):
        batch = torch.as_tensor(volumes[start : start + batch_size], dtype=torch.float32, device=device)
        for name, mask in masks.items():
            region = mask if mask.ndim == 3 else mask[start : start + batch_size]
            inputs = masked_to_region(batch, torch.as_tensor(region, device=device), background)
            out[name].append(network(inputs[:, None]).double().cpu().numpy())
    return {name: np.concatenate(parts) for name, parts in out.items()}


def volume_features(network: nn.Module, volumes, batch_size: int = 8, device: str | torch.device = "cpu"):
    """Features (N, feature_dim) of whole volumes (N, D, H, W) in [-1, 1], no mask."""
    volumes = check_scaled_volumes(volumes)
    whole = np.ones(volumes.shape[1:], dtype=bool)
    return regional_features(network, volumes, {"volume": whole}, batch_size, device)["volume"]
