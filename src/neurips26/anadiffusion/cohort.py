"""`synthbrain`: a synthetic cohort of skull-stripped, MNI-registered T1 volumes of cognitively normal (CN) and
Alzheimer's disease (AD) subjects, built from the MNI152 template, standing in for ADNI at small scale.

AnaDiffusion trains on ADNI T1 volumes after N4 bias correction, skull stripping, affine registration to MNI152,
resampling and scaling to [-1, 1] (arXiv 2608.23014). What varies between such volumes is smooth nonlinear shape,
partly independent between the hemispheres and the cerebellum-brainstem complex (the premise of the paper's part
models), and the CN/AD differences in ventricle size and grey matter; this generator draws exactly these (our
construction, not the paper's). Per subject, with group CN or AD (balanced):

* one stationary velocity field (mm), integrated by scaling and squaring (:mod:`.warps`), the sum of
  - a global scaling about the brain's centroid, factor ~ N(1, `global_scale_sd`);
  - a global random field, RMS amplitude ~ U(`global_amplitude_mm`), Gaussian smoothing `smooth_mm`;
  - INDEPENDENT random fields for LH, RH and CB, each RMS ~ U(`part_amplitude_mm`), weighted by the template's
    smoothed part memberships (so each part moves semi-independently and the field stays smooth);
  - a ventricular expansion: a radial field about the template ventricles' centroid, peak `e` mm at their RMS
    radius, e ~ N(mean, sd) of `ventricle_expansion_mm` (larger for AD);
  - a cerebellar scaling about the CB centroid, factor ~ N(1, `cerebellum_scale_sd`), weighted by CB's membership;
* grey-matter atrophy: T1 contrast in grey matter pulled toward CSF by a factor ~ U(`gm_atrophy`) (more for AD);
* a multiplicative quadratic bias field of peak +-`bias_amplitude` and Gaussian noise of sd `noise_sd` (intensities
  in [0, 1]);
* skull stripping with the warped brain mask and the paper's scaling (clip to the 1st-99th percentile, [-1, 1]),
  background -1.

The part labels are the template's, warped by the same field (nearest neighbour): they partition the warped brain.
They are ground truth for training and evaluation only. The subject table holds the true volumes of the ventricles,
cerebellum and brainstem (the template regions warped linearly, summed, in mm^3) and every drawn parameter.
"""

from __future__ import annotations

import math
import zlib
from dataclasses import dataclass

import numpy as np
import pandas as pd
import torch

from ..common.validation import integer, number, validate
from .template import Template
from .volumes import PART_LABELS, PARTS, clip_and_scale
from .warps import integrate_velocity, random_field, smooth, warp_images, warp_labels

__all__ = ["GROUPS", "Cohort", "CohortSettings", "synthesize_cohort"]

GROUPS = ("CN", "AD")


def _pair(value, name: str, low: float = -math.inf) -> tuple[float, float]:
    pair = tuple(float(v) for v in value)
    if len(pair) != 2 or not all(math.isfinite(v) and v >= low for v in pair) or pair[0] > pair[1]:
        raise ValueError(f"CohortSettings.{name} must be a (low, high) pair with {low:g} <= low <= high, got {value!r}")
    return pair


@dataclass(frozen=True)
class CohortSettings:
    """The generator's parameters (amplitudes in mm, intensities in [0, 1] before scaling). Ranges are (low, high)
    of a uniform draw; ventricle expansions are (mean, sd) of a normal draw, per group."""

    cn_fraction: float = number(0.0, 1.0, default=0.5)
    smooth_mm: float = number(0.0, low_open=True, default=12.0)
    squaring_steps: int = integer(1, default=6)
    global_scale_sd: float = number(0.0, default=0.04)
    global_amplitude_mm: tuple[float, float] = (2.0, 4.0)
    part_amplitude_mm: tuple[float, float] = (1.0, 3.0)
    ventricle_expansion_cn_mm: tuple[float, float] = (1.0, 0.5)
    ventricle_expansion_ad_mm: tuple[float, float] = (2.5, 0.8)
    gm_atrophy_cn: tuple[float, float] = (0.0, 0.05)
    gm_atrophy_ad: tuple[float, float] = (0.03, 0.10)
    cerebellum_scale_sd: float = number(0.0, default=0.03)
    bias_amplitude: float = number(0.0, 0.5, default=0.10)
    noise_sd: float = number(0.0, default=0.02)

    def __post_init__(self):
        validate(self)
        for name in ("global_amplitude_mm", "part_amplitude_mm", "gm_atrophy_cn", "gm_atrophy_ad"):
            object.__setattr__(self, name, _pair(getattr(self, name), name, low=0.0))
        for name in ("ventricle_expansion_cn_mm", "ventricle_expansion_ad_mm"):
            value = tuple(float(v) for v in getattr(self, name))
            if len(value) != 2 or not all(math.isfinite(v) for v in value) or value[1] < 0:
                raise ValueError(f"CohortSettings.{name} must be (mean, sd) with sd >= 0, got {getattr(self, name)!r}")
            object.__setattr__(self, name, value)
        if max(self.gm_atrophy_ad[1], self.gm_atrophy_cn[1]) >= 1:
            raise ValueError("CohortSettings.gm_atrophy_* must stay below 1 (a factor of the grey-matter contrast)")


