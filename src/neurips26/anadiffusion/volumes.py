"""Checks of the volumes and part masks that enter the pipeline, and the paper's intensity scaling.

AnaDiffusion works on skull-stripped T1 volumes registered to MNI152 and scaled to [-1, 1] (background -1), with
three parts (left hemisphere, right hemisphere, cerebellum-brainstem) that partition the brain (arXiv 2608.23014,
project page). Every function refuses a bad input with a ValueError that names it.
"""

from __future__ import annotations

import nibabel as nib
import numpy as np

from neurips26.anadiffusion.metrics import check_scaled_volumes

__all__ = [
    "PARTS",
    "PART_LABELS",
    "check_affine",
    "check_part_masks",
    "check_parts",
    "check_volumes",
    "clip_and_scale",
    "part_masks",
]

PARTS = ("LH", "RH", "CB")  # left hemisphere, right hemisphere, cerebellum-brainstem complex
PART_LABELS = {"LH": 1, "RH": 2, "CB": 3}  # 0 is background


def clip_and_scale(volumes: np.ndarray, low: float = 1.0, high: float = 99.0) -> np.ndarray:
    """Each volume (the last three axes) clipped to its own `low`-th and `high`-th intensity percentiles and mapped
    linearly onto [-1, 1] (the paper's preprocessing: clip at the 1st-99th percentile, scale to [-1, 1]). The
    percentiles are over the whole volume, so a skull-stripped volume's zero background becomes -1. float32."""
    volumes = np.asarray(volumes, dtype=np.float32)
    if volumes.ndim < 3:
        raise ValueError(f"volumes must have at least 3 axes (..., X, Y, Z), got shape {volumes.shape}")
    if not 0 <= low < high <= 100:
        raise ValueError(f"percentiles must satisfy 0 <= low < high <= 100, got low={low!r}, high={high!r}")
    if not np.isfinite(volumes).all():
        raise ValueError("volumes hold non-finite voxels; cannot scale them")
    flat = volumes.reshape(*volumes.shape[:-3], -1)
    lo, hi = np.percentile(flat, [low, high], axis=-1, keepdims=True)
    flat = (np.clip(flat, lo, hi) - lo) / np.maximum(hi - lo, np.finfo(np.float32).tiny)
    return (2 * flat - 1).reshape(volumes.shape).astype(np.float32)


def check_affine(affine: np.ndarray, expected: np.ndarray, atol: float = 1e-3, where: str = "volume") -> None:
    """Refuses an affine that is not RAS-oriented or differs from the template's `expected` affine (mm)."""
    affine = np.asarray(affine, dtype=float)
    if affine.shape != (4, 4) or not np.isfinite(affine).all():
        raise ValueError(f"{where}: the affine must be a finite 4x4 matrix, got shape {affine.shape}")
    codes = nib.aff2axcodes(affine)
    if codes != ("R", "A", "S"):
        raise ValueError(
            f"{where}: orientation {''.join(codes)} is not RAS; reorient it (nibabel.as_closest_canonical) and "
            "resample it to the template grid"
        )
    if not np.allclose(affine, expected, atol=atol):
        raise ValueError(
            f"{where}: affine differs from the template's (max difference "
            f"{np.abs(affine - expected).max():.4g} mm); resample it to the template grid.\n"
            f"got:\n{np.array2string(affine, precision=3)}\nexpected:\n{np.array2string(expected, precision=3)}"
        )


def check_volumes(volumes: np.ndarray, template, affine: np.ndarray | None = None, where: str = "volumes") -> None:
    """Refuses volumes that cannot enter the pipeline: not an (N, X, Y, Z) or (X, Y, Z) array on `template`'s grid,
    an `affine` (when given) that is not RAS or not the template's, then what :func:`.metrics.check_scaled_volumes`
    refuses (not floating point, non-finite voxels, values outside [-1, 1])."""
    volumes = np.asarray(volumes)
    shape = tuple(template.shape)
    if volumes.ndim not in (3, 4) or volumes.shape[-3:] != shape:
        raise ValueError(f"{where}: shape {volumes.shape} is not (N, *{shape}) or {shape}, the template's grid")
    if affine is not None:
        check_affine(affine, template.affine, where=where)
    check_scaled_volumes(volumes, where, ndims=(3, 4))


def part_masks(labels: np.ndarray) -> np.ndarray:
    """Part label maps (..., X, Y, Z) -> boolean masks (..., 3, X, Y, Z) in the order of PARTS."""
    labels = np.asarray(labels)
    return np.stack([labels == PART_LABELS[p] for p in PARTS], axis=-4)


def check_part_masks(masks: np.ndarray, brain: np.ndarray, where: str = "part masks") -> None:
    """Refuses part masks (..., 3, X, Y, Z), in the order of PARTS, that do not partition `brain` (..., X, Y, Z):
    parts that overlap, brain voxels no part covers, part voxels outside the brain, or an empty part."""
    masks = np.asarray(masks)
    brain = np.asarray(brain)
    if masks.ndim < 4 or masks.shape[-4] != len(PARTS):
        raise ValueError(f"{where}: shape {masks.shape} is not (..., {len(PARTS)}, X, Y, Z) for parts {PARTS}")
    if masks.dtype != bool or brain.dtype != bool:
        raise ValueError(f"{where}: masks ({masks.dtype}) and brain ({brain.dtype}) must be boolean")
    if brain.shape != masks.shape[:-4] + masks.shape[-3:] and brain.shape != masks.shape[-3:]:
        raise ValueError(f"{where}: brain shape {brain.shape} does not match the masks' {masks.shape}")
    count = masks.sum(axis=-4)
    if (count > 1).any():
        raise ValueError(f"{where}: parts overlap at {int((count > 1).sum())} voxels")
    if (brain & (count == 0)).any():
        raise ValueError(f"{where}: {int((brain & (count == 0)).sum())} brain voxels are covered by no part")
    if ((count > 0) & ~brain).any():
        raise ValueError(f"{where}: {int(((count > 0) & ~brain).sum())} part voxels lie outside the brain")
    volumes = masks.reshape(-1, len(PARTS), int(np.prod(masks.shape[-3:]))).sum(axis=-1)
    empty = np.argwhere(volumes == 0)
    if len(empty):
        item, part = empty[0]
        raise ValueError(f"{where}: part {PARTS[part]} is empty (volume {item})")


def check_parts(labels: np.ndarray, brain: np.ndarray, where: str = "part labels") -> None:
    """Refuses part label maps (..., X, Y, Z; 0 background, 1 LH, 2 RH, 3 CB) with unknown labels, or whose parts
    do not partition `brain` (uncovered brain voxels, labels outside the brain, an empty part)."""
    labels = np.asarray(labels)
    if not np.issubdtype(labels.dtype, np.integer):
        raise ValueError(f"{where}: dtype {labels.dtype} is not an integer label type")
    unknown = np.setdiff1d(np.unique(labels), [0, *PART_LABELS.values()])
    if len(unknown):
        raise ValueError(f"{where}: unknown labels {unknown.tolist()}; allowed 0 (background) and {PART_LABELS}")
    check_part_masks(part_masks(labels), np.asarray(brain), where=where)
