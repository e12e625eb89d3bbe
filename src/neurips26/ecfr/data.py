r"""Quick-scale data of paper 11: a procedural multimodal (RGB + depth) anomaly-detection set of several object
classes on a plane, in the shape of MVTec 3D-AD (one object per image, co-registered RGB and depth, pixel masks).

Each class is a height field ``h(u, v)`` (ring, cookie with bumps, capsule, dome, hexagonal cylinder) with a random
in-plane rotation, scale, shift and a low-frequency shape perturbation cut from scikit-image's *real* stereo disparity
map (``stereo_motorcycle``). Its albedo is the class colour times a crop of one of scikit-image's textures (brick,
grass, gravel); the RGB image is the albedo shaded by the surface normal under a jittered light, so that shading ties
RGB to depth and a cross-modal mapping is learnable. The depth image is the height plus sensor noise; a share of
depth pixels can be invalid (NaN, as missing points in a scanner's cloud), which the loaders mask and count.

Defects (test only), each with its ground-truth mask and the modalities it shows in:

* ``crack``: a thin depression along a random line (depth and shading);
* ``dent``: a Gaussian depression (depth and shading);
* ``hole``: the surface removed to the background plane, dark inside (depth and RGB);
* ``contamination``: an off-palette albedo blob, geometry unchanged (RGB only);
* ``bump_depth``: a Gaussian bump in depth whose shading is not rendered (depth only).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache

import numpy as np

from .names import MODALITY_OF
from .names import SYNTHETIC_CLASSES as CLASSES
from .names import SYNTHETIC_DEFECTS as DEFECTS

__all__ = ["CLASSES", "DEFECTS", "MODALITY_OF", "Sample", "check_classes", "check_sample", "check_split", "draw_seed",
           "make_sample", "make_split"]  # fmt: skip
_PALETTE = {  # class colour (RGB in [0, 1]) and texture
    "ring": ((0.75, 0.55, 0.30), "brick"),
    "cookie": ((0.85, 0.70, 0.45), "gravel"),
    "capsule": ((0.55, 0.40, 0.25), "grass"),
    "dome": ((0.90, 0.60, 0.50), "gravel"),
    "hexcyl": ((0.55, 0.60, 0.65), "brick"),
}


@dataclass(frozen=True)
class Sample:
    rgb: np.ndarray  # (H, W, 3) float32 in [0, 1]
    depth: np.ndarray  # (H, W) float32, NaN where invalid
    mask: np.ndarray  # (H, W) bool, the defect's pixels
    cls: str
    defect: str  # "good" or one of DEFECTS


@cache
def _texture(name: str) -> np.ndarray:
    import skimage.data

    t = getattr(skimage.data, name)().astype(np.float32)
    return (t - t.min()) / (t.max() - t.min())


@cache
def _disparity() -> np.ndarray:
    import skimage.data

    disp = skimage.data.stereo_motorcycle()[2].astype(np.float32)
    disp[~np.isfinite(disp)] = np.nan
    return disp


def _crop(image: np.ndarray, size: int, rng: np.random.Generator, stride: int = 2) -> np.ndarray:
    """A random ``size`` x ``size`` crop of ``image`` sampled every ``stride`` pixels (a zoomed-out patch)."""
    span = size * stride
    r = rng.integers(0, image.shape[0] - span + 1)
    c = rng.integers(0, image.shape[1] - span + 1)
    return image[r : r + span : stride, c : c + span : stride]


def _smooth(field: np.ndarray, sigma: float) -> np.ndarray:
    from scipy.ndimage import gaussian_filter

    return gaussian_filter(field, sigma)


def _shape(cls: str, u: np.ndarray, v: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """The class's height field in [0, 1] on object coordinates (u, v) in about [-1, 1]."""
    r = np.hypot(u, v)
    if cls == "ring":
        return np.clip(1 - ((r - 0.55) / 0.25) ** 2, 0, None) ** 0.5
    if cls == "cookie":
        base = np.where(r < 0.75, 0.45, 0.0)
        angles = rng.uniform(0, 2 * np.pi, 6)
        radii = rng.uniform(0.15, 0.55, 6)
        for a, rad in zip(angles, radii):
            base = base + 0.3 * np.exp(-((u - rad * np.cos(a)) ** 2 + (v - rad * np.sin(a)) ** 2) / 0.01) * (r < 0.75)
        return np.clip(base, 0, 1)
    if cls == "capsule":
        d = np.hypot(np.clip(np.abs(u) - 0.45, 0, None), v)
        return np.clip(1 - (d / 0.3) ** 2, 0, None) ** 0.5
    if cls == "dome":
        return np.clip(1 - (u / 0.75) ** 2 - (v / 0.6) ** 2, 0, None) ** 0.5
    if cls == "hexcyl":
        angle = np.arctan2(v, u)
        hexr = 0.7 * np.cos(np.pi / 6) / np.cos((angle % (np.pi / 3)) - np.pi / 6)
        return np.where(r < hexr, 0.6 + 0.4 * (r < 0.3), 0.0)
    raise ValueError(f"unknown class {cls!r}; known: {list(CLASSES)}")


