r"""Paper-scale data of paper 11: MVTec 3D-AD and Eyecandies read into the arrays of the quick-scale synthetic set
(:func:`.data.make_split`), one dict per split::

    {"rgb": uint8 (N, S, S, 3), "depth": float32 (N, S, S), NaN where there is no point,
     "mask": bool (N, S, S), "cls": str (N,), "defect": str (N,), "good" or the defect folder's name}

Preprocessing, as the official code (``data/dataset.py`` with the configs ``configs/mvtec3d.py`` and
``configs/eyecandies.py`` of wang1393/An-Efficient-Cross-modal-Feature-Reconstruction-Model-for-Multimodal-Multi-class-
Anomaly-Detection) does it:

* RGB: ``Resize((S, S), bilinear)`` then ``CenterCrop(S)`` (a no-op after a square resize) on the PIL image, i.e.
  PIL's bilinear resampling, which is what torchvision does for PIL inputs.
* Depth: the z channel of the organised point cloud (``xyz`` TIFF, H x W x 3 float). The reference min-max
  normalises it per image over *all* pixels (missing points, z == 0, included, so they map to 0) to uint8, replicates
  it to three channels and resizes it bilinearly. Here the raw z is kept instead, invalid pixels as NaN, so that the
  pipeline can count them and normalise it itself: the z of the valid pixels is resized with a bilinear filter that
  ignores invalid pixels (the bilinear resize of ``z * valid`` divided by that of ``valid``), and a pixel is invalid
  where the nearest-neighbour resize of the validity mask says so. The reference's depth image is recovered, up to
  its uint8 quantisation and the blending of valid and missing pixels at the borders of holes, by replacing NaN with
  0 and min-max normalising per image.
* Ground truth: read as greyscale, ``> 0``, resized bilinearly as an 8-bit image and thresholded at ``> 0.5`` (ADer
  thresholds the resized, ``ToTensor``-scaled mask so). Normal images get an all-False mask, as in the reference
  (which does not read their masks).

MVTec 3D-AD (Bergmann et al. 2022): ``mvtec_3d_anomaly_detection/<class>/{train,validation,test}/<defect>/
{rgb/NNN.png, xyz/NNN.tiff, gt/NNN.png}``; train and validation hold ``good`` only and are merged for training as in
the reference (``meta['train']`` extended by ``meta['validation']``). The ``.tar.xz`` is streamed once and its
members decoded in memory (nothing is extracted); a directory with the extracted layout is read too.

Eyecandies (Bonfiglioli et al., ACCV 2022, https://eyecan-ai.github.io/eyecandies/download): one tar archive per
category (Google Drive), each a Pipelime "underfolder" ``{train,val,test_public,test_private}/data/
<NNN>_<item>.<ext>`` with, per sample, six RGB images under different lights (``image_0`` ... ``image_5``), a 16-bit
``depth`` PNG normalised to 0..65535 with its bounds in ``info_depth.yaml``, the camera ``pose.txt`` and, outside
test_private, ``mask.png``. The reference reads ``eyecandies_preprocessed``, the output of M3DM's
``utils/preprocess_eyecandies.py`` (nomewang/M3DM), which :func:`read_eyecandies` reproduces in memory:

* train = the 1,000 ``train`` samples of a category (``val`` is not used); test = the 50 ``test_public`` samples
  (``test_private`` has no masks); a test sample is ``bad`` when its mask has any foreground pixel, else ``good``
  (M3DM's folders; the category names are the dataset's folder names, ``CandyCane`` ...);
* RGB = ``image_4``;
* xyz = the depth in metres (``depth / 65535 * (max - min) + min``) back-projected with the focal length 711.11 and
  the pose (``d * inv(K @ pose) @ (u, v, 1, 1 / d)``), then M3DM's background removal: the cloud is rotated so that
  the line from the bottom-middle to the top-middle pixel is an axis, and points with rotated ``y > -0.02``,
  ``z > 1.8`` or ``|x| > 1`` are background; the TIFF's channels are ``(0.1 x, -0.1 z, 0.1 y)``, so its z channel,
  the reference's depth, is ``0.1 * y`` of the back-projected cloud. M3DM writes the background as one constant point
  (``x == 0``, the point its loaders treat as missing); it is NaN here. (The reference's min-max includes that
  constant; it is ``0.1 * (s - R^T s)_y`` with ``s`` the bottom-middle point and ``R`` the rotation.)

Malformed inputs (a sample without its RGB, xyz or mask, RGB and xyz of different sizes, an unknown class, a class
without training normals) raise ValueError naming the sample.
"""

