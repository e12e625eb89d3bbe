r"""AnaDiffusion's networks: one 3D autoencoder and the latent denoisers, built from MONAI's ``AutoencoderKL`` and
``DiffusionModelUNet`` (the networks of Pinaya et al. 2022, "Brain imaging generation with latent diffusion
models", which the paper builds on; arXiv 2608.23014, project page AnaDiffusion/AnaDiffusion.github.io).

* :class:`LatentAutoencoder` wraps ``AutoencoderKL``: ``forward(x, eps)`` is the training pass with the
  reparametrisation noise passed in (MONAI's own ``sampling`` draws it from the global generator, which neither a
  seeded run nor ``torch.vmap`` can control); ``encode`` / ``decode`` map between [-1, 1] volumes and the scaled
  latent the denoisers see (``z = scale * mu``, ``scale = 1 / std`` of the training latents, Rombach et al. 2022, as
  MONAI's LDM tutorials set it). One autoencoder serves the parts and the whole brain (it is fully convolutional).
* The denoisers (:func:`build_denoisers`): per the project page, "a shared, side-conditioned hemisphere model and a
  dedicated CB model", trained first and frozen, and a whole-brain latent model. The side (left 0, right 1) enters
  the shared model as a class embedding (``num_class_embeds=2``, ``class_labels``), added to the time embedding;
  the page does not say how the side is encoded. ``part_model="separate"`` (two hemisphere models) is the paper's
  Table 2 ablation. :data:`PART_MODELS` says which denoiser and which side label generate each part.
* Shapes: MONAI's U-Net halves the latent ``levels - 1`` times and concatenates skips of equal size, so every
  latent side must be divisible by ``2 ** (levels - 1)``; the autoencoder halves the image ``levels - 1`` times.
  :func:`latent_shape` refuses a shape either would refuse, naming the part and the side.

Sizes (:data:`AUTOENCODERS`, :data:`DENOISERS`): the paper publishes none. ``paper`` takes those of the first
author's public research repository ``tracyhann/3D_Brain_partsLDM`` (configs ``*_AE_spacing1p5.json``,
``*_LDM_spacing1p5.json``: autoencoder channels (64, 128, 256), no attention, 8 latent channels; U-Net (256, 256,
512) with attention at the two coarser levels, 64 channels per head), which is secondary evidence, not the paper.
``quick`` is ours: one downsampling (x2) to 3 latent channels and a 2-level U-Net of (16, 32) channels, whose only
attention is the one MONAI's U-Net always has in its middle block (that block needs ``einops``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

import torch
from torch import nn

from neurips26.common.ensemble import Ensemble
from neurips26.common.validation import check_choice, choice, integer, validate

from .monai_import import monai_module

__all__ = [
    "AUTOENCODERS",
    "DENOISERS",
    "PARTS",
    "PART_MODELS",
    "SIDES",
    "AutoencoderConfig",
    "DenoiserConfig",
    "LatentAutoencoder",
    "PartRoute",
    "as_denoise",
    "build_autoencoder",
    "build_denoiser",
    "build_denoisers",
    "denoiser_names",
    "denoiser_routes",
    "latent_shape",
    "n_parameters",
    "part_latent_shapes",
]

PARTS = ("LH", "RH", "CB")  # left hemisphere, right hemisphere, cerebellum-brainstem complex
SIDES = {"left": 0, "right": 1}  # the shared hemisphere model's class labels


@dataclass(frozen=True)
class AutoencoderConfig:
    """``AutoencoderKL``'s size; the image is halved ``len(channels) - 1`` times."""

    channels: tuple[int, ...] = (64, 128, 256)
    latent_channels: int = integer(1, default=8)
    num_res_blocks: int = integer(1, default=2)
    norm_num_groups: int = integer(1, default=32)
    attention_levels: tuple[bool, ...] = (False, False, False)
    nonlocal_attention: bool = False  # MONAI's encoder/decoder middle attention (with_*_nonlocal_attn)

    def __post_init__(self):
        validate(self)
        _check_levels(self, self.channels, self.attention_levels, self.norm_num_groups)

    @property
    def factor(self) -> int:
        """How many image voxels one latent voxel spans along each axis."""
        return 2 ** (len(self.channels) - 1)