def _shade(height: np.ndarray, light: np.ndarray, relief: float) -> np.ndarray:
    gy, gx = np.gradient(height * relief)
    normal = np.stack([-gx, -gy, np.ones_like(height)], -1)
    normal /= np.linalg.norm(normal, axis=-1, keepdims=True)
    return np.clip(normal @ light, 0, 1)


def _blob(size: int, rng: np.random.Generator, inside: np.ndarray, radius: tuple[float, float]):
    """A Gaussian blob centred on a random pixel of ``inside``: (profile in [0, 1], centre)."""
    rows, cols = np.nonzero(inside)
    k = rng.integers(len(rows))
    cy, cx = rows[k], cols[k]
    yy, xx = np.mgrid[:size, :size]
    s = rng.uniform(*radius) * size
    return np.exp(-((yy - cy) ** 2 + (xx - cx) ** 2) / (2 * s**2)), (cy, cx)


def make_sample(cls: str, defect: str, seed: int, size: int = 64, invalid_depth: float = 0.0) -> Sample:
    """One image pair of class ``cls`` with ``defect`` ("good" for none), seeded."""
    if cls not in CLASSES:
        raise ValueError(f"unknown class {cls!r}; known: {list(CLASSES)}")
    if defect != "good" and defect not in DEFECTS:
        raise ValueError(f"unknown defect {defect!r}; known: good, {', '.join(DEFECTS)}")
    rng = np.random.default_rng([seed, CLASSES.index(cls), size])
    yy, xx = (np.mgrid[:size, :size] + 0.5) / size * 2 - 1
    angle, scale = rng.uniform(0, 2 * np.pi), rng.uniform(0.9, 1.1)
    shift = rng.uniform(-0.1, 0.1, 2)
    c, s = np.cos(angle), np.sin(angle)
    u = (c * (xx - shift[0]) + s * (yy - shift[1])) / scale
    v = (-s * (xx - shift[0]) + c * (yy - shift[1])) / scale
    height = _shape(cls, u, v, rng)
    support = height > 0.02
    disp = _crop(_disparity(), size, rng)
    disp = np.where(np.isfinite(disp), disp, np.nanmean(disp))
    disp = _smooth((disp - disp.mean()) / (disp.std() + 1e-6), 2.0)
    height = np.where(support, np.clip(height + 0.05 * disp, 0, None), 0.0)  # real low-frequency shape noise
    colour, texture = _PALETTE[cls]
    albedo = np.asarray(colour)[None, None] * (0.65 + 0.35 * _crop(_texture(texture), size, rng)[..., None])
    background = 0.35 + 0.05 * _crop(_texture("gravel"), size, rng)[..., None]
    albedo = np.where(support[..., None], albedo, background)
    shading_height = height.copy()
    mask = np.zeros((size, size), dtype=bool)
    # the defect's draws come from their own stream, so that a defective sample and the good one of the same seed
    # share everything else (geometry, texture, light, noise)
    drng = np.random.default_rng(
        [seed, CLASSES.index(cls), size, 1 + (DEFECTS.index(defect) if defect in DEFECTS else 0)]
    )
    if defect == "crack":
        rows, cols = np.nonzero(support)
        k = drng.integers(len(rows))
        centre = np.array([u[rows[k], cols[k]], v[rows[k], cols[k]]])  # on the object
        heading, length = drng.uniform(0, np.pi), drng.uniform(0.3, 0.5)
        step = 0.5 * length * np.array([np.cos(heading), np.sin(heading)])
        p0, p1 = centre - step, centre + step
        d = p1 - p0
        t = np.clip(((u - p0[0]) * d[0] + (v - p0[1]) * d[1]) / (d @ d), 0, 1)
        dist = np.hypot(u - p0[0] - t * d[0], v - p0[1] - t * d[1])
        mask = (dist < 0.04) & support
        height = np.where(mask, height - 0.25, height)
        shading_height = height
    elif defect == "dent":
        prof, _ = _blob(size, drng, support, (0.05, 0.09))
        mask = (prof > 0.3) & support
        height = height - 0.3 * prof * support
        shading_height = height
    elif defect == "hole":
        prof, _ = _blob(size, drng, support, (0.04, 0.07))
        mask = (prof > 0.4) & support
        height = np.where(mask, 0.0, height)
        shading_height = height
        albedo = np.where(mask[..., None], 0.05, albedo)
    elif defect == "contamination":
        prof, _ = _blob(size, drng, support, (0.04, 0.08))
        mask = (prof > 0.35) & support
        stain = np.asarray([0.1, 0.35, 0.9]) if colour[2] < 0.6 else np.asarray([0.9, 0.1, 0.1])
        albedo = np.where(mask[..., None], stain[None, None] * (0.6 + 0.4 * prof[..., None]), albedo)
    elif defect == "bump_depth":
        prof, _ = _blob(size, drng, support, (0.05, 0.09))
        mask = (prof > 0.3) & support
        height = height + 0.3 * prof * support  # shading_height keeps the normal surface: depth only
    elevation, azimuth = np.deg2rad(55 + rng.uniform(-15, 15)), np.deg2rad(rng.uniform(-15, 15) + 45)
    light = np.array([np.cos(elevation) * np.cos(azimuth), np.cos(elevation) * np.sin(azimuth), np.sin(elevation)])
    shade = _shade(shading_height, light, relief=size / 8)
    rgb = np.clip(albedo * (0.25 + 0.75 * shade[..., None]), 0, 1).astype(np.float32)
    depth = (height + rng.normal(0, 0.002, height.shape)).astype(np.float32)
    if invalid_depth > 0:
        depth[rng.random(depth.shape) < invalid_depth] = np.nan
    return Sample(rgb, depth, mask, cls, defect)