from __future__ import annotations

import io
import lzma
import re
import tarfile
import zlib
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path

import numpy as np

from .names import EYECANDIES_CLASSES

__all__ = [
    "EYECANDIES_CLASSES",
    "EYECANDIES_FOCAL_LENGTH",
    "EYECANDIES_RGB",
    "MVTEC3D_CLASSES",
    "MVTEC3D_SPLIT_SIZES",
    "eyecandies_z",
    "read_eyecandies",
    "read_mvtec3d",
    "resize_depth",
    "resize_mask",
    "resize_rgb",
]

MVTEC3D_CLASSES = ("bagel", "cable_gland", "carrot", "cookie", "dowel", "foam", "peach", "potato", "rope", "tire")
# MVTec 3D-AD's samples per split, all classes (Bergmann et al. 2022, Table 1); train and validation are normals
MVTEC3D_SPLIT_SIZES = {"train": 2656, "validation": 294, "test": 1197}
EYECANDIES_FOCAL_LENGTH = 711.11  # the one camera of the dataset (Eyecandies download page)
EYECANDIES_RGB = "image_4"  # the light M3DM's preprocessing (and so the reference) uses
_TAR_SUFFIXES = (".tar", ".tar.gz", ".tgz", ".tar.xz", ".tar.bz2")
_LOG_EVERY = 250

Log = Callable[[str], None] | None


# --------------------------------------------------------------------------- resizing (the reference's transforms)


def _check_size(size: int) -> int:
    if isinstance(size, bool) or not isinstance(size, (int, np.integer)) or size < 1:
        raise ValueError(f"size must be a positive integer, got {size!r}")
    return int(size)


def resize_rgb(rgb: np.ndarray, size: int) -> np.ndarray:
    """(H, W, 3) uint8 -> (size, size, 3) uint8: PIL bilinear resize (torchvision's Resize on a PIL image)."""
    from PIL import Image

    return np.asarray(Image.fromarray(rgb).resize((size, size), Image.Resampling.BILINEAR))


def resize_mask(mask: np.ndarray, size: int) -> np.ndarray:
    """(H, W) bool -> (size, size) bool: bilinear resize of the 0/255 image, then ``/ 255 > 0.5``."""
    from PIL import Image

    image = Image.fromarray(mask.astype(np.uint8) * 255).resize((size, size), Image.Resampling.BILINEAR)
    return np.asarray(image) > 127


def resize_depth(z: np.ndarray, valid: np.ndarray, size: int) -> np.ndarray:
    """(H, W) depth and its validity -> (size, size) float32, NaN where the nearest-neighbour resize of `valid` is
    False; elsewhere the bilinear resize of the valid pixels only (``resize(z * valid) / resize(valid)``)."""
    from PIL import Image

    valid = valid & np.isfinite(z)
    filled = np.where(valid, z, 0).astype(np.float32)
    num = np.asarray(Image.fromarray(filled).resize((size, size), Image.Resampling.BILINEAR))
    den = np.asarray(Image.fromarray(valid.astype(np.float32)).resize((size, size), Image.Resampling.BILINEAR))
    keep = np.asarray(Image.fromarray(valid.astype(np.uint8) * 255).resize((size, size), Image.Resampling.NEAREST))
    keep = (keep > 0) & (den > 1e-6)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(keep, num / np.where(keep, den, 1), np.nan).astype(np.float32)


# --------------------------------------------------------------------------- reading archives and folders


