"""The MNI152 2009a symmetric template on the pipeline's grid, with the parts, regions and supports AnaDiffusion uses.

AnaDiffusion places its part assets at "fixed MNI152-aligned supports" and works on volumes registered to MNI152
(arXiv 2608.23014, project page): the left hemisphere (LH), the right hemisphere (RH) and the cerebellum-brainstem
complex (CB). The T1, grey-matter and white-matter maps of the ICBM 2009a nonlinear symmetric template (Fonov et al.
2011) ship inside the nilearn wheel (``nilearn/datasets/data/mni_icbm152_{t1,gm,wm}_tal_nlin_sym_09a_converted.nii.gz``,
1 mm, skull-stripped, RAS); they are read here by path with nibabel, without nilearn's fetchers.

The grid is a canvas of ``shape`` voxels of ``voxel_mm`` (the paper's volumes: 1.5 mm on a 128^3 canvas, as in the
project page's NIfTI files), symmetric about the mid-sagittal plane x = 0 (voxel centres at +-voxel/2, ...) and
centred in y and z on the template brain's bounding box. The parts, in MNI mm, are our definitions (the paper does
not give its boundaries):

* CB = brain & ((z < -20 & y < -35) | (|x| < 12 & -40 < y < -10 & z < -10)),
* LH = brain & x < 0 & not CB,  RH = brain & x >= 0 & not CB;

brainstem = CB & |x| < 12 & y > -40 and cerebellum = CB & not brainstem (the regions the regional-volume segmenter
reads), ventricles = the template's CSF (grey + white matter probability < 0.5) inside |x| < 30, -45 < y < 25,
-10 < z < 30. The seam band is every brain voxel within ``seam_mm`` (at least one voxel) of another part.

Each part has a support: its bounding box on the grid, widened by ``support_margin_mm`` (room for subjects' shapes)
and rounded up to ``support_multiple`` voxels in every axis: the side the configured networks can halve (the
autoencoder's factor times the U-Net's 2^(levels - 1): 4 at smoke and quick scale, 16 at paper scale;
experiment.support_multiple). The two hemispheres share one support shape, the right one mirrored in x, so that one
side-conditioned hemisphere model generates both (the paper's shared hemisphere model): ``support.crop`` flips the
right hemisphere into the left's orientation and ``support.place`` flips it back.
"""

from __future__ import annotations

import importlib.resources
import math
from dataclasses import dataclass, field
from functools import cache

import numpy as np

from .volumes import PART_LABELS, PARTS, clip_and_scale

__all__ = ["PARTS", "PART_LABELS", "Support", "Template", "build_template", "load_mni152", "template_from_arrays"]

_MAPS = ("t1", "gm", "wm")
SUPPORT_MULTIPLE = 4  # the default: autoencoder x2 then one U-Net level x2 (smoke, quick)
_FWHM_PER_SIGMA = 2.0 * math.sqrt(2.0 * math.log(2.0))


@cache
def load_mni152(kind: str) -> tuple[np.ndarray, np.ndarray]:
    """One of the 1 mm ICBM 2009a symmetric maps shipped with nilearn ("t1", "gm" or "wm"): (data in [0, 1] float32
    of shape (197, 233, 189), affine RAS in mm). Read by path; nilearn itself is not imported."""
    import nibabel as nib  # here, not at the top: the network jobs import this module for template_from_arrays

    if kind not in _MAPS:
        raise ValueError(f"kind must be one of {list(_MAPS)}, got {kind!r}")
    name = f"mni_icbm152_{kind}_tal_nlin_sym_09a_converted.nii.gz"
    path = importlib.resources.files("nilearn") / "datasets" / "data" / name
    if not path.is_file():
        raise ValueError(f"the MNI152 2009a {kind} map is not inside the installed nilearn ({path}); reinstall nilearn")
    image = nib.load(str(path))
    if nib.aff2axcodes(image.affine) != ("R", "A", "S"):
        raise ValueError(f"{path}: expected RAS orientation, got {nib.aff2axcodes(image.affine)}")
    data = np.asarray(image.dataobj, dtype=np.float32)
    data /= np.float32(255.0)  # the converted maps are uint8
    data.setflags(write=False)
    return data, image.affine