def check_sample(rgb: np.ndarray, depth: np.ndarray, mask: np.ndarray | None, where: str = "") -> int:
    """Refuses a pair whose RGB and depth differ in size, or a mask that does not match the image or is not binary;
    returns the number of invalid (NaN) depth pixels, which the features mask."""
    at = f" ({where})" if where else ""
    if rgb.ndim != 3 or rgb.shape[2] != 3:
        raise ValueError(f"RGB must be (H, W, 3), got {rgb.shape}{at}")
    if depth.shape != rgb.shape[:2]:
        raise ValueError(f"RGB {rgb.shape[:2]} and depth {depth.shape} differ in size{at}")
    if mask is not None:
        if mask.shape != rgb.shape[:2]:
            raise ValueError(f"mask {mask.shape} does not match the image {rgb.shape[:2]}{at}")
        if mask.dtype != bool and not np.isin(mask, (0, 1)).all():
            raise ValueError(f"mask is not binary{at}")
    return int(np.isnan(depth).sum())


def draw_seed(draw: str, data_seed: int | None) -> int:
    """The data seed of a draw of the synthetic set: ``s<seed>`` is a scored seed's own draw (``data_seed + seed``),
    ``t<data seed>`` the tuning pilot's draw at that data seed (the config checks keep it apart from the scored ones).
    The training split is drawn with ``2 * data seed``, the test split with ``2 * data seed + 1``."""
    if draw[:1] == "s" and draw[1:].isdigit():
        if data_seed is None:
            raise ValueError(f"draw {draw!r} is a scored seed's draw: it needs the dataset's data_seed")
        return data_seed + int(draw[1:])
    if draw[:1] == "t" and draw[1:].isdigit():
        return int(draw[1:])
    raise ValueError(f"the synthetic set is drawn per seed (s<seed>) or for tuning (t<data seed>), got {draw!r}")