def _is_archive(path: Path) -> bool:
    return path.name.lower().endswith(_TAR_SUFFIXES)


def _archive_stem(path: Path) -> str:
    name = path.name
    for suffix in sorted(_TAR_SUFFIXES, key=len, reverse=True):
        if name.lower().endswith(suffix):
            return name[: -len(suffix)]
    return name


def _members(path: Path) -> Iterator[tuple[str, Callable[[], bytes]]]:
    """(name relative to `path`, a reader of its bytes) of every regular file of a tar archive (streamed once, any
    compression) or a directory tree. The reader is valid until the next item."""
    if path.is_dir():
        for file in sorted(p for p in path.rglob("*") if p.is_file()):
            yield file.relative_to(path).as_posix(), file.read_bytes
        return
    broken = (tarfile.TarError, EOFError, lzma.LZMAError, zlib.error, OSError)

    def refuse(error: Exception) -> ValueError:
        return ValueError(f"{path} is not a readable tar archive: {type(error).__name__}: {error}")

    if not path.exists():
        raise FileNotFoundError(f"{path} does not exist")
    try:
        with tarfile.open(path, mode="r|*") as tar:
            for member in tar:
                if member.isfile():

                    def read(member=member) -> bytes:
                        try:
                            handle = tar.extractfile(member)
                            assert handle is not None
                            return handle.read()
                        except broken as error:
                            raise refuse(error) from error

                    yield member.name, read
    except broken as error:
        raise refuse(error) from error


def _image(data: bytes, mode: str, where: str) -> np.ndarray:
    from PIL import Image, UnidentifiedImageError

    try:
        with Image.open(io.BytesIO(data)) as image:
            return np.asarray(image.convert(mode) if mode else image).copy()
    except (UnidentifiedImageError, OSError) as error:
        raise ValueError(f"{where} is not a readable image: {error}") from error


def _xyz(data: bytes, where: str) -> np.ndarray:
    import tifffile

    try:
        xyz = tifffile.imread(io.BytesIO(data))
    except Exception as error:  # tifffile raises several types for a broken file
        raise ValueError(f"{where} is not a readable TIFF: {error}") from error
    if xyz.ndim != 3 or xyz.shape[2] != 3:
        raise ValueError(f"{where} is not an organised point cloud (H x W x 3), shape {xyz.shape}")
    return xyz


def _progress(log: Log, count: int, what: str) -> None:
    if log is not None and count % _LOG_EVERY == 0:
        log(f"{what}: {count} images read")


def _stack(samples: list[dict]) -> dict[str, np.ndarray]:
    return {
        "rgb": np.stack([s["rgb"] for s in samples]).astype(np.uint8),
        "depth": np.stack([s["depth"] for s in samples]).astype(np.float32),
        "mask": np.stack([s["mask"] for s in samples]).astype(bool),
        "cls": np.array([s["cls"] for s in samples], dtype=str),
        "defect": np.array([s["defect"] for s in samples], dtype=str),
    }


def _requested(classes: Sequence[str] | None, known: Sequence[str], dataset: str) -> list[str] | None:
    if classes is None:
        return None
    if isinstance(classes, str):
        classes = [classes]
    unknown = [c for c in classes if c not in known]
    if unknown:
        raise ValueError(f"unknown {dataset} class(es) {unknown}; known: {list(known)}")
    if not classes:
        raise ValueError(f"no {dataset} class requested (classes is empty)")
    return list(dict.fromkeys(classes))


def _check_classes(found: dict[str, dict[str, int]], wanted: list[str] | None, source: str) -> list[str]:
    """The classes to return, in order; ValueError for a requested class the source lacks, or one without training
    normals or test images."""
    names = wanted if wanted is not None else sorted(found)
    if not names:
        raise ValueError(f"{source} holds no sample in the expected layout")
    missing = [c for c in names if c not in found]
    if missing:
        raise ValueError(f"class(es) {missing} not found in {source}; it holds {sorted(found)}")
    for c in names:
        if not found[c].get("train"):
            raise ValueError(f"class {c!r} has no training normals in {source}")
        if not found[c].get("test"):
            raise ValueError(f"class {c!r} has no test images in {source}")
    return names