@dataclass(frozen=True, eq=False)
class Cohort:
    """volumes: float32 (N, X, Y, Z) in [-1, 1], background -1; parts: uint8 (N, X, Y, Z) labels (0 background,
    1 LH, 2 RH, 3 CB), ground truth for training and evaluation only; subjects: one row per volume, in order."""

    volumes: np.ndarray
    parts: np.ndarray
    subjects: pd.DataFrame

    @property
    def brain(self) -> np.ndarray:
        return self.parts > 0


def _memberships(template: Template, sigma_vox: float) -> torch.Tensor:
    """Smoothed one-hot part maps (1, 4, X, Y, Z): background, LH, RH, CB; they sum to 1 at every voxel."""
    labels = torch.tensor(template.parts.astype(np.int64))
    onehot = torch.nn.functional.one_hot(labels, 1 + len(PARTS)).permute(3, 0, 1, 2)[None].float()
    return smooth(onehot, sigma_vox)


def _centroid(world: torch.Tensor, weight: np.ndarray) -> torch.Tensor:
    w = torch.tensor(weight, dtype=torch.float32)
    return (world * w).sum(dim=(1, 2, 3)) / w.sum()


def _bias_fields(n: int, world: torch.Tensor, brain: np.ndarray, amplitude: float, rng) -> torch.Tensor:
    """n multiplicative fields 1 + amplitude * q, q a random quadratic polynomial of the normalised coordinates
    scaled to max |q| = 1 over the brain: (n, X, Y, Z)."""
    inside = torch.tensor(brain)
    centre = world[:, inside].mean(dim=1).reshape(3, 1, 1, 1)
    half = (world[:, inside] - centre.reshape(3, 1)).abs().amax(dim=1).reshape(3, 1, 1, 1)
    x, y, z = (world - centre) / half
    terms = torch.stack([x, y, z, x * x, y * y, z * z, x * y, x * z, y * z])  # (9, X, Y, Z)
    coefficients = torch.from_numpy(rng.normal(size=(n, 9)).astype(np.float32))
    poly = torch.einsum("nk,kxyz->nxyz", coefficients, terms)
    poly = poly / poly[:, inside].abs().amax(dim=1).reshape(n, 1, 1, 1)
    return 1.0 + amplitude * poly


def _split_rng(seed: int, split: str) -> np.random.Generator:
    """Independent streams per (seed, split), so that splits are independent draws of distinct subjects."""
    return np.random.default_rng([int(seed), zlib.crc32(split.encode())])