@dataclass(frozen=True)
class DenoiserConfig:
    """``DiffusionModelUNet``'s size, shared by every denoiser (parts and whole brain); the latent is halved
    ``len(channels) - 1`` times."""

    channels: tuple[int, ...] = (256, 256, 512)
    attention_levels: tuple[bool, ...] = (False, True, True)
    num_head_channels: tuple[int, ...] = (0, 64, 64)
    num_res_blocks: int = integer(1, default=2)
    norm_num_groups: int = integer(1, default=32)
    part_model: str = choice(("shared_side_cond", "separate"), default="shared_side_cond")

    def __post_init__(self):
        validate(self)
        _check_levels(self, self.channels, self.attention_levels, self.norm_num_groups)
        if len(self.num_head_channels) != len(self.channels):
            raise ValueError(
                f"DenoiserConfig.num_head_channels {self.num_head_channels} needs one entry per level of "
                f"channels {self.channels}"
            )
        # the middle block always attends, with the last level's head size (MONAI's AttnMidBlock)
        for level, (width, head, attends) in enumerate(
            zip(self.channels, self.num_head_channels, self.attention_levels)
        ):
            if (attends or level == len(self.channels) - 1) and (head < 1 or width % head):
                raise ValueError(
                    f"DenoiserConfig.num_head_channels[{level}] = {head} must be >= 1 and divide the level's "
                    f"{width} channels (the level attends)"
                )

    @property
    def factor(self) -> int:
        return 2 ** (len(self.channels) - 1)


def _check_levels(config, channels, attention_levels, groups: int) -> None:
    who = type(config).__name__
    if len(channels) < 1 or any(not isinstance(c, int) or c < 1 for c in channels):
        raise ValueError(f"{who}.channels must be positive integers, got {channels!r}")
    if len(attention_levels) != len(channels):
        raise ValueError(f"{who}.attention_levels {attention_levels} needs one entry per level of {channels}")
    bad = [c for c in channels if c % groups]
    if bad:
        raise ValueError(f"{who}.channels {channels}: {bad} not divisible by norm_num_groups = {groups} (GroupNorm)")


AUTOENCODERS = {
    "paper": AutoencoderConfig(),
    "quick": AutoencoderConfig(channels=(16, 32), latent_channels=3, num_res_blocks=1, norm_num_groups=8,
                               attention_levels=(False, False)),
    "smoke": AutoencoderConfig(channels=(8, 8), latent_channels=2, num_res_blocks=1, norm_num_groups=4,
                               attention_levels=(False, False)),
}  # fmt: skip
DENOISERS = {
    "paper": DenoiserConfig(),
    "quick": DenoiserConfig(channels=(16, 32), attention_levels=(False, False), num_head_channels=(16, 32),
                            num_res_blocks=1, norm_num_groups=8),
    "smoke": DenoiserConfig(channels=(8, 8), attention_levels=(False, False), num_head_channels=(8, 8),
                            num_res_blocks=1, norm_num_groups=4),
}  # fmt: skip


@dataclass(frozen=True)
class PartRoute:
    """Which denoiser generates a part, its side label (None: an unconditional model) and whether the part is
    generated mirrored left-right (the right hemisphere in the left hemisphere's frame, so that one shared model
    sees one orientation; assembly flips it back)."""

    denoiser: str
    side: int | None
    mirrored: bool


PART_MODELS: dict[str, dict[str, PartRoute]] = {
    "shared_side_cond": {
        "LH": PartRoute("hemisphere", SIDES["left"], False),
        "RH": PartRoute("hemisphere", SIDES["right"], True),
        "CB": PartRoute("cb", None, False),
    },
    "separate": {
        "LH": PartRoute("lh", None, False),
        "RH": PartRoute("rh", None, False),
        "CB": PartRoute("cb", None, False),
    },
}