# --------------------------------------------------------------------------- MVTec 3D-AD

_MVTEC_MEMBER = re.compile(
    r"^(?:\./)?(?:[^/]+/)?(?P<cls>[^/]+)/(?P<split>train|validation|test)/(?P<defect>[^/]+)/"
    r"(?P<kind>rgb|xyz|gt)/(?P<stem>[^/]+)\.(?P<ext>png|tiff|tif)$"
)
_MVTEC_EXT = {"rgb": ("png",), "gt": ("png",), "xyz": ("tiff", "tif")}
_SPLIT_ORDER = {"train": 0, "validation": 1, "val": 1, "test": 2, "test_public": 2}


def _natural(stem: str) -> tuple:
    return (0, int(stem), stem) if stem.isdigit() else (1, 0, stem)


def read_mvtec3d(archive: Path, size: int = 256, classes: list[str] | None = None, log: Log = None) -> dict[str, dict]:
    """MVTec 3D-AD from its ``mvtec_3d_anomaly_detection.tar.xz`` (or the extracted folder): ``{"train": ...,
    "test": ...}``, train = the train and validation normals merged, test = every test image; classes in the given
    order (default: all in the archive, sorted), samples by split, defect (``good`` first) and number."""
    size = _check_size(size)
    archive = Path(archive)
    wanted = _requested(classes, MVTEC3D_CLASSES, "MVTec 3D-AD")
    records: dict[tuple[str, str, str, str], dict] = {}
    count = 0
    for name, read in _members(archive):
        m = _MVTEC_MEMBER.match(name)
        if m is None or m["ext"].lower() not in _MVTEC_EXT[m["kind"]]:
            continue
        cls, split, defect, kind, stem = m["cls"], m["split"], m["defect"], m["kind"], m["stem"]
        key = (cls, split, defect, stem)
        record = records.setdefault(key, {})
        if wanted is not None and cls not in wanted:
            continue  # the class is noted (records) but its images are not decoded
        where = f"{archive.name}:{name}"
        if kind in record:
            raise ValueError(f"{cls}/{split}/{defect}/{stem} has two {kind} files ({where})")
        if kind == "rgb":
            rgb = _image(read(), "RGB", where)
            record["rgb"] = (resize_rgb(rgb, size), rgb.shape[:2])
            count += 1
            _progress(log, count, archive.name)
        elif kind == "xyz":
            xyz = _xyz(read(), where)
            z = xyz[..., 2].astype(np.float32)
            valid = np.isfinite(z) & (z != 0)
            record["xyz"] = (resize_depth(z, valid, size), xyz.shape[:2], int((~valid).sum()))
        elif defect != "good":  # the reference reads no mask for normal images
            gt = _image(read(), "L", where) > 0
            record["gt"] = (resize_mask(gt, size), gt.shape[:2])

    found: dict[str, dict[str, int]] = {}
    for cls, split, _defect, _stem in records:
        part = "test" if split == "test" else "train"
        found.setdefault(cls, {}).setdefault(part, 0)
        found[cls][part] += 1
    names = _check_classes(found, wanted, str(archive))

    order = {c: i for i, c in enumerate(names)}
    splits: dict[str, list[dict]] = {"train": [], "test": []}
    invalid = 0
    for key in sorted(
        (k for k in records if k[0] in order),
        key=lambda k: (order[k[0]], _SPLIT_ORDER[k[1]], k[2] != "good", k[2], _natural(k[3])),
    ):
        cls, split, defect, stem = key
        record, sample = records[key], f"{cls}/{split}/{defect}/{stem}"
        for kind in ("rgb", "xyz") + (("gt",) if defect != "good" else ()):
            if kind not in record:
                raise ValueError(f"sample {sample} of {archive.name} has no {kind} image ({kind}/{stem}.*)")
        if split != "test" and defect != "good":
            raise ValueError(f"sample {sample}: the {split} split of MVTec 3D-AD holds only 'good' images")
        (rgb, rgb_shape), (depth, xyz_shape, missing) = record["rgb"], record["xyz"]
        if rgb_shape != xyz_shape:
            raise ValueError(f"sample {sample}: RGB is {rgb_shape} but xyz is {xyz_shape} (sizes differ)")
        if "gt" in record:
            mask, gt_shape = record["gt"]
            if gt_shape != rgb_shape:
                raise ValueError(f"sample {sample}: the gt mask is {gt_shape} but RGB is {rgb_shape} (sizes differ)")
        else:
            mask = np.zeros((size, size), bool)
        invalid += missing
        part = "test" if split == "test" else "train"
        splits[part].append({"rgb": rgb, "depth": depth, "mask": mask, "cls": cls, "defect": defect})
    if log is not None:
        log(
            f"{archive.name}: {len(splits['train'])} training and {len(splits['test'])} test images of "
            f"{len(names)} classes; {invalid} points missing at full resolution"
        )
    return {part: _stack(samples) for part, samples in splits.items()}


