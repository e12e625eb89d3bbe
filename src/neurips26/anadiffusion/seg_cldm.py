r"""The segmentation-conditioned latent diffusion model (Seg. cLDM, Dorjsembe et al. 2024, "Conditional diffusion
models for semantic 3D brain MRI synthesis", IEEE JBHI): the editing baseline of AnaDiffusion's Table 4a (arXiv
2608.23014, project page AnaDiffusion/AnaDiffusion.github.io), which needs *each subject's* part label map at
inference, exactly what AnaDiffusion avoids.

* Conditioning (:func:`label_conditioning`): a subject's part label map at image resolution (0 background, 1 LH,
  2 RH, 3 CB: :data:`LABELS`, the cohort's labels) becomes four one-hot channels, average-pooled to the latent grid
  (each latent voxel holds the fraction of its ``factor^3`` image voxels with each label, so the channels sum to 1
  and a boundary keeps its partial volume; nearest sampling would drop parts thinner than one latent voxel). The
  channels are concatenated to the noisy latent at the U-Net's input (``in_channels = latent channels + 4``), the
  concatenation conditioning of Dorjsembe et al. (their model conditions a pixel-space DDPM on the full-resolution
  mask; in a latent model the mask follows the latent grid).
* The network (:func:`build_seg_cldm`): MONAI's ``DiffusionModelUNet`` at one :class:`.model.DenoiserConfig` (the
  size the other denoisers share), no class embedding.
* Training (:func:`seg_cldm_loss`, :func:`train_seg_cldm`): the DDPM simple loss (epsilon MSE) with the conditioning
  concatenated, each latent paired with its own subject's label map, through :func:`.training.train_members` (seeds
  as a batch dimension, the project's one loop).
* Sampling (:func:`sample_seg_cldm`): deterministic DDIM (:func:`.diffusion.ddim_sample`) from z_T, the conditioning
  concatenated at every step.
* Editing the Seg. cLDM way (:func:`edit_label_maps`, :func:`edit_seg_cldm`): the recipient's label map with the
  target part replaced by the donor's: where the donor's part is, the part's label (over whatever the recipient had
  there); where the recipient's part was and the donor's is not, **background** (0), left for the model to fill, as
  AnaDiffusion leaves boundaries open (our choice: a neighbouring label would invent anatomy the donor does not
  have); elsewhere the recipient's labels. The edited map is resampled with the recipient's own noise, so each edit
  is paired with the recipient's original sample.

Shapes: label maps are (..., B, X, Y, Z) integers, one per subject (B subjects, the batch); latents (..., B, C, x, y,
z) with X = factor * x etc. (factor: the autoencoder's, ``AutoencoderConfig.factor``). Leading dimensions beyond the
batch (seeds) broadcast: one subject's conditioning serves every seed.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd
import torch
from torch import nn

from neurips26.common import loop
from neurips26.common.ensemble import Ensemble
from neurips26.common.validation import check_int

from . import diffusion
from .model import PARTS, DenoiserConfig, LatentAutoencoder, build_denoiser
from .monai_import import monai_module
from .training import Forward, member_data, train_members

__all__ = [
    "LABELS",
    "N_LABELS",
    "SegEdit",
    "build_seg_cldm",
    "check_label_maps",
    "check_pair_subjects",
    "conditioned",
    "conditioning_scans",
    "edit_label_maps",
    "edit_seg_cldm",
    "label_conditioning",
    "sample_seg_cldm",
    "seg_cldm_loss",
    "train_seg_cldm",
]

LABELS = {"background": 0, **{part: i + 1 for i, part in enumerate(PARTS)}}  # the cohort's part labels
N_LABELS = len(LABELS)


def check_label_maps(
    subject_label_maps, image_shape: Sequence[int] | None = None, where: str = "subject label maps"
) -> torch.Tensor:
    """The label maps (..., B, X, Y, Z) as int64; ValueError naming `where` for fewer than four dimensions (one map
    per subject), a spatial shape other than `image_shape` when given, non-integer values or a label outside
    :data:`LABELS`."""
    maps = subject_label_maps
    if not torch.is_tensor(maps):
        maps = torch.as_tensor(np.asarray(maps))
    if maps.ndim < 4:
        raise ValueError(f"{where} of shape {tuple(maps.shape)}: need (B, X, Y, Z), one label map per subject")
    if image_shape is not None and tuple(maps.shape[-3:]) != tuple(int(s) for s in image_shape):
        raise ValueError(
            f"{where} of spatial shape {tuple(maps.shape[-3:])}: need {tuple(image_shape)} (the latent grid times "
            "the autoencoder's factor)"
        )
    if maps.is_floating_point() or maps.is_complex():
        if not bool(torch.isfinite(maps).all()) or bool((maps != maps.round()).any()):
            raise ValueError(f"{where} hold non-integer values: labels are {LABELS}")
    maps = maps.long()
    unknown = sorted(set(torch.unique(maps).tolist()) - set(LABELS.values()))
    if unknown:
        raise ValueError(f"{where} hold unknown label(s) {unknown}: labels are {LABELS}")
    return maps


def conditioning_scans(subjects: Sequence, samples: int, seed: int) -> np.ndarray:
    """Which training scan conditions each of `samples` samples (indices into `subjects`, the training scans'
    subject ids in the split's order): one scan per distinct subject (drawn among that subject's scans), the
    subjects in an order permuted with `seed` (the sampling seed), wrapping round after the last subject. Our
    choice: the training subjects the model was fitted on, so that no held-out scan's anatomy enters a sample
    scored against the held-out scans; one scan per subject, so that a subject with many visits (ADNI) does not
    condition several samples while others condition none."""
    check_int("samples", samples, 1, who="conditioning_scans")
    ids = np.asarray([str(s) for s in subjects])
    if ids.ndim != 1 or len(ids) == 0:
        raise ValueError(f"conditioning_scans needs the training scans' subject ids (at least one), got {len(ids)}")
    rng = np.random.default_rng(seed)
    distinct = np.unique(ids)
    chosen = np.array([rng.choice(np.flatnonzero(ids == subject)) for subject in distinct])
    order = chosen[rng.permutation(len(distinct))]
    return order[np.arange(samples) % len(order)]


def check_pair_subjects(sample_subjects: Sequence, recipients: Sequence[int], donors: Sequence[int]) -> None:
    """ValueError for an edit pair whose recipient and donor samples are conditioned on the same SUBJECT (not only
    the same index: a subject's two scans, or the wrap-round of :func:`conditioning_scans`), or an index outside
    the samples; `sample_subjects` (N,) names each sample's conditioning subject."""
    ids = [str(s) for s in sample_subjects]
    for k, (r, d) in enumerate(zip(recipients, donors, strict=True)):
        for name, index in (("recipient", r), ("donor", d)):
            if not 0 <= int(index) < len(ids):
                raise ValueError(f"edit pair {k}: {name} {index} is not among the {len(ids)} samples")
        if ids[int(r)] == ids[int(d)]:
            raise ValueError(
                f"edit pair {k}: recipient {r} and donor {d} are conditioned on the same subject {ids[int(r)]!r}; "
                "an edit needs another subject's part"
            )


def label_conditioning(subject_label_maps, latent_grid: Sequence[int], factor: int) -> torch.Tensor:
    """The Seg. cLDM conditioning (..., B, 4, x, y, z) of label maps (..., B, X, Y, Z) with X = factor * x: one-hot
    channels in :data:`LABELS` order, average-pooled over factor^3 blocks (label fractions, summing to 1)."""
    check_int("factor", factor, 1, who="label_conditioning")
    grid = tuple(int(s) for s in latent_grid)
    if len(grid) != 3 or min(grid) < 1:
        raise ValueError(f"latent grid {grid} is not three positive sides (x, y, z)")
    maps = check_label_maps(subject_label_maps, tuple(s * factor for s in grid))
    lead = maps.shape[:-3]
    onehot = torch.nn.functional.one_hot(maps.reshape(-1, *maps.shape[-3:]), N_LABELS).permute(0, 4, 1, 2, 3)
    pooled = torch.nn.functional.avg_pool3d(onehot.float(), factor) if factor > 1 else onehot.float()
    return pooled.reshape(*lead, N_LABELS, *grid)


def _concat(z: torch.Tensor, conditioning: torch.Tensor) -> torch.Tensor:
    """z (..., B, C, x, y, z) with the conditioning (B, 4, x, y, z) (or with more leading dimensions, matching z's
    trailing ones) concatenated along the channels, broadcast over z's extra leading dimensions (seeds)."""
    if tuple(conditioning.shape[-3:]) != tuple(z.shape[-3:]) or conditioning.shape[-4] != N_LABELS:
        raise ValueError(f"conditioning {tuple(conditioning.shape)} does not fit the latents {tuple(z.shape)}")
    cond = conditioning.to(device=z.device, dtype=z.dtype).expand(*z.shape[:-4], *conditioning.shape[-4:])
    return torch.cat([z, cond], dim=-4)


def conditioned(model, conditioning: torch.Tensor) -> diffusion.Denoise:
    """``(z, t) -> eps`` of a Seg. cLDM network, the conditioning concatenated to z at each call. An ``Ensemble``
    maps its members over z's first dimension (z (S, B, C, ...), t (S, B)); one network folds any leading
    dimensions of z (seeds, samples) into its batch."""
    if isinstance(model, Ensemble):
        return lambda z, t: model(_concat(z, conditioning), t)

    def denoise(z: torch.Tensor, t: torch.Tensor) -> torch.Tensor:
        x = _concat(z, conditioning)
        return model(x.reshape(-1, *x.shape[-4:]), t.reshape(-1)).reshape(z.shape)

    return denoise


def build_seg_cldm(config: DenoiserConfig, latent_channels: int) -> nn.Module:
    """One ``DiffusionModelUNet`` taking the noisy latent and the four label channels (``latent_channels + 4``
    inputs) and predicting the latent's noise (``latent_channels`` outputs): :func:`.model.build_denoiser`'s network
    with its input convolution widened (the module MONAI builds for ``in_channels = latent_channels + 4``, same
    names and shapes). Built where torch's global generator stands; seed it first (common.ensemble.build)."""
    check_int("latent_channels", latent_channels, 1, who="build_seg_cldm")
    Convolution = monai_module("monai.networks.blocks").Convolution

    net = build_denoiser(config, latent_channels)
    net.in_channels = latent_channels + N_LABELS
    net.conv_in = Convolution(
        spatial_dims=3,
        in_channels=net.in_channels,
        out_channels=config.channels[0],
        strides=1,
        kernel_size=3,
        padding=1,
        conv_only=True,
    )
    return net


def seg_cldm_loss(
    forward: Forward,
    z0: torch.Tensor,
    conditioning: torch.Tensor,
    noise: torch.Tensor,
    t: torch.Tensor,
    schedule: diffusion.NoiseSchedule,
    leading: int = 0,
) -> torch.Tensor:
    """The DDPM simple loss of a Seg. cLDM: MSE between `noise` and ``forward(cat(q(z_t | z0), conditioning), t)``,
    each latent z0 (..., B, C, x, y, z) with its own subject's conditioning (:func:`label_conditioning`); averaged
    over all but the first `leading` dimensions (1: one loss per ensemble member)."""
    zt = diffusion.add_noise(z0, noise, t, schedule)
    return diffusion.epsilon_mse(forward(_concat(zt, conditioning), t), noise, leading=leading)


def train_seg_cldm(
    models: Sequence[nn.Module],
    latents: torch.Tensor,
    subject_label_maps,
    factor: int,
    steps: int,
    batch: int,
    lr: float,
    seeds: Sequence[int],
    schedule: diffusion.NoiseSchedule,
    settings: loop.LoopSettings | None = None,
    vectorize: bool | None = None,
) -> pd.DataFrame:
    """Fit Seg. cLDMs (one per seed, :func:`build_seg_cldm`) on latents (N, C, x, y, z) (or one set per seed,
    (S, N, C, x, y, z)), latent i conditioned on subject i's label map (N, X, Y, Z) at image resolution; minibatches
    of `batch` drawn with replacement, t uniform on {0..T-1}. Returns :func:`.training.train_members`' log."""
    check_int("batch", batch, 1, who="train_seg_cldm")
    latents = torch.as_tensor(latents, dtype=torch.float32)
    member_latents = member_data(latents, len(models), "latents", 4)
    n = latents.shape[-5]
    conditioning = label_conditioning(subject_label_maps, latents.shape[-3:], factor)
    if conditioning.shape[:-4] != (n,):
        raise ValueError(
            f"subject label maps of shape {tuple(torch.as_tensor(subject_label_maps).shape)}: need one per latent, "
            f"({n}, X, Y, Z)"
        )

    def draw(generator: torch.Generator, member: int):
        index = torch.randint(n, (batch,), generator=generator)
        z0 = member_latents(member)[index]
        noise = torch.randn(z0.shape, generator=generator)
        return z0, conditioning[index], noise, diffusion.draw_timesteps((batch,), generator, schedule)

    def member_losses(forward: Forward, batch_: tuple[torch.Tensor, ...]) -> torch.Tensor:
        z0, cond, noise, t = batch_
        return seg_cldm_loss(forward, z0, cond, noise, t, schedule, leading=1)

    return train_members(models, seeds, draw, member_losses, steps, lr, settings, vectorize)


@torch.no_grad()
def sample_seg_cldm(
    model,
    subject_label_maps,
    factor: int,
    noise: diffusion.SamplingNoise,
    schedule: diffusion.NoiseSchedule,
    steps: int,
) -> torch.Tensor:
    """Latents (..., B, C, x, y, z) sampled by DDIM from z_T = ``noise.start`` in `steps` steps, sample b
    conditioned on subject b's label map (B, X, Y, Z) (X = factor * x) at every step; deterministic given the
    noise. `model` is one network or an ``Ensemble`` of them (noise (S, B, ...)). Decode with the autoencoder."""
    z = noise.start
    if z.ndim < 5:
        raise ValueError(f"sampling noise of shape {tuple(z.shape)}: need (..., B, C, x, y, z)")
    conditioning = label_conditioning(subject_label_maps, z.shape[-3:], factor)
    lead_c, lead_z = tuple(conditioning.shape[:-4]), tuple(z.shape[:-4])
    if len(lead_c) > len(lead_z) or lead_z[len(lead_z) - len(lead_c) :] != lead_c:
        raise ValueError(
            f"subject label maps for a batch of {tuple(conditioning.shape[:-4])}: the noise {tuple(z.shape)} has "
            f"a batch of {z.shape[-5]} (one label map per sample)"
        )
    return diffusion.ddim_sample(conditioned(model, conditioning), noise, schedule, steps)


def edit_label_maps(recipient_label_maps, donor_label_maps, part: str) -> torch.Tensor:
    """The recipients' label maps (B, X, Y, Z) with `part` (a name of :data:`.model.PARTS`) taken from the donors'
    (pairwise): the part's label where the donor's part is, background where only the recipient's part was, the
    recipient's label elsewhere (module docstring)."""
    if part not in PARTS:
        raise ValueError(f"cannot edit part {part!r}: parts are {PARTS}")
    recipient = check_label_maps(recipient_label_maps, where="recipient label maps")
    donor = check_label_maps(donor_label_maps, tuple(recipient.shape[-3:]), where="donor label maps")
    if donor.shape != recipient.shape:
        raise ValueError(f"donor label maps {tuple(donor.shape)} and recipient's {tuple(recipient.shape)} differ")
    label = LABELS[part]
    edited = torch.where(recipient == label, LABELS["background"], recipient)
    return torch.where(donor == label, label, edited)


@dataclass(frozen=True)
class SegEdit:
    """One batch of Seg. cLDM edits: the edited label maps (B, X, Y, Z) and the volumes (..., B, 1, X, Y, Z)."""

    label_maps: torch.Tensor
    volumes: torch.Tensor


@torch.no_grad()
def edit_seg_cldm(
    model,
    autoencoder: LatentAutoencoder,
    subject_label_maps,
    part: str,
    recipients: torch.Tensor,
    donors: torch.Tensor,
    noise: diffusion.SamplingNoise,
    schedule: diffusion.NoiseSchedule,
    steps: int,
) -> SegEdit:
    """Seg. cLDM editing: for each (recipient, donor) pair of indices into the batch's subjects (label maps
    (B, X, Y, Z), the ones the batch's originals were sampled with, noise (..., B, C, x, y, z)), the recipient's
    label map with `part` from the donor's (:func:`edit_label_maps`), resampled with the recipient's own noise and
    decoded, clipped to [-1, 1]. ValueError for unequal index lists, an index out of range, or a donor equal to its
    recipient."""
    maps = check_label_maps(subject_label_maps)
    if maps.ndim != 4:
        raise ValueError(f"subject label maps of shape {tuple(maps.shape)}: need (B, X, Y, Z)")
    recipients, donors = torch.as_tensor(recipients).long(), torch.as_tensor(donors).long()
    if recipients.ndim != 1 or recipients.shape != donors.shape or len(recipients) == 0:
        raise ValueError(f"recipients {tuple(recipients.shape)} and donors {tuple(donors.shape)}: need equal 1-D lists")
    for name, index in (("recipient", recipients), ("donor", donors)):
        if bool(((index < 0) | (index >= len(maps))).any()):
            raise ValueError(f"{name} index outside the {len(maps)} subjects: {index.tolist()}")
    same = (recipients == donors).nonzero().flatten().tolist()
    if same:
        raise ValueError(f"edit {same[0]}: donor {int(donors[same[0]])} is its own recipient; an edit needs another")
    edited = edit_label_maps(maps[recipients], maps[donors], part)
    z = sample_seg_cldm(model, edited, autoencoder.config.factor, noise.select(recipients), schedule, steps)
    return SegEdit(edited, autoencoder.decode(z).clamp(-1.0, 1.0))
