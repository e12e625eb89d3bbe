"""Per-subject part label maps at paper scale by atlas-based segmentation: ADNI gives no part masks, so the template's
part labels (LH, RH, CB-brainstem: :attr:`.template.Template.parts`) are carried to each preprocessed subject by a
deformable registration of the template to the subject (ANTs SyN, Avants et al. 2008, through ANTsPy ``antspyx``,
Tustison et al. 2021) with nearest-neighbour interpolation, then cut to the subject's own brain.

AnaDiffusion's part models and its Seg. cLDM baseline learn from each subject's own parts (arXiv 2608.23014; the page
does not name the tool that made its part masks): atlas propagation by SyN is our choice of the standard way to get
them without manual labels.

* :func:`template_coordinates` (needs antspyx, imported when called): SyN of the template's T1 (moving) to the
  subject (fixed), both on the template's grid, and per subject voxel the template voxel it maps to (3, X, Y, Z),
  read back by carrying three coordinate images through the forward transforms (linear interpolation of a linear
  function is exact); NaN where the point falls outside the template's grid.
* :func:`warp_labels`: a label map sampled at such coordinates by nearest neighbour (scipy), 0 outside: the
  ``nearestNeighbor`` interpolation of ANTs, testable without antspyx.
* :func:`subject_part_labels`: the warped labels cut to the subject's brain (voxels above background -1), brain
  voxels the warp leaves unlabelled given their nearest labelled voxel's part, so that the parts partition the brain.
"""

from __future__ import annotations

from collections.abc import Callable

import nibabel as nib
import numpy as np
from scipy import ndimage

__all__ = ["atlas_part_labels", "subject_part_labels", "template_coordinates", "warp_labels"]


def template_coordinates(volume: np.ndarray, template, seed: int = 0) -> np.ndarray:
    """Per voxel of `volume` (X, Y, Z) on `template`'s grid (a preprocessed scan: affinely registered to MNI152, in
    [-1, 1]), the template voxel coordinates (3, X, Y, Z) its SyN registration maps it to (ANTsPy ``registration``,
    type_of_transform "SyN", moving the template's T1 onto the scan; ``random_seed`` `seed`); NaN outside the
    template's grid."""
    from .adni import _float_image, _import

    ants = _import("ants", "antspyx")

    def image(array: np.ndarray):
        return ants.from_nibabel_nifti(_float_image(nib.Nifti1Image(np.asarray(array, np.float32), template.affine)))

    volume = np.asarray(volume, dtype=np.float32)
    if volume.shape != template.shape:
        raise ValueError(f"volume of shape {volume.shape}: need the template's grid {template.shape}")
    fixed = image(volume)
    result = ants.registration(fixed, image(template.t1), type_of_transform="SyN", random_seed=int(seed))
    grid = np.indices(template.shape, dtype=np.float32) + 1.0  # 0 is ANTs' value outside the moving image
    coordinates = np.stack([
        ants.apply_transforms(fixed, image(axis), result["fwdtransforms"], interpolator="linear",
                              defaultvalue=0).numpy()
        for axis in grid
    ]) - 1.0  # fmt: skip
    return np.where(coordinates < -0.5, np.nan, coordinates).astype(np.float32)


def warp_labels(labels: np.ndarray, coordinates: np.ndarray) -> np.ndarray:
    """`labels` (X, Y, Z) integers sampled at `coordinates` (3, X', Y', Z') (voxel coordinates into `labels`, NaN
    outside) by nearest neighbour; 0 outside `labels`' grid. uint8 (X', Y', Z')."""
    labels = np.asarray(labels)
    coordinates = np.asarray(coordinates, dtype=np.float64)
    if labels.ndim != 3 or labels.dtype.kind not in "biu":
        raise ValueError(f"labels of shape {labels.shape} and dtype {labels.dtype}: need an integer map (X, Y, Z)")
    if coordinates.ndim != 4 or coordinates.shape[0] != 3:
        raise ValueError(f"coordinates of shape {coordinates.shape}: need (3, X, Y, Z)")
    if np.isinf(coordinates).any():
        raise ValueError("coordinates hold infinite values (NaN marks a point outside the grid)")
    outside = np.isnan(coordinates).any(axis=0)
    points = np.where(outside, -10.0, coordinates)  # cval below
    warped = ndimage.map_coordinates(labels.astype(np.float64), points, order=0, mode="constant", cval=0.0)
    return np.where(outside, 0, np.rint(warped)).astype(np.uint8)


def subject_part_labels(volume: np.ndarray, warped: np.ndarray) -> np.ndarray:
    """The part labels of one subject: `warped` (X, Y, Z), the template's part labels carried to the subject, kept
    inside the subject's brain (`volume` above background -1) and 0 outside it; a brain voxel the warp leaves at 0
    takes the part of its nearest labelled brain voxel (Euclidean, scipy ``distance_transform_edt``). ValueError
    where the shapes differ or no brain voxel is labelled. uint8 (X, Y, Z)."""
    volume, warped = np.asarray(volume), np.asarray(warped)
    if volume.shape != warped.shape or volume.ndim != 3:
        raise ValueError(f"volume {volume.shape} and warped labels {warped.shape}: need one grid (X, Y, Z)")
    brain = volume > -1.0
    labels = np.where(brain, warped, 0).astype(np.uint8)
    labelled = labels > 0
    if not labelled.any():
        raise ValueError(f"no brain voxel of {int(brain.sum())} received a part label: the registration failed")
    holes = brain & ~labelled
    if holes.any():
        nearest = ndimage.distance_transform_edt(~labelled, return_distances=False, return_indices=True)
        labels[holes] = labels[tuple(index[holes] for index in nearest)]
    return labels


def atlas_part_labels(volume: np.ndarray, template, seed: int = 0,
                      coordinates: Callable[..., np.ndarray] = template_coordinates) -> np.ndarray:  # fmt: skip
    """One preprocessed scan's part labels (X, Y, Z) uint8 (0 background, then the template's part labels): the
    template's parts carried by `coordinates(volume, template, seed)` (default :func:`template_coordinates`, SyN)
    and cut to the scan's brain (:func:`subject_part_labels`)."""
    return subject_part_labels(volume, warp_labels(template.parts, coordinates(volume, template, seed)))