# --------------------------------------------------------------------------- Eyecandies

_EC_MEMBER = re.compile(
    r"^(?:\./)?(?P<prefix>(?:[^/]+/)*?)(?P<split>train|val|test_public|test_private)/data/"
    r"(?P<stem>\d+)_(?P<item>[A-Za-z0-9_]+)\.(?P<ext>png|yaml|yml|txt)$"
)
_EC_SPLITS = {"train": "train", "test_public": "test"}  # val and test_private are not read (as M3DM)
_EC_ITEMS = {EYECANDIES_RGB: "png", "depth": "png", "info_depth": "yaml", "pose": "txt", "mask": "png"}


def _ec_canonical(name: str) -> str | None:
    """The category a folder or archive name means (case-, space-, '_' and '-'-insensitive), or None."""
    key = re.sub(r"[\s_\-]", "", name).lower()
    return next((c for c in EYECANDIES_CLASSES if c.lower() == key), None)


def eyecandies_z(
    depth16: np.ndarray, bounds: tuple[float, float], pose: np.ndarray, focal: float = EYECANDIES_FOCAL_LENGTH
) -> np.ndarray:
    """The z channel of M3DM's preprocessed xyz TIFF of one Eyecandies sample, NaN where M3DM removes the
    background: (H, W) 16-bit depth, its (min, max) in metres, the 4 x 4 pose -> (H, W) float32 (module docstring)."""
    h, w = depth16.shape
    low, high = bounds
    d = depth16.astype(np.float32) / 65535.0 * (high - low) + low
    intrinsics = np.array([[focal, 0, w / 2, 0], [0, focal, h / 2, 0], [0, 0, 1, 0], [0, 0, 0, 1]])
    try:
        inverse = np.linalg.inv(intrinsics @ pose)
    except np.linalg.LinAlgError as error:
        raise ValueError(f"the camera projection is singular: {error}") from error
    rows, cols = np.mgrid[:h, :w]
    with np.errstate(divide="ignore", invalid="ignore"):
        vectors = np.stack([cols.ravel(), rows.ravel(), np.ones(h * w), 1.0 / d.ravel()]).astype(np.float64)
        pc = (d.reshape(-1, 1) * (inverse @ vectors).T)[:, :3]
    top, bottom = pc[w // 2], pc[-(w - w // 2)]  # M3DM's pc[256] and pc[-256] at 512 x 512
    dz, dy = top[1] - bottom[1], top[2] - bottom[2]
    norm = np.hypot(dz, dy)
    if not norm > 0:
        raise ValueError("the top-middle and bottom-middle points coincide; the background plane is undefined")
    cos, sin = dy / norm, dz / norm
    rotation = np.array([[1, 0, 0], [0, cos, -sin], [0, sin, cos]])
    start = np.array([0, bottom[1], bottom[2]])
    rotated = (pc - start) @ rotation.T
    with np.errstate(invalid="ignore"):
        background = (rotated[:, 1] > -0.02) | (rotated[:, 2] > 1.8) | (np.abs(rotated[:, 0]) > 1)
        background |= ~np.isfinite(pc).all(1) | ~(d.ravel() > 0)
    z = 0.1 * pc[:, 1]
    z[background] = np.nan
    return z.reshape(h, w).astype(np.float32)


def _ec_sources(sources: Path | Sequence[Path]) -> list[tuple[Path, str]]:
    """(path, name) to read: each archive, and each directory itself plus the archives directly inside it."""
    paths = [Path(sources)] if isinstance(sources, (str, Path)) else [Path(p) for p in sources]
    out: list[tuple[Path, str]] = []
    for path in paths:
        if path.is_dir():
            out += [(p, _archive_stem(p)) for p in sorted(path.iterdir()) if p.is_file() and _is_archive(p)]
            out.append((path, path.name))
        elif path.is_file():
            out.append((path, _archive_stem(path)))
        else:
            raise FileNotFoundError(f"Eyecandies source {path} does not exist")
    return out


def _ec_finish(sample: dict, size: int, where: str) -> dict:
    """The arrays of one complete sample (frees the full-resolution depth)."""
    rgb, rgb_shape = sample.pop(EYECANDIES_RGB)
    depth16 = sample.pop("depth")
    if depth16.shape != rgb_shape:
        raise ValueError(f"sample {where}: RGB is {rgb_shape} but depth is {depth16.shape} (sizes differ)")
    z = eyecandies_z(depth16, sample.pop("info_depth"), sample.pop("pose"))
    out = {"rgb": rgb, "depth": resize_depth(z, np.isfinite(z), size), "invalid": int(np.isnan(z).sum())}
    if "mask" in sample:
        mask, mask_shape, bad = sample.pop("mask")
        if mask_shape != rgb_shape:
            raise ValueError(f"sample {where}: the mask is {mask_shape} but RGB is {rgb_shape} (sizes differ)")
        out["mask"], out["bad"] = mask, bad
    return out


def read_eyecandies(
    sources: Path | Sequence[Path], size: int = 256, classes: list[str] | None = None, log: Log = None
) -> dict[str, dict]:
    """Eyecandies as the reference's ``eyecandies_preprocessed`` holds it: ``{"train": ..., "test": ...}``.

    `sources`: the per-category tar archives as published (any compression), and/or directories holding them or the
    extracted categories (``<Category>/train/data/000_image_4.png`` ..., or a category folder itself). A category is
    named by its folder inside the archive or, where the archive holds the splits at its top, by the archive's file
    name (``CandyCane.tar``, ``candy_cane.tar.gz`` ...). Defects are ``good`` or ``bad`` (M3DM's folders)."""
    size = _check_size(size)
    wanted = _requested(classes, EYECANDIES_CLASSES, "Eyecandies")
    pending: dict[tuple[str, str, str], dict] = {}
    done: dict[tuple[str, str, str], dict] = {}
    seen: dict[str, dict[str, int]] = {}
    count = 0
    for path, name in _ec_sources(sources):
        for member, read in _members(path):
            m = _EC_MEMBER.match(member)
            if m is None or m["split"] not in _EC_SPLITS:
                continue
            item, ext = m["item"], m["ext"].replace("yml", "yaml")
            if _EC_ITEMS.get(item) != ext or (item == "mask" and m["split"] != "test_public"):
                continue
            folder = m["prefix"].rstrip("/").rpartition("/")[2]
            cls = _ec_canonical(folder) if folder else None
            cls = cls or _ec_canonical(name)
            if cls is None:
                raise ValueError(
                    f"{path}:{member}: cannot tell the Eyecandies category from the folder {folder!r} or the name "
                    f"{name!r}; name the archive after it ({', '.join(EYECANDIES_CLASSES)})"
                )
            split = _EC_SPLITS[m["split"]]
            key = (cls, split, m["stem"])
            seen.setdefault(cls, {}).setdefault(split, set()).add(m["stem"])
            if wanted is not None and cls not in wanted:
                continue
            if key in done:
                raise ValueError(f"sample {cls}/{m['split']}/{m['stem']} appears twice ({path}:{member})")
            sample, where = pending.setdefault(key, {}), f"{path.name}:{member}"
            if item in sample:
                raise ValueError(f"sample {cls}/{m['split']}/{m['stem']} has two {item} files ({where})")
            data = read()
            if item == EYECANDIES_RGB:
                rgb = _image(data, "RGB", where)
                sample[item] = (resize_rgb(rgb, size), rgb.shape[:2])
                count += 1
                _progress(log, count, "Eyecandies")
            elif item == "depth":
                sample[item] = _image(data, "", where)
                if sample[item].ndim != 2:
                    raise ValueError(f"{where} is not a single-channel depth map, shape {sample[item].shape}")
            elif item == "info_depth":
                sample[item] = _ec_bounds(data, where)
            elif item == "pose":
                sample[item] = _ec_pose(data, where)
            else:
                mask = _image(data, "L", where) > 0
                sample[item] = (resize_mask(mask, size), mask.shape, bool(mask.any()))
            needed = ("mask",) if split == "test" else ()
            if all(k in sample for k in (EYECANDIES_RGB, "depth", "info_depth", "pose", *needed)):
                done[key] = _ec_finish(pending.pop(key), size, f"{cls}/{m['split']}/{m['stem']}")

    found = {c: {s: len(v) for s, v in parts.items()} for c, parts in seen.items()}
    source_name = ", ".join(str(p) for p, _ in _ec_sources(sources))
    names = _check_classes(found, wanted, source_name)
    for (cls, split, stem), sample in sorted(pending.items()):
        if cls in names:
            needed = (EYECANDIES_RGB, "depth", "info_depth", "pose") + (("mask",) if split == "test" else ())
            lacking = [k for k in needed if k not in sample]
            folder = "test_public" if split == "test" else "train"
            raise ValueError(f"sample {cls}/{folder}/{stem} has no {', '.join(lacking)} file ({stem}_<item>.*)")
    order = {c: i for i, c in enumerate(names)}
    splits: dict[str, list[dict]] = {"train": [], "test": []}
    invalid = 0
    for key in sorted((k for k in done if k[0] in order), key=lambda k: (order[k[0]], _natural(k[2]))):
        cls, split, _stem = key
        sample = done[key]
        invalid += sample["invalid"]
        defect = ("bad" if sample["bad"] else "good") if split == "test" else "good"
        mask = sample.get("mask") if split == "test" else None
        splits[split].append(
            {
                "rgb": sample["rgb"],
                "depth": sample["depth"],
                "mask": mask if mask is not None else np.zeros((size, size), bool),
                "cls": cls,
                "defect": defect,
            }
        )
    if log is not None:
        log(
            f"Eyecandies: {len(splits['train'])} training and {len(splits['test'])} test images of {len(names)} "
            f"classes; {invalid} background points removed at full resolution"
        )
    return {part: _stack(samples) for part, samples in splits.items()}


def _ec_bounds(data: bytes, where: str) -> tuple[float, float]:
    import yaml

    try:
        info = yaml.safe_load(data)
        low, high = float(info["normalization"]["min"]), float(info["normalization"]["max"])
    except (yaml.YAMLError, KeyError, TypeError, ValueError) as error:
        raise ValueError(f"{where} does not state normalization: {{min, max}}: {error!r}") from error
    return low, high


def _ec_pose(data: bytes, where: str) -> np.ndarray:
    try:
        pose = np.loadtxt(io.BytesIO(data), dtype=np.float64)
    except ValueError as error:
        raise ValueError(f"{where} is not a 4 x 4 matrix: {error}") from error
    if pose.shape != (4, 4):
        raise ValueError(f"{where} is not a 4 x 4 matrix, shape {pose.shape}")
    return pose