@dataclass(frozen=True)
class Support:
    """A part's fixed box on the grid: voxel `start` and `shape`; `mirrored` flips x (the right hemisphere)."""

    start: tuple[int, int, int]
    shape: tuple[int, int, int]
    mirrored: bool = False

    @property
    def slices(self) -> tuple[slice, slice, slice]:
        return tuple(slice(s, s + n) for s, n in zip(self.start, self.shape))

    def crop(self, volumes: np.ndarray) -> np.ndarray:
        """The support's box of volumes (..., X, Y, Z), flipped in x when `mirrored`."""
        box = np.asarray(volumes)[(..., *self.slices)]
        return box[..., ::-1, :, :] if self.mirrored else box

    def place(self, crops: np.ndarray, canvas: tuple[int, int, int], fill: float = -1.0) -> np.ndarray:
        """The inverse of `crop`: crops (..., *shape) put back at the support on a canvas filled with `fill`."""
        crops = np.asarray(crops)
        if crops.shape[-3:] != self.shape:
            raise ValueError(f"crops of shape {crops.shape} do not end with the support's shape {self.shape}")
        out = np.full((*crops.shape[:-3], *canvas), fill, dtype=crops.dtype)
        out[(..., *self.slices)] = crops[..., ::-1, :, :] if self.mirrored else crops
        return out


@dataclass(frozen=True, eq=False)
class Template:
    """The template on the pipeline's grid. Arrays are (X, Y, Z) in RAS voxel order; `affine` maps voxels to MNI mm.

    t1: float32 in [-1, 1] (background -1); gm, wm: float32 tissue probabilities in [0, 1]; ventricle_fraction:
    float32, the share of each voxel inside the 1 mm ventricles (its sum times the voxel volume is their volume);
    brain, ventricles (fraction >= 0.5), ventricle_roi (the ventricles widened by `ventricle_margin_mm`, inside the
    brain), cerebellum, brainstem, seam: bool; parts: uint8 labels (0 background, 1 LH, 2 RH, 3 CB); supports: one
    Support per part in PARTS.
    """

    voxel_mm: float
    affine: np.ndarray
    t1: np.ndarray
    gm: np.ndarray
    wm: np.ndarray
    brain: np.ndarray
    parts: np.ndarray
    ventricles: np.ndarray
    ventricle_fraction: np.ndarray
    ventricle_roi: np.ndarray
    cerebellum: np.ndarray
    brainstem: np.ndarray
    seam: np.ndarray
    supports: dict[str, Support] = field(default_factory=dict)

    @property
    def shape(self) -> tuple[int, int, int]:
        return tuple(int(n) for n in self.t1.shape)

    @property
    def voxel_volume_mm3(self) -> float:
        return float(self.voxel_mm**3)

    def part_mask(self, part: str) -> np.ndarray:
        """The template's boolean mask of `part` (one of PARTS)."""
        if part not in PART_LABELS:
            raise ValueError(f"part must be one of {list(PARTS)}, got {part!r}")
        return self.parts == PART_LABELS[part]

    def coordinates(self) -> np.ndarray:
        """MNI coordinates (mm) of every voxel centre: float32 (3, X, Y, Z), axes x (R), y (A), z (S)."""
        return grid_coordinates(self.affine, self.shape)

    def as_arrays(self) -> dict[str, np.ndarray]:
        """Plain arrays (for np.savez); `template_from_arrays` is the inverse."""
        arrays = {name: getattr(self, name) for name in _ARRAY_FIELDS}
        arrays["voxel_mm"] = np.float64(self.voxel_mm)
        for part, support in self.supports.items():
            arrays[f"support_{part}"] = np.array([*support.start, *support.shape, int(support.mirrored)])
        return arrays


_ARRAY_FIELDS = ("affine", "t1", "gm", "wm", "brain", "parts", "ventricles", "ventricle_fraction", "ventricle_roi",
                 "cerebellum", "brainstem", "seam")  # fmt: skip


def template_from_arrays(arrays: dict[str, np.ndarray]) -> Template:
    """The Template written by `Template.as_arrays`."""
    missing = [k for k in (*_ARRAY_FIELDS, "voxel_mm", *(f"support_{p}" for p in PARTS)) if k not in arrays]
    if missing:
        raise ValueError(f"template arrays lack {missing}")
    supports = {}
    for part in PARTS:
        s = [int(v) for v in arrays[f"support_{part}"]]
        supports[part] = Support(tuple(s[:3]), tuple(s[3:6]), bool(s[6]))
    return Template(float(arrays["voxel_mm"]), **{k: np.asarray(arrays[k]) for k in _ARRAY_FIELDS}, supports=supports)


def grid_coordinates(affine: np.ndarray, shape: tuple[int, int, int]) -> np.ndarray:
    """World coordinates (mm) of the voxel centres of a grid: float32 (3, *shape)."""
    world = np.empty((3, *shape), dtype=np.float32)
    axes = [np.arange(n, dtype=np.float64).reshape([-1 if k == j else 1 for k in range(3)])
            for j, n in enumerate(shape)]  # fmt: skip
    for i in range(3):
        world[i] = affine[i, 0] * axes[0] + affine[i, 1] * axes[1] + affine[i, 2] * axes[2] + affine[i, 3]
    return world


