r"""Part-to-whole assembly, injection and localized editing (arXiv 2608.23014, project page
AnaDiffusion/AnaDiffusion.github.io).

The page: "Part assets are placed in fixed MNI152-aligned supports while uncertain boundaries and CSF remain
open"; AnaDiffusion "composes generated regional assets in image space, and injects the re-encoded scaffold into the
reverse diffusion trajectory"; for editing "a donor part can replace a selected generated region. AnaDiffusion
reassembles, re-encodes, injects, and refines the modified asset set."

* Everything here is population-level: a :class:`TemplateLayout` holds, for each part, one box (a
  :class:`.template.Support`, the part's fixed grid on the template: start, shape and whether it is mirrored) and one
  placement mask on the template grid, and the template voxels left open (:meth:`TemplateLayout.from_template` takes
  both from the template). No function takes a subject's segmentation: the masks have no subject axis, and
  :class:`TemplateLayout` refuses one that has. The hemispheres' supports overlap across the midline (one box shape
  for both, :mod:`.template`), so each voxel of the scaffold is decided by the template part masks, never by the
  boxes.
* The scaffold (:func:`assemble_scaffold`): a canvas of background (-1, the [-1, 1] scaling's background), each
  decoded part written where its template placement mask holds inside its support, every other voxel (open
  boundaries, CSF, outside the brain) left at -1 for the whole-brain model to synthesise; no feathered blend. A
  part is generated in its support's frame (:func:`crop`: the right hemisphere's support is mirrored left-right,
  axis X of a RAS grid, so the shared side-conditioned model sees one orientation) and flipped back here; the
  training crops (:func:`part_training_crops`) use the same supports, so generation and assembly agree by
  construction, for the shared model and for the separate-hemisphere ablation alike. The scaffold itself is the
  *naive paste* baseline (the composite without refinement). The pipeline's layout (:func:`pipeline_layout`)
  leaves open the template's seam band (the uncertain boundaries between parts) and its CSF (the ventricles):
  :func:`open_voxels`, from the template only.
* :func:`generate_parts` samples the part latents (DDIM) and decodes them; :func:`refine` encodes the scaffold,
  injects it into the whole-brain trajectory (:func:`.diffusion.ddim_sample`) and decodes the result.
* :func:`sample_methods` also returns ``ae_roundtrip``, the scaffold encoded and decoded by the autoencoder without
  any diffusion: the null of the refinement (what the autoencoder's round trip of the scaffold alone gives).
* :func:`edit`: the recipients' assets with one part swapped for the donors', reassembled, re-encoded, injected and
  refined with the recipients' own sampling noise, so that each edit is paired with its original sample. A donor
  equal to its recipient is refused.

Shapes: volumes are (..., 1, X, Y, Z) with any leading dimensions (a batch B, or seeds x batch); the batch is the
last leading dimension.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np
import torch
from torch import nn

from . import diffusion
from .model import PART_MODELS, LatentAutoencoder, as_denoise
from .template import Support, Template

__all__ = [
    "BACKGROUND",
    "Edit",
    "PartAssets",
    "Support",
    "TemplateLayout",
    "assemble_scaffold",
    "crop",
    "edit",
    "generate_parts",
    "open_voxels",
    "part_training_crops",
    "pipeline_layout",
    "refine",
    "check_support",
    "roundtrip",
    "sample_methods",
    "swap_part",
]

BACKGROUND = -1.0  # the [-1, 1] scaling's background, and the value of every open voxel of the scaffold


def check_support(support: Support, grid: Sequence[int] | None = None, where: str = "support") -> tuple:
    """The (X, Y, Z) shape of a :class:`.template.Support`; ValueError naming `where` unless its box is non-empty
    and inside `grid` when given."""
    if not isinstance(support, Support):
        raise ValueError(f"{where}: a support is a template.Support (start, shape, mirrored), got {support!r}")
    for axis, start, size in zip("XYZ", support.start, support.shape):
        stop = start + size
        if start < 0 or size < 1 or (grid is not None and stop > grid["XYZ".index(axis)]):
            raise ValueError(f"{where}: axis {axis} [{start}, {stop}) is not a non-empty box inside the grid {grid}")
    return tuple(support.shape)


@dataclass(frozen=True)
class TemplateLayout:
    """Where the parts go on the template grid (population-level, one for every sample): each part's support and
    placement mask (bool (X, Y, Z), disjoint, inside its support), and ``open``, template voxels no part fills
    (uncertain boundaries, CSF)."""

    shape: tuple[int, int, int]
    supports: Mapping[str, Support]
    masks: Mapping[str, np.ndarray]
    open: np.ndarray | None = None
    placement: dict[str, torch.Tensor] = field(init=False, repr=False)

    def __post_init__(self):
        shape = tuple(int(s) for s in self.shape)
        if set(self.supports) != set(self.masks):
            raise ValueError(f"TemplateLayout: supports {sorted(self.supports)} and masks {sorted(self.masks)} differ")
        open_ = np.zeros(shape, bool) if self.open is None else self._grid_mask(self.open, shape, "open")
        placement, seen = {}, np.zeros(shape, bool)
        for part in self.supports:
            check_support(self.supports[part], shape, where=f"TemplateLayout support of {part}")
            mask = self._grid_mask(self.masks[part], shape, f"mask of {part}")
            outside = mask.copy()
            outside[self.supports[part].slices] = False
            if outside.any():
                raise ValueError(f"TemplateLayout: mask of {part} has {int(outside.sum())} voxels outside its support")
            if (mask & seen).any():
                raise ValueError(
                    f"TemplateLayout: mask of {part} overlaps another part's ({int((mask & seen).sum())} voxels)"
                )
            seen |= mask
            placement[part] = torch.from_numpy(mask & ~open_)
        object.__setattr__(self, "shape", shape)
        object.__setattr__(self, "placement", placement)

    @classmethod
    def from_template(cls, template: Template, open: np.ndarray | None = None) -> TemplateLayout:
        """The template's supports and part masks (population-level), with `open` voxels left to the whole-brain
        model."""
        masks = {part: template.part_mask(part) for part in template.supports}
        return cls(template.shape, dict(template.supports), masks, open)

    @staticmethod
    def _grid_mask(mask, shape: tuple, what: str) -> np.ndarray:
        mask = np.asarray(mask)
        if mask.shape != shape:
            raise ValueError(
                f"TemplateLayout: {what} has shape {mask.shape}, not the template grid {shape}; assembly takes "
                "population-level template masks only, never one per subject"
            )
        if mask.dtype != bool:
            raise ValueError(f"TemplateLayout: {what} must be boolean, got {mask.dtype}")
        return mask


def open_voxels(template: Template) -> np.ndarray:
    """The template voxels the scaffold leaves open (bool (X, Y, Z)): the seam band (every brain voxel within the
    template's seam width of another part: the uncertain boundaries) and the template's CSF (its ventricles). The
    page: "Part assets are placed in fixed MNI152-aligned supports while uncertain boundaries and CSF remain open".
    Population-level: from the template only, the same for every sample."""
    return np.asarray(template.seam, dtype=bool) | np.asarray(template.ventricles, dtype=bool)


def pipeline_layout(template: Template) -> TemplateLayout:
    """The layout the sampling and editing jobs use: the template's supports and part masks, with
    :func:`open_voxels` left to the whole-brain model."""
    return TemplateLayout.from_template(template, open=open_voxels(template))


def crop(volumes: torch.Tensor, support: Support) -> torch.Tensor:
    """The box of `support` of volumes (..., 1, X, Y, Z), flipped left-right (axis X) when it is mirrored: the
    torch twin of :meth:`.template.Support.crop`."""
    out = volumes[(..., *support.slices)]
    return out.flip(-3) if support.mirrored else out


def part_training_crops(volumes: torch.Tensor, subject_masks: torch.Tensor, support: Support) -> torch.Tensor:
    """Training data of a part model: each subject's volume with voxels outside its own part mask set to
    background, cropped to the part's template support (in its frame, mirrored where the support is). Training only:
    the part models learn from segmented subjects; generation and assembly use template masks
    (:class:`TemplateLayout`)."""
    if subject_masks.shape != volumes.shape or subject_masks.dtype != torch.bool:
        raise ValueError(
            f"subject_masks must be boolean of the volumes' shape {tuple(volumes.shape)}, got "
            f"{tuple(subject_masks.shape)} {subject_masks.dtype}"
        )
    return crop(torch.where(subject_masks, volumes, torch.full_like(volumes, BACKGROUND)), support)


def assemble_scaffold(parts: Mapping[str, torch.Tensor], layout: TemplateLayout) -> torch.Tensor:
    """The scaffold (and naive-paste baseline): decoded part images (..., 1, *support shape), in their support's
    frame, written at their template placement on a background canvas; open voxels stay -1."""
    if set(parts) != set(layout.supports):
        raise ValueError(f"parts {sorted(parts)} are not the layout's {sorted(layout.supports)}")
    first = next(iter(parts.values()))
    canvas = torch.full((*first.shape[:-3], *layout.shape), BACKGROUND, dtype=first.dtype, device=first.device)
    for part, image in parts.items():
        support = layout.supports[part]
        expected = (*first.shape[:-3], *support.shape)
        if tuple(image.shape) != expected:
            raise ValueError(f"part {part}: image of shape {tuple(image.shape)}, expected {expected}")
        placed = image.flip(-3) if support.mirrored else image
        box = support.slices
        where = layout.placement[part][box].to(canvas.device)
        canvas[(..., *box)] = torch.where(where, placed, canvas[(..., *box)])
    return canvas


@dataclass(frozen=True)
class PartAssets:
    """Generated parts: latents and decoded images (..., 1, *support shape), in their generation frame."""

    latents: dict[str, torch.Tensor]
    images: dict[str, torch.Tensor]


def generate_parts(
    denoisers: Mapping[str, nn.Module],
    autoencoder: LatentAutoencoder,
    part_model: str,
    noise: Mapping[str, diffusion.SamplingNoise],
    schedule: diffusion.NoiseSchedule,
    steps: int,
) -> PartAssets:
    """Sample each part's latent with its denoiser (by :data:`.model.PART_MODELS`; models or ensembles) from its
    noise (``noise[part].start``, (..., C, x, y, z)) in `steps` DDIM steps, and decode it."""
    latents, images = {}, {}
    for part, route in PART_MODELS[part_model].items():
        if part not in noise:
            raise ValueError(f"no sampling noise for part {part}")
        denoise = as_denoise(denoisers[route.denoiser], route.side)
        latents[part] = diffusion.ddim_sample(denoise, noise[part], schedule, steps)
        with torch.no_grad():
            images[part] = autoencoder.decode(latents[part])
    return PartAssets(latents, images)


@torch.no_grad()
def refine(
    whole: nn.Module,
    autoencoder: LatentAutoencoder,
    scaffold: torch.Tensor,
    noise: diffusion.SamplingNoise,
    schedule: diffusion.NoiseSchedule,
    steps: int,
    r_inj: int = 10,
    alpha: float = 1.0,
) -> torch.Tensor:
    """The coherent volume: the scaffold re-encoded (z_C), injected into the whole-brain trajectory with `r_inj`
    DDIM steps remaining at strength `alpha`, denoised to 0 and decoded. alpha = 0 is the monolithic LDM's sample
    for the same noise."""
    diffusion.check_injection(r_inj, alpha, steps)
    z_c = autoencoder.encode(scaffold)
    z = diffusion.ddim_sample(as_denoise(whole), noise, schedule, steps, scaffold=z_c, r_inj=r_inj, alpha=alpha)
    return autoencoder.decode(z)


@torch.no_grad()
def roundtrip(autoencoder: LatentAutoencoder, scaffold: torch.Tensor) -> torch.Tensor:
    """The scaffold encoded and decoded by the autoencoder, no diffusion: the ``ae_roundtrip`` null of the refinement
    (the same assets, the same autoencoder; what :func:`refine` adds beyond it is the whole-brain denoiser)."""
    return autoencoder.decode(autoencoder.encode(scaffold))


@torch.no_grad()
def sample_methods(
    denoisers: Mapping[str, nn.Module],
    autoencoder: LatentAutoencoder,
    layout: TemplateLayout,
    part_model: str,
    part_noise: Mapping[str, diffusion.SamplingNoise],
    whole_noise: diffusion.SamplingNoise,
    schedule: diffusion.NoiseSchedule,
    steps: int,
    injections: Mapping[str, tuple[int, float]],
    injection_part_models: Mapping[str, str] | None = None,
) -> tuple[PartAssets, dict[str, torch.Tensor]]:
    """One batch of samples of every method from one set of noise: the part assets, and volumes (..., 1, X, Y, Z)
    for ``ldm`` (the whole-brain denoiser alone from ``whole_noise``: the monolithic LDM, which is alpha = 0 of
    every injection), ``paste`` (the scaffold of the assets, no refinement), ``ae_roundtrip`` (the scaffold encoded
    and decoded, no diffusion: :func:`roundtrip`) and each named injection (r_inj, alpha), refined with the same
    whole-brain denoiser and noise (with alpha = 1 the steps before the injection are skipped, so an injection's
    sample depends on ``whole_noise.injection``, not on its start), so that the methods differ only by the scaffold
    and its injection. An injection named in `injection_part_models` takes its assets from that part layout's models
    (e.g. ``separate`` hemisphere models, Table 2's ablation) drawn from the same `part_noise`, so that it differs
    from the injection of `part_model`'s assets only by the part models; the returned assets are `part_model`'s.
    Volumes are clipped to [-1, 1], the data's range (a decoder may overshoot it slightly)."""
    reserved = {"ldm", "paste", "ae_roundtrip"} & set(injections)
    if reserved:
        raise ValueError(f"injection names {sorted(reserved)} are reserved for the baselines")
    for name, (r_inj, alpha) in injections.items():
        try:
            diffusion.check_injection(r_inj, alpha, steps)
        except ValueError as error:
            raise ValueError(f"injection {name!r}: {error}") from None
    part_models = dict(injection_part_models or {})
    unknown = sorted(set(part_models) - set(injections))
    if unknown:
        raise ValueError(f"injection_part_models names {unknown}, not among the injections {list(injections)}")
    assets = generate_parts(denoisers, autoencoder, part_model, part_noise, schedule, steps)
    scaffold = assemble_scaffold(assets.images, layout)
    scaffolds = {part_model: scaffold}
    for other in dict.fromkeys(part_models.values()):
        if other not in scaffolds:
            images = generate_parts(denoisers, autoencoder, other, part_noise, schedule, steps).images
            scaffolds[other] = assemble_scaffold(images, layout)
    whole = denoisers["whole"]
    volumes = {"ldm": autoencoder.decode(diffusion.ddim_sample(as_denoise(whole), whole_noise, schedule, steps))}
    volumes["paste"] = scaffold
    volumes["ae_roundtrip"] = roundtrip(autoencoder, scaffold)
    for name, (r_inj, alpha) in injections.items():
        own = scaffolds[part_models.get(name, part_model)]
        volumes[name] = refine(whole, autoencoder, own, whole_noise, schedule, steps, r_inj, alpha)
    return assets, {name: v.clamp(-1.0, 1.0) for name, v in volumes.items()}


def swap_part(
    images: Mapping[str, torch.Tensor], part: str, recipients: torch.Tensor, donors: torch.Tensor
) -> dict[str, torch.Tensor]:
    """The recipients' part images with `part` taken from the donors (indices along the batch dimension, pairwise);
    ValueError for an unknown part, unequal index lists, an index out of range, or a donor equal to its
    recipient."""
    if part not in images:
        raise ValueError(f"cannot swap part {part!r}: the assets hold {sorted(images)}")
    recipients, donors = torch.as_tensor(recipients).long(), torch.as_tensor(donors).long()
    if recipients.ndim != 1 or recipients.shape != donors.shape or len(recipients) == 0:
        raise ValueError(f"recipients {tuple(recipients.shape)} and donors {tuple(donors.shape)}: need equal 1-D lists")
    batch = images[part].shape[-5]
    for name, index in (("recipient", recipients), ("donor", donors)):
        if bool(((index < 0) | (index >= batch)).any()):
            raise ValueError(f"{name} index outside the {batch} generated samples: {index.tolist()}")
    same = (recipients == donors).nonzero().flatten().tolist()
    if same:
        raise ValueError(
            f"edit {same[0]}: donor {int(donors[same[0]])} is its own recipient; an edit needs another sample"
        )
    dim = images[part].ndim - 5
    out = {name: image.index_select(dim, recipients) for name, image in images.items()}
    out[part] = images[part].index_select(dim, donors)
    return out


@dataclass(frozen=True)
class Edit:
    """One batch of edits: the edited assets' scaffold (also their naive paste) and the refined volumes."""

    scaffold: torch.Tensor
    volumes: torch.Tensor


def edit(
    assets: PartAssets,
    part: str,
    recipients: torch.Tensor,
    donors: torch.Tensor,
    layout: TemplateLayout,
    whole: nn.Module,
    autoencoder: LatentAutoencoder,
    noise: diffusion.SamplingNoise,
    schedule: diffusion.NoiseSchedule,
    steps: int,
    r_inj: int = 10,
    alpha: float = 1.0,
) -> Edit:
    """Swap `part` of each recipient for its donor's, reassemble, re-encode, inject and refine with the recipient's
    own sampling noise (``noise`` is the whole batch's; the recipients' rows are taken), so that the edit is paired
    with the recipient's original sample."""
    swapped = swap_part(assets.images, part, recipients, donors)
    scaffold = assemble_scaffold(swapped, layout)
    volumes = refine(
        whole, autoencoder, scaffold, noise.select(torch.as_tensor(recipients).long()), schedule, steps, r_inj, alpha
    )
    return Edit(scaffold, volumes)