def make_split(classes: list[str], good: int, per_defect: int, defects: list[str], size: int, invalid_depth: float,
               seed: int) -> dict[str, np.ndarray]:  # fmt: skip
    """A split of the synthetic set: per class ``good`` normal images and ``per_defect`` images of each defect, as
    arrays (rgb uint8 (N, H, W, 3), depth float32 (N, H, W) NaN where invalid, mask bool, cls, defect). Sample seeds
    are ``seed * 100_000 + i``, so splits of different ``seed`` share no image."""
    samples = []
    for cls in classes:
        samples += [make_sample(cls, "good", seed * 100_000 + i, size, invalid_depth) for i in range(good)]
        for k, defect in enumerate(defects):
            base = seed * 100_000 + 10_000 * (k + 1)
            samples += [make_sample(cls, defect, base + i, size, invalid_depth) for i in range(per_defect)]
    return {
        "rgb": np.stack([np.round(s.rgb * 255).astype(np.uint8) for s in samples]),
        "depth": np.stack([s.depth for s in samples]),
        "mask": np.stack([s.mask for s in samples]),
        "cls": np.array([s.cls for s in samples]),
        "defect": np.array([s.defect for s in samples]),
    }


def check_split(split: dict[str, np.ndarray], name: str, train: bool) -> int:
    """Refuses a split whose images, depth maps and masks disagree in size, a training split with a defective image,
    or a test split without both normal and defective images; returns the number of invalid (NaN) depth pixels."""
    n = len(split["rgb"])
    for key in ("depth", "mask", "cls", "defect"):
        if len(split[key]) != n:
            raise ValueError(f"{name}: {n} RGB images against {len(split[key])} entries of {key}")
    invalid = sum(check_sample(split["rgb"][i], split["depth"][i], split["mask"][i], f"{name} image {i}")
                  for i in range(n))  # fmt: skip
    labels = split["defect"] != "good"
    marked = split["mask"].reshape(n, -1).any(1)
    for what, bad in (("defective image with an empty mask", labels & ~marked),
                      ("normal image with a marked mask", ~labels & marked)):  # fmt: skip
        if bad.any():
            raise ValueError(f"{name}: {int(bad.sum())} {what}(s), first image {int(np.flatnonzero(bad)[0])}")
    if train and labels.any():
        raise ValueError(f"{name}: the training split holds {int(labels.sum())} defective images; train on normals")
    if not train and (labels.all() or not labels.any()):
        raise ValueError(
            f"{name}: the test split needs normal and defective images, got {int(labels.sum())} of {n} defective"
        )
    return invalid


def check_classes(train: dict[str, np.ndarray], test: dict[str, np.ndarray], name: str) -> None:
    """Refuses a test class without normal training images (no model could learn it, unified or per class)."""
    missing = sorted(set(test["cls"].tolist()) - set(train["cls"].tolist()))
    if missing:
        raise ValueError(f"{name}: classes {missing} have no normal training images")