class LatentAutoencoder(nn.Module):
    """MONAI's ``AutoencoderKL`` with the reparametrisation noise as an argument and a latent scale (a buffer, saved
    with the weights; 1 until the trainer sets it from the training latents)."""

    def __init__(self, config: AutoencoderConfig):
        super().__init__()
        AutoencoderKL = monai_module("monai.networks.nets").AutoencoderKL  # 1-3 s to import: only where built

        self.config = config
        self.net = AutoencoderKL(
            spatial_dims=3,
            in_channels=1,
            out_channels=1,
            channels=config.channels,
            latent_channels=config.latent_channels,
            num_res_blocks=config.num_res_blocks,
            norm_num_groups=config.norm_num_groups,
            attention_levels=config.attention_levels,
            with_encoder_nonlocal_attn=config.nonlocal_attention,
            with_decoder_nonlocal_attn=config.nonlocal_attention,
        )
        self.register_buffer("scale", torch.ones(()))

    def forward(self, x: torch.Tensor, eps: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """Training pass: (reconstruction, mu, sigma) of volumes x (B, 1, X, Y, Z), with z = mu + eps * sigma."""
        mu, sigma = self.net.encode(x)
        return self.net.decode(mu + eps * sigma), mu, sigma

    def encode(self, x: torch.Tensor) -> torch.Tensor:
        """The scaled latent mean ``scale * mu`` of volumes x (..., 1, X, Y, Z): what the denoisers model."""
        return _flat(lambda v: self.net.encode(v)[0] * self.scale, x)

    def decode(self, z: torch.Tensor) -> torch.Tensor:
        """Volumes (..., 1, X, Y, Z) decoded from scaled latents z (..., C, x, y, z)."""
        return _flat(lambda v: self.net.decode(v / self.scale), z)


def _flat(fn, x: torch.Tensor) -> torch.Tensor:
    """fn on x with its leading dimensions (seeds, samples) folded into one batch dimension."""
    lead = x.shape[:-4]
    out = fn(x.reshape(-1, *x.shape[-4:]))
    return out.reshape(*lead, *out.shape[1:])


def build_autoencoder(config: AutoencoderConfig) -> LatentAutoencoder:
    return LatentAutoencoder(config)


def build_denoiser(config: DenoiserConfig, latent_channels: int, sides: int | None = None) -> nn.Module:
    """One ``DiffusionModelUNet`` for latents of `latent_channels`, class-conditional on `sides` labels when given
    (the shared hemisphere model: ``model(z, t, class_labels=side)``)."""
    DiffusionModelUNet = monai_module("monai.networks.nets").DiffusionModelUNet

    return DiffusionModelUNet(
        spatial_dims=3,
        in_channels=latent_channels,
        out_channels=latent_channels,
        num_res_blocks=config.num_res_blocks,
        channels=config.channels,
        attention_levels=config.attention_levels,
        norm_num_groups=config.norm_num_groups,
        num_head_channels=list(config.num_head_channels),
        num_class_embeds=sides,
    )


def denoiser_names(part_model: str) -> list[str]:
    """The denoisers a part layout needs, the whole-brain one last."""
    check_choice("part_model", part_model, PART_MODELS)
    return sorted({route.denoiser for route in PART_MODELS[part_model].values()}) + ["whole"]


def denoiser_routes(name: str) -> dict[str, PartRoute]:
    """The parts the part denoiser `name` generates, with their routes, in whichever layout of :data:`PART_MODELS`
    has it (``cb``, in both, routes alike); ValueError for ``whole`` or an unknown name."""
    routes = {}
    for layout in PART_MODELS.values():
        for part, route in layout.items():
            if route.denoiser == name and routes.setdefault(part, route) != route:
                raise ValueError(f"denoiser {name!r} routes part {part} differently in two layouts")
    if not routes:
        known = sorted({r.denoiser for layout in PART_MODELS.values() for r in layout.values()})
        raise ValueError(f"{name!r} is not a part denoiser: part denoisers are {known}")
    return routes


def build_denoisers(config: DenoiserConfig, latent_channels: int) -> dict[str, nn.Module]:
    """Every denoiser of ``config.part_model`` (one size for all): the part models of :data:`PART_MODELS` and
    ``whole``. Each is built where torch's global generator stands; seed it first (common.ensemble.build)."""
    routes = PART_MODELS[config.part_model].values()
    conditional = {r.denoiser for r in routes if r.side is not None}
    return {
        name: build_denoiser(config, latent_channels, len(SIDES) if name in conditional else None)
        for name in denoiser_names(config.part_model)
    }


def latent_shape(
    image_shape: Sequence[int], autoencoder: AutoencoderConfig, denoiser: DenoiserConfig, where: str = "volume"
) -> tuple[int, int, int]:
    """The latent grid of an image of `image_shape` (X, Y, Z); ValueError naming `where` and the side when the
    autoencoder (side divisible by its factor) or the U-Net (latent side divisible by 2^(levels-1)) would refuse it
    or return another shape."""
    image_shape = tuple(int(s) for s in image_shape)
    if len(image_shape) != 3 or min(image_shape) < 1:
        raise ValueError(f"{where}: image shape {image_shape} is not three positive sides (X, Y, Z)")
    need = autoencoder.factor * denoiser.factor
    bad = [(axis, side) for axis, side in zip("XYZ", image_shape) if side % need]
    if bad:
        raise ValueError(
            f"{where}: image shape {image_shape} has side(s) {bad} not divisible by {need} (autoencoder x"
            f"{autoencoder.factor}, then a {len(denoiser.channels)}-level U-Net halving the latent "
            f"{len(denoiser.channels) - 1} time(s)); choose supports whose sides are multiples of {need}"
        )
    return tuple(side // autoencoder.factor for side in image_shape)


def part_latent_shapes(
    image_shapes: Mapping[str, Sequence[int]], autoencoder: AutoencoderConfig, denoiser: DenoiserConfig
) -> dict[str, tuple[int, int, int]]:
    """Each part's latent grid from the image shape of its template support; parts that share a denoiser (the two
    hemispheres of the side-conditioned model) must have one shape."""
    shapes = {
        part: latent_shape(shape, autoencoder, denoiser, where=f"support of {part}")
        for part, shape in image_shapes.items()
    }
    shared: dict[str, list[str]] = {}
    for part, route in PART_MODELS[denoiser.part_model].items():
        if part in shapes:
            shared.setdefault(route.denoiser, []).append(part)
    for name, parts in shared.items():
        if len({shapes[p] for p in parts}) > 1:
            raise ValueError(
                f"parts {parts} share the denoiser {name!r} but their latent shapes differ: "
                f"{ {p: shapes[p] for p in parts} }; give their supports one shape"
            )
    return shapes


def as_denoise(
    model: nn.Module | Ensemble, side: int | None = None
) -> Callable[[torch.Tensor, torch.Tensor], torch.Tensor]:
    """``(z, t) -> eps`` of a denoiser, or of an ensemble of them (z (S, B, C, x, y, z), t (S, B): each seed's
    model on its slice), conditioned on `side` (a label of :data:`SIDES`) when given."""
    if side is None:
        return lambda z, t: model(z, t)
    if side not in SIDES.values():
        raise ValueError(f"side must be one of {SIDES} (labels), got {side!r}")
    if isinstance(model, Ensemble):
        return lambda z, t: model(z, t, None, torch.full_like(t, side), in_dims=(0, 0, None, 0))
    return lambda z, t: model(z, t, class_labels=torch.full_like(t, side))


def n_parameters(module: nn.Module) -> int:
    return sum(p.numel() for p in module.parameters())
