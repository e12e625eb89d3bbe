"""Regional volumes (mm^3) for AnaDiffusion's morphometric check: Cohen's |d| of ventricle, cerebellum and brainstem
volumes between real and generated scans (arXiv 2608.23014, Table 1), measured by ONE segmenter applied identically
to both sets.

* Paper scale: SynthSeg (Billot et al. 2023), run as an external tool; `label_volumes` turns its label maps into
  regional volumes with FreeSurfer's label ids (`SYNTHSEG_LABELS`).
* Quick scale: `proxy_structure_volumes`, a PROXY for SynthSeg, deterministic: fixed template regions of interest
  (the same ROIs for every volume, real or generated, never a per-subject mask) and one intensity threshold on the
  paper's [-1, 1] scale. Ventricles are the voxels darker than `csf_threshold` (CSF) inside the template ventricle
  ROI; cerebellum and brainstem are the voxels at or above it (tissue) inside their template ROIs. The default
  threshold 0.0 is the anatomy threshold of the paper's project page; in the MNI152 template scaled to [-1, 1],
  CSF lies below it and grey and white matter above.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from neurips26.anadiffusion.metrics import check_scaled_volumes

__all__ = [
    "ANATOMY_THRESHOLD",
    "PROXY_RULES",
    "STRUCTURES",
    "SYNTHSEG_LABELS",
    "label_volumes",
    "proxy_segmentation",
    "proxy_structure_volumes",
    "voxel_volume",
]

STRUCTURES = ("ventricles", "cerebellum", "brainstem")  # the |d| columns of Table 1
ANATOMY_THRESHOLD = 0.0
PROXY_RULES = {"ventricles": "csf", "cerebellum": "tissue", "brainstem": "tissue"}
# FreeSurfer/SynthSeg label ids: lateral (4, 43) and inferior lateral (5, 44) ventricles, 3rd (14) and 4th (15)
# ventricles; cerebellar white matter (7, 46) and cortex (8, 47); brainstem (16)
SYNTHSEG_LABELS = {"ventricles": (4, 5, 14, 15, 43, 44), "cerebellum": (7, 8, 46, 47), "brainstem": (16,)}


def voxel_volume(voxel_size_mm) -> float:
    """Volume of one voxel in mm^3 from its edge (a number for isotropic voxels, or three edges in mm)."""
    size = np.broadcast_to(np.asarray(voxel_size_mm, dtype=np.float64), (3,))
    if not np.isfinite(size).all() or (size <= 0).any():
        raise ValueError(f"voxel_size_mm must be positive and finite (one edge or three), got {voxel_size_mm!r}")
    return float(np.prod(size))


def proxy_segmentation(volumes, rois: Mapping[str, np.ndarray], csf_threshold: float = ANATOMY_THRESHOLD):
    """Boolean masks (N, D, H, W) per structure of `rois` (names from PROXY_RULES, each a template ROI (D, H, W)
    shared by every volume): CSF structures are the ROI's voxels below `csf_threshold`, tissue structures those at
    or above it. `volumes` (N, D, H, W) are in [-1, 1]."""
    volumes = check_scaled_volumes(volumes)
    if not rois:
        raise ValueError(f"rois is empty: give template ROIs for some of {list(PROXY_RULES)}")
    if not np.isfinite(csf_threshold) or not -1 <= csf_threshold <= 1:
        raise ValueError(f"csf_threshold must lie in [-1, 1], got {csf_threshold!r}")
    csf = volumes < csf_threshold
    out = {}
    for name, roi in rois.items():
        if name not in PROXY_RULES:
            raise ValueError(f"unknown structure {name!r}; the proxy segments {list(PROXY_RULES)}")
        roi = np.asarray(roi)
        if roi.dtype != bool or roi.shape != volumes.shape[1:]:
            raise ValueError(
                f"ROI {name}: a boolean template mask of shape {volumes.shape[1:]} (one for every volume) is "
                f"needed, got {roi.dtype} {roi.shape}"
            )
        if not roi.any():
            raise ValueError(f"ROI {name} is empty")
        out[name] = roi & (csf if PROXY_RULES[name] == "csf" else ~csf)
    return out


def proxy_structure_volumes(
    volumes, rois: Mapping[str, np.ndarray], voxel_size_mm, csf_threshold: float = ANATOMY_THRESHOLD
) -> dict[str, np.ndarray]:
    """Regional volumes (N,) in mm^3 per structure by the SynthSeg proxy (`proxy_segmentation`)."""
    unit = voxel_volume(voxel_size_mm)
    masks = proxy_segmentation(volumes, rois, csf_threshold)
    return {name: np.count_nonzero(mask, axis=(1, 2, 3)) * unit for name, mask in masks.items()}


def label_volumes(
    labels, voxel_size_mm, structures: Mapping[str, tuple[int, ...]] = SYNTHSEG_LABELS
) -> dict[str, np.ndarray]:
    """Regional volumes (N,) in mm^3 from label maps (N, D, H, W) of integer label ids (SynthSeg's output): each
    structure is the union of its label ids (`SYNTHSEG_LABELS` by default)."""
    labels = np.asarray(labels)
    if labels.ndim != 4 or not np.issubdtype(labels.dtype, np.integer):
        raise ValueError(f"labels must be an integer array (N, D, H, W), got {labels.dtype} {labels.shape}")
    unit = voxel_volume(voxel_size_mm)
    return {name: np.count_nonzero(np.isin(labels, ids), axis=(1, 2, 3)) * unit for name, ids in structures.items()}