def _grid_affine(voxel_mm: float, shape: tuple[int, int, int], centre_mm: np.ndarray) -> np.ndarray:
    """RAS affine of a canvas of `shape` voxels of `voxel_mm` centred on `centre_mm` (x centre forced to 0)."""
    affine = np.diag([voxel_mm, voxel_mm, voxel_mm, 1.0])
    centre = np.array([0.0, centre_mm[1], centre_mm[2]])
    affine[:3, 3] = centre - voxel_mm * (np.asarray(shape) - 1) / 2.0
    return affine


def _resample(data: np.ndarray, source_affine: np.ndarray, world: np.ndarray, voxel_mm: float) -> np.ndarray:
    """`data` (1 mm) at the world points (3, ...): Gaussian prefilter of FWHM `voxel_mm` (anti-aliasing), then
    trilinear interpolation; zero outside the source."""
    from scipy import ndimage

    source_mm = float(abs(source_affine[0, 0]))
    if voxel_mm > source_mm:
        sigma = math.sqrt(voxel_mm**2 - source_mm**2) / _FWHM_PER_SIGMA / source_mm
        data = ndimage.gaussian_filter(data, sigma, mode="constant", truncate=3.0)
    inverse = np.linalg.inv(source_affine)
    index = np.tensordot(inverse[:3, :3], world, axes=1) + inverse[:3, 3].reshape(3, *[1] * (world.ndim - 1))
    return ndimage.map_coordinates(data, index, order=1, mode="constant", cval=0.0).astype(np.float32)