def synthesize_cohort(
    template: Template, n_subjects: int, seed: int, split: str = "train", settings: CohortSettings | None = None
) -> Cohort:
    """`n_subjects` synthetic subjects of `split` on the template's grid, deterministic in (seed, split); different
    splits are independent draws with distinct subject ids (``{split}-0000``, ...)."""
    settings = settings or CohortSettings()
    if isinstance(n_subjects, bool) or not isinstance(n_subjects, (int, np.integer)) or n_subjects < 1:
        raise ValueError(f"n_subjects must be an integer >= 1, got {n_subjects!r}")
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0:
        raise ValueError(f"seed must be an integer >= 0, got {seed!r}")
    if not isinstance(split, str) or not split:
        raise ValueError(f"split must be a non-empty string, got {split!r}")
    n = int(n_subjects)
    rng = _split_rng(seed, split)
    generator = torch.Generator().manual_seed(int(rng.integers(2**62)))
    shape, voxel = template.shape, template.voxel_mm
    world = torch.tensor(template.coordinates())  # (3, X, Y, Z) mm

    n_cn = int(round(settings.cn_fraction * n))
    group = rng.permutation(np.array(["CN"] * n_cn + ["AD"] * (n - n_cn)))
    ad = group == "AD"
    params = {
        "global_scale": rng.normal(1.0, settings.global_scale_sd, n).clip(0.5, 1.5),
        "global_amplitude_mm": rng.uniform(*settings.global_amplitude_mm, n),
        **{f"{p.lower()}_amplitude_mm": rng.uniform(*settings.part_amplitude_mm, n) for p in PARTS},
        "ventricle_expansion_mm": np.where(
            ad, rng.normal(*settings.ventricle_expansion_ad_mm, n), rng.normal(*settings.ventricle_expansion_cn_mm, n)
        ),
        "gm_atrophy": np.where(ad, rng.uniform(*settings.gm_atrophy_ad, n), rng.uniform(*settings.gm_atrophy_cn, n)),
        "cerebellum_scale": rng.normal(1.0, settings.cerebellum_scale_sd, n).clip(0.5, 1.5),
    }
    column = {k: torch.from_numpy(v.astype(np.float32)).reshape(n, 1, 1, 1, 1) for k, v in params.items()}

    sigma = settings.smooth_mm / voxel
    members = _memberships(template, sigma)  # (1, 4, X, Y, Z)
    offset = world - _centroid(world, template.brain).reshape(3, 1, 1, 1)
    velocity = -torch.log(column["global_scale"]) * offset[None]  # pull-back: a factor s > 1 enlarges the brain
    velocity = velocity + random_field(n, shape, sigma, params["global_amplitude_mm"], generator)
    for k, part in enumerate(PARTS, start=1):
        rms = params[f"{part.lower()}_amplitude_mm"]
        velocity = velocity + members[:, k : k + 1] * random_field(n, shape, sigma, rms, generator)
    cb_offset = world - _centroid(world, template.part_mask("CB")).reshape(3, 1, 1, 1)
    velocity = velocity - torch.log(column["cerebellum_scale"]) * members[:, PART_LABELS["CB"], None] * cb_offset
    vent_offset = world - _centroid(world, template.ventricle_fraction).reshape(3, 1, 1, 1)
    fraction = torch.tensor(template.ventricle_fraction)
    radius = float(((vent_offset.square().sum(0) * fraction).sum() / fraction.sum()).sqrt())
    distance2 = vent_offset.square().sum(0) / radius**2
    radial = vent_offset / radius * torch.exp(0.5 * (1.0 - distance2))  # |radial| peaks at 1 on the RMS radius
    velocity = velocity - column["ventricle_expansion_mm"] * radial[None]  # pointing inward: ventricles grow
    displacement = integrate_velocity(velocity / voxel, settings.squaring_steps)

    labels = warp_labels(torch.tensor(template.parts)[None], displacement)
    brain = labels > 0
    maps = np.stack([(template.t1 + 1) / 2, template.gm, template.ventricle_fraction, template.cerebellum,
                     template.brainstem]).astype(np.float32)  # fmt: skip
    warped = warp_images(torch.from_numpy(maps)[None], displacement)  # (N, 5, X, Y, Z)
    intensity, gm = warped[:, 0], warped[:, 1]
    csf = float(np.median((template.t1[template.ventricles] + 1) / 2))
    intensity = intensity - column["gm_atrophy"][:, 0] * gm * (intensity - csf)
    intensity = intensity * _bias_fields(n, world, template.brain, settings.bias_amplitude, rng)
    noise = torch.from_numpy(rng.normal(0.0, settings.noise_sd, (n, *shape)).astype(np.float32))
    intensity = torch.where(brain, (intensity + noise).clamp(min=0.0), torch.zeros(()))
    volumes = np.where(brain.numpy(), clip_and_scale(intensity.numpy()), np.float32(-1.0)).astype(np.float32)

    volume_mm3 = warped[:, 2:].sum(dim=(2, 3, 4)).numpy() * template.voxel_volume_mm3
    subjects = pd.DataFrame(
        {
            "subject": [f"{split}-{i:04d}" for i in range(n)],
            "split": split,
            "group": group,
            "ventricles_mm3": volume_mm3[:, 0],
            "cerebellum_mm3": volume_mm3[:, 1],
            "brainstem_mm3": volume_mm3[:, 2],
            "brain_mm3": brain.sum(dim=(1, 2, 3)).numpy() * template.voxel_volume_mm3,
            **params,
            "bias_amplitude": settings.bias_amplitude,
            "noise_sd": settings.noise_sd,
            "seed": int(seed),
        }
    )
    return Cohort(volumes=volumes, parts=labels.numpy().astype(np.uint8), subjects=subjects)