def _round_up(box_lo: int, box_hi: int, size: int, multiple: int) -> tuple[int, int]:
    """[lo, hi) widened symmetrically to a multiple of `multiple` voxels (at most `size`), shifted inside [0, size)."""
    length = min(size - size % multiple, -(-(box_hi - box_lo) // multiple) * multiple)
    lo = box_lo - (length - (box_hi - box_lo)) // 2
    lo = min(max(lo, 0), size - length)
    return lo, lo + length


def _support(mask: np.ndarray, margin: int, multiple: int) -> Support:
    """The bounding box of `mask`, widened by `margin` voxels and rounded up to a multiple of `multiple` in every
    axis."""
    index = np.argwhere(mask)
    start, shape = [], []
    for axis, size in enumerate(mask.shape):
        lo, hi = _round_up(int(index[:, axis].min()) - margin, int(index[:, axis].max()) + 1 + margin, size,
                           multiple)  # fmt: skip
        start.append(lo)
        shape.append(hi - lo)
    return Support(tuple(start), tuple(shape))


def _mirror_x(support: Support, size_x: int) -> Support:
    start = (size_x - support.start[0] - support.shape[0], *support.start[1:])
    return Support(start, support.shape, not support.mirrored)


def build_template(
    voxel_mm: float = 1.5,
    shape: tuple[int, int, int] = (128, 128, 128),
    support_margin_mm: float = 8.0,
    seam_mm: float = 6.0,
    ventricle_margin_mm: float = 8.0,
    support_multiple: int = SUPPORT_MULTIPLE,
) -> Template:
    """The template on a canvas of `shape` voxels of `voxel_mm` (defaults: the paper's 1.5 mm, 128^3).

    Every axis of `shape` must be divisible by `support_multiple` (an even number: the grid is symmetric about
    x = 0; the networks see the whole grid and each support, whose sides are rounded up to it); the canvas must
    hold the template brain."""
    if isinstance(support_multiple, bool) or not isinstance(support_multiple, (int, np.integer)) or (
            support_multiple < 2 or support_multiple % 2):  # fmt: skip
        raise ValueError(f"support_multiple must be an even integer >= 2, got {support_multiple!r}")
    return _build_template(float(voxel_mm), tuple(int(n) for n in shape), float(support_margin_mm), float(seam_mm),
                           float(ventricle_margin_mm), int(support_multiple))  # fmt: skip


@cache
def _build_template(voxel_mm, shape, support_margin_mm, seam_mm, ventricle_margin_mm, multiple) -> Template:
    from scipy import ndimage

    if not (math.isfinite(voxel_mm) and voxel_mm > 0):
        raise ValueError(f"voxel_mm must be a positive number, got {voxel_mm!r}")
    if len(shape) != 3 or any(n <= 0 or n % multiple for n in shape):
        raise ValueError(f"shape must be three positive multiples of {multiple} (support_multiple), got {shape!r}")
    for name, value in (("support_margin_mm", support_margin_mm), ("seam_mm", seam_mm),
                        ("ventricle_margin_mm", ventricle_margin_mm)):  # fmt: skip
        if not (math.isfinite(value) and value >= 0):
            raise ValueError(f"{name} must be a finite number >= 0, got {value!r}")
    maps = {kind: load_mni152(kind) for kind in _MAPS}
    t1_mm, source_affine = maps["t1"]
    gm_mm, wm_mm = maps["gm"][0], maps["wm"][0]
    brain_mm = t1_mm > 0  # the shipped T1 is skull-stripped: non-zero exactly inside the brain (CSF included)
    x, y, z = grid_coordinates(source_affine, t1_mm.shape)
    ventricle_box = (np.abs(x) < 30) & (y > -45) & (y < 25) & (z > -10) & (z < 30)
    ventricles_mm = brain_mm & (gm_mm + wm_mm < 0.5) & ventricle_box

    occupied = [np.flatnonzero(brain_mm.any(axis=tuple(a for a in range(3) if a != axis))) for axis in range(3)]
    lo = source_affine[:3, :3] @ [o[0] for o in occupied] + source_affine[:3, 3]
    hi = source_affine[:3, :3] @ [o[-1] for o in occupied] + source_affine[:3, 3]
    affine = _grid_affine(voxel_mm, shape, np.round((lo + hi) / 2.0))
    extent = voxel_mm * np.asarray(shape)
    if np.any(hi - lo + 1 > extent):
        raise ValueError(
            f"a canvas of {shape} voxels of {voxel_mm} mm ({extent.tolist()} mm) cannot hold the template brain "
            f"({(hi - lo + 1).tolist()} mm)"
        )
    world = grid_coordinates(affine, shape)
    brain = _resample(brain_mm.astype(np.float32), source_affine, world, voxel_mm) >= 0.5
    t1 = np.where(brain, _resample(t1_mm, source_affine, world, voxel_mm), 0.0)
    gm = np.where(brain, _resample(gm_mm, source_affine, world, voxel_mm), 0.0).clip(0, 1).astype(np.float32)
    wm = np.where(brain, _resample(wm_mm, source_affine, world, voxel_mm), 0.0).clip(0, 1).astype(np.float32)
    ventricle_fraction = np.where(brain, _resample(ventricles_mm.astype(np.float32), source_affine, world, voxel_mm), 0)
    ventricle_fraction = ventricle_fraction.clip(0, 1).astype(np.float32)
    ventricles = ventricle_fraction >= 0.5

    gx, gy, gz = world
    cb = brain & (((gz < -20) & (gy < -35)) | ((np.abs(gx) < 12) & (gy > -40) & (gy < -10) & (gz < -10)))
    parts = np.zeros(shape, dtype=np.uint8)
    parts[brain & (gx < 0) & ~cb] = PART_LABELS["LH"]
    parts[brain & (gx >= 0) & ~cb] = PART_LABELS["RH"]
    parts[cb] = PART_LABELS["CB"]
    brainstem = cb & (np.abs(gx) < 12) & (gy > -40)

    roi_voxels = math.ceil(ventricle_margin_mm / voxel_mm)
    ventricle_roi = ndimage.binary_dilation(ventricles, iterations=roi_voxels) & brain if roi_voxels else ventricles
    margin = math.ceil(support_margin_mm / voxel_mm)
    # one box for both hemispheres: the left one's and the mirrored right one's, together
    hemisphere = _support((parts == PART_LABELS["LH"]) | (parts == PART_LABELS["RH"])[::-1], margin, multiple)
    supports = {
        "LH": hemisphere,
        "RH": _mirror_x(hemisphere, shape[0]),
        "CB": _support(cb, margin, multiple),
    }
    template = Template(
        voxel_mm=voxel_mm,
        affine=affine,
        t1=np.where(brain, clip_and_scale(t1), np.float32(-1.0)),
        gm=gm,
        wm=wm,
        brain=brain,
        parts=parts,
        ventricles=ventricles,
        ventricle_fraction=ventricle_fraction,
        ventricle_roi=ventricle_roi,
        cerebellum=cb & ~brainstem,
        brainstem=brainstem,
        seam=seam_band(parts, voxel_mm, seam_mm),
        supports=supports,
    )
    for value in template.as_arrays().values():
        if isinstance(value, np.ndarray):
            value.setflags(write=False)  # shared by the cache: nobody may change it
    return template


def seam_band(parts: np.ndarray, voxel_mm: float, seam_mm: float) -> np.ndarray:
    """Brain voxels within max(`seam_mm`, one voxel) of a voxel of another part: the part boundaries dilated inside
    the brain (the brain's outer surface is not a seam). bool, shape of `parts`."""
    from scipy import ndimage

    reach = max(seam_mm, voxel_mm) + 1e-6
    seam = np.zeros(parts.shape, dtype=bool)
    for label in PART_LABELS.values():
        inside = parts == label
        if not inside.any():
            continue
        others = (parts > 0) & ~inside
        distance = ndimage.distance_transform_edt(~others, sampling=voxel_mm)
        seam |= inside & (distance <= reach)
    return seam
