"""Paper 11's rehearsal: what it cuts from the paper block, and fixture files in the real formats of its sources.

The rehearsal keeps every shape of the paper block: 256-pixel images, the ImageNet ResNet-34 teacher (layers 1-3 of
64/128/256 channels, 3/4/6 blocks), the 41.6 M-parameter reconstruction network (decoder 512/256/128/64, depths
2/4/4/2, 49/49/16/9 agent tokens, 3 bottleneck blocks) and CFM's 512-unit MLPs; a step of these at batch 16 counts
about 5 GB, so nothing needs a shape cut on a 24 GB machine. It cuts the budgets: 2 training steps (the common loop
counts its first two) of micro-batch 1 (and 2 for the memory extrapolation, linear in the micro-batch; the paper's
16), and the seeds to the largest. Every method and both settings run, each its own code path, once: unified ecfr,
same_modal (the same network, its loss comparing the other pairs) and cfm (its own MLPs), and the per-class setting
(one model per class) with the proposed ecfr. Two runs of the paper are left out as repeats of a rehearsed one:
C1's refit same_modal_b (same_modal's network, data and code from another initialisation) and the per-class
same_modal (the per-class ecfr's network, loop and memory with same_modal's pairs): two of six 41.6 M-network fits
at each micro-batch (a counted step of micro-batch 1 takes about 20 s on this CPU). No downstream job needs them:
the claims job writes C1's refit spread as "no refit at this scale" (smoke's path), and C5 finds no per-class
control, which with a single seed (a t interval of NaN width) it could not decide anyway; the evaluation job's work
function counts the runs it scores, so the paper's 18 are still estimated.

Fixtures (`fixtures`), each read by the paper's own readers (tests/test_ecfr_rehearsal.py):
- `ecfr/mvtec_3d_anomaly_detection.tar.xz`: MVTec 3D-AD's archive (xz-compressed tar) with its layout
  ``mvtec_3d_anomaly_detection/<class>/{train,validation,test}/<defect>/{rgb/NNN.png, xyz/NNN.tiff, gt/NNN.png}``:
  8-bit RGB PNGs, float32 H x W x 3 organised point clouds as uncompressed TIFFs (missing points 0, as the real
  scans), 8-bit 0/255 ground-truth PNGs, and the archive's readme. Two classes (bagel, cookie) of 320-pixel samples
  (the real scans are larger than 256 pixels too, so the reader shrinks them as it does the real ones): per class
  2 train and 1 validation normals (the doubled micro-batch of 2 fits each per-class model), a normal test image
  and two defect types. Two of the ten classes keep the per-class setting (one model per class) while bounding its
  cost: a per-class run fits one model per class, each for at least one step.
- `ecfr/resnet34-b627a593.pth`: torchvision's ImageNet ResNet-34 state dict (a torch.save zip file) with its real
  keys, shapes and dtypes (conv1 ... layer4, fc; 21,797,672 parameters; no ``num_batches_tracked``, which
  torchvision's 2017 ImageNet checkpoints predate), seeded values: He-normal convolutions, batch norms near the
  identity (positive running variances).
- `ecfr/eyecandies/<Category>.tar` (not in the paper-scale DAG, whose block holds MVTec 3D-AD only until a user pins
  the hand-downloaded archives: served so that the day it is added it is rehearsed): one plain tar per category with
  the splits at its top, ``{train,val,test_public,test_private}/data/<NNN>_<item>.<ext>``: six lights
  ``image_0`` ... ``image_5`` and ``normals`` (8-bit RGB PNGs), the 16-bit ``depth`` PNG with its bounds in
  ``info_depth.yaml``, ``pose.txt``, ``metadata.yaml`` and, outside test_private, ``mask.png``.

What the rehearsal cannot see, and the report of its plan must add: the training jobs hold data that grows with the
dataset, not with the micro-batch (the teacher's three scales of every training image, both modalities, on the job's
device: 3.67 MB an image, 10.8 GB for MVTec 3D-AD's 2,950 training normals; CFM the same), of which the fixture's 6
images count 22 MB; the scoring job's time grows with the test set (1,197 images against the fixture's 6), which its
work function cannot see (it counts the runs scored).
"""

from __future__ import annotations

import io
import tarfile

import numpy as np

from neurips26.common.rehearsal import Plan, largest

from . import experiment
from .names import EYECANDIES_CLASSES
from .real import MVTEC3D_SPLIT_SIZES

__all__ = [
    "DATA_GROWTH",
    "PLAN",
    "eyecandies_files",
    "eyecandies_sample_files",
    "fixtures",
    "mvtec_files",
    "mvtec_sample",
    "mvtec_scan",
    "png",
    "resnet34_state",
    "tar_bytes",
    "tiff",
    "write_tar",
]

MVTEC = "ecfr/mvtec_3d_anomaly_detection.tar.xz"
RESNET34 = "ecfr/resnet34-b627a593.pth"
EYECANDIES = "ecfr/eyecandies"
RESNET34_PARAMETERS = 21_797_672  # torchvision's count for ResNet34_Weights.IMAGENET1K_V1

# the rehearsal's MVTec 3D-AD: two classes of 320-pixel samples; per class and `items`, these counts
REHEARSAL_CLASSES = ("bagel", "cookie")
REHEARSAL_HW = (320, 320)
REHEARSAL_LAYOUT = [("train", "good", 2), ("validation", "good", 1), ("test", "good", 1), ("test", "crack", 1),
                    ("test", "hole", 1)]  # fmt: skip
BASE_SAMPLES = len(REHEARSAL_CLASSES) * sum(n for _, _, n in REHEARSAL_LAYOUT)  # 12 at items=1
MVTEC3D_SAMPLES = sum(MVTEC3D_SPLIT_SIZES.values())  # 4,147: 2,656 train, 294 validation, 1,197 test


def _runs(cfg: dict) -> int:
    """The runs one evaluation job scores (per dataset): every unified method (C1's null among them) and per-class
    method, each on its seeds."""
    return len(experiment.runs({**cfg, "datasets": {"one": None}}))


PLAN = Plan(
    budgets={"train.steps": 2, "train.batch": 1},
    sweeps={
        "seeds": largest,
        # the per-class setting with the proposed method only; the per-class same_modal repeats it (module docstring)
        "per_class_methods": lambda methods: [m for m in methods if m == "ecfr"] or methods[:1],
        # C1's null (same_modal refitted from another initialisation) repeats the unified same_modal run
        "comparisons": lambda comparisons: {k: v for k, v in comparisons.items() if k != "same_modal_null"},
    },
    micro_batch=("train.batch",),
    shapes={},
    fixture_paths={},
    work={
        # images through the student (forward and backward) per fitted run; a per-class run shares the unified
        # run's steps among its classes (equal epochs)
        "ecfr_train": lambda cfg, wc: cfg["train"]["steps"] * cfg["train"]["batch"],
        # every run's anomaly maps of the test set; the test set's size is the data's (1,197 images against the
        # fixture's 6), which the block does not carry: see the module docstring
        "ecfr_evaluate": lambda cfg, wc: _runs(cfg),
        # the report reads the train block for its text only
        "ecfr_report": lambda cfg, wc: 1,
    },
    note=(
        "2 training steps of micro-batch 1 (and 2) at the real 256-px images, ImageNet ResNet-34 teacher and"
        " 41.6 M-parameter network, every method and setting once (not C1's null or the per-class same_modal), the"
        " largest seed; MVTec 3D-AD fixture of 2 classes"
    ),
)

# the data job decodes and resizes every sample of the archive: linear in the samples (the real scans have more
# pixels than the fixture's 320 x 320, so this is a lower bound of its time)
DATA_GROWTH = {"ecfr_data": (BASE_SAMPLES, MVTEC3D_SAMPLES)}


# --------------------------------------------------------------------------- file formats


def png(array: np.ndarray) -> bytes:
    """A PNG of an (H, W, 3) uint8, (H, W) uint8 or (H, W) uint16 array, as PIL writes it."""
    from PIL import Image

    buffer = io.BytesIO()
    Image.fromarray(array).save(buffer, format="PNG")
    return buffer.getvalue()


def tiff(array: np.ndarray) -> bytes:
    """An uncompressed TIFF of an (H, W, 3) (RGB planes interleaved) or (H, W) array, as tifffile writes it."""
    import tifffile

    buffer = io.BytesIO()
    tifffile.imwrite(buffer, array, photometric="rgb" if array.ndim == 3 else "minisblack")
    return buffer.getvalue()


def _tar_into(handle, files: dict[str, bytes], mode: str, **options) -> None:
    with tarfile.open(fileobj=handle, mode=mode, **options) as tar:
        for name, data in files.items():
            info = tarfile.TarInfo(name)  # mtime 0, owner root: the same bytes on every build
            info.size = len(data)
            info.mode = 0o644
            tar.addfile(info, io.BytesIO(data))


def tar_bytes(files: dict[str, bytes], compression: str = "") -> bytes:
    """A tar archive of `files` (name -> bytes, in order): plain, or compressed by "xz" (preset 0, the fastest:
    the format does not depend on the preset) or "gz"."""
    buffer = io.BytesIO()
    options = {"preset": 0} if compression == "xz" else {}
    _tar_into(buffer, files, f"w:{compression}" if compression else "w", **options)
    return buffer.getvalue()


def write_tar(path, files: dict[str, bytes]):
    """`files` archived at `path`, compressed as its suffix says (.xz, .gz, else plain); returns `path`."""
    from pathlib import Path

    path = Path(path)
    path.write_bytes(tar_bytes(files, {".xz": "xz", ".gz": "gz"}.get(path.suffix, "")))
    return path


# --------------------------------------------------------------------------- MVTec 3D-AD

MVTEC_TEST_LAYOUT = [("train", "good", 2), ("validation", "good", 1), ("test", "good", 1), ("test", "crack", 1)]


def mvtec_sample(rng, defect: str, hw=(16, 16), xyz_hw=None) -> dict[str, np.ndarray]:
    """One sample's arrays: RGB noise, a point cloud with x, y in [0.5, 1) and z = 5 whose top eighth of rows is
    missing (0, as the real scans store it), and for a defect a 0/255 mask of a block (rows and columns h/4 to h/2)
    and a lone pixel at (3h/4, 3w/4)."""
    h, w = hw
    rgb = rng.integers(0, 256, (h, w, 3), dtype=np.uint8)
    xyz = rng.uniform(0.5, 1.0, (*(xyz_hw or hw), 3)).astype(np.float32)
    xyz[..., 2] = 5.0
    xyz[: max(1, xyz.shape[0] // 8)] = 0  # missing points: the top rows
    gt = np.zeros(hw, np.uint8)
    if defect != "good":
        gt[h // 4 : h // 2, w // 4 : w // 2] = 255
        gt[3 * h // 4, 3 * w // 4] = 255  # a lone pixel, below 0.5 after halving
    return {"rgb": rgb, "xyz": xyz, "gt": gt}


def mvtec_scan(rng, defect: str, hw=REHEARSAL_HW) -> dict[str, np.ndarray]:
    """One sample as a scan looks: an object (a shaded disc at a seeded place) standing 2 to 4 cm out of a plane
    about 0.6 m from the sensor, x and y the pixel's position in metres, the points outside the disc's
    neighbourhood and the top eighth of rows missing (0); a defect is a dark dent of the disc with its mask. Smooth,
    so that the archive compresses as the real one does (noise would make building it slow)."""
    h, w = hw
    rows, cols = np.mgrid[:h, :w].astype(np.float32)
    cy, cx = h * rng.uniform(0.45, 0.55), w * rng.uniform(0.45, 0.55)
    radius = min(h, w) * rng.uniform(0.3, 0.35)
    r2 = ((rows - cy) ** 2 + (cols - cx) ** 2) / radius**2
    disc = np.clip(1 - r2, 0, 1)
    xyz = np.stack([(cols - w / 2) * 3e-4, (rows - h / 2) * 3e-4, 0.6 - rng.uniform(0.02, 0.04) * disc], -1)
    xyz = xyz.astype(np.float32)
    xyz[r2 > 1.6] = 0  # no points far off the object
    xyz[: h // 8] = 0  # nor in the top rows
    shade = 60 + 150 * disc[..., None] * np.array(rng.uniform(0.6, 1.0, 3))
    gt = np.zeros(hw, np.uint8)
    if defect != "good":
        dent = (np.abs(rows - cy) < radius / 4) & (np.abs(cols - cx - radius / 3) < radius / 5)
        gt[dent] = 255
        shade[dent] *= 0.5
        xyz[dent, 2] += 0.005
    return {"rgb": shade.round().astype(np.uint8), "xyz": xyz, "gt": gt}


def mvtec_files(classes=("bagel", "cookie"), layout=MVTEC_TEST_LAYOUT, drop=(), seed: int = 0, sample_of=mvtec_sample,
                **kwargs) -> tuple[dict[str, bytes], dict]:  # fmt: skip
    """MVTec 3D-AD's archive members (name -> bytes, `drop`ped names left out) and the arrays of each sample,
    keyed (class, split, defect, stem); `layout` lists (split, defect, count) per class; each sample's arrays from
    `sample_of` (:func:`mvtec_sample`, or :func:`mvtec_scan`), given `kwargs` (hw, xyz_hw)."""
    rng = np.random.default_rng(seed)
    files, arrays = {}, {}
    for cls in classes:
        for split, defect, n in layout:
            for i in range(n):
                sample = sample_of(rng, defect, **kwargs)
                base, stem = f"mvtec_3d_anomaly_detection/{cls}/{split}/{defect}", f"{i:03d}"
                arrays[(cls, split, defect, stem)] = sample
                for kind, ext, encode in (("rgb", "png", png), ("xyz", "tiff", tiff), ("gt", "png", png)):
                    name = f"{base}/{kind}/{stem}.{ext}"
                    if name not in drop:
                        files[name] = encode(sample[kind])
    files["mvtec_3d_anomaly_detection/readme.txt"] = b"MVTec 3D-AD"
    return files, arrays


# --------------------------------------------------------------------------- Eyecandies

EC_LOW, EC_HIGH = 0.5, 1.5  # the depth bounds of info_depth.yaml (metres)
EC_POSE = "1 0 0 0\n0 1 0 0\n0 0 1 0\n0 0 0 1\n"
EC_LIGHTS = tuple(f"image_{i}" for i in range(6))
EC_TEST_LAYOUT = (("train", ["000", "001"]), ("val", ["000"]), ("test_public", ["00", "01"]))


def eyecandies_sample_files(prefix: str, rng, bad: bool | None, hw=(16, 16)) -> tuple[dict[str, bytes], dict]:
    """One sample's files (`bad` None: no mask, as in test_private) and arrays: a plane at 1 m with a box 0.2 m
    closer (rows and columns from 5/16 to 11/16 of the image), a defect a block of the mask."""
    h, w = hw
    depth = np.full(hw, 1.0)
    depth[5 * h // 16 : 11 * h // 16, 5 * w // 16 : 11 * w // 16] = 0.8
    depth16 = np.round((depth - EC_LOW) / (EC_HIGH - EC_LOW) * 65535).astype(np.uint16)
    rgb = {k: rng.integers(0, 256, (h, w, 3), dtype=np.uint8) for k in (*EC_LIGHTS, "normals")}
    files = {f"{prefix}_{k}.png": png(v) for k, v in rgb.items()}
    files[f"{prefix}_depth.png"] = png(depth16)
    files[f"{prefix}_info_depth.yaml"] = f"normalization:\n  min: {EC_LOW}\n  max: {EC_HIGH}\n".encode()
    files[f"{prefix}_pose.txt"] = EC_POSE.encode()
    files[f"{prefix}_metadata.yaml"] = f"anomalous: {int(bool(bad))}\n".encode()
    mask = np.zeros(hw, np.uint8)
    if bad:
        mask[h // 8 : 3 * h // 8, w // 2 : 3 * w // 4] = 255
    if bad is not None:
        files[f"{prefix}_mask.png"] = png(mask)
    return files, {"rgb": rgb["image_4"], "depth16": depth16, "mask": mask > 0}


def eyecandies_files(top: str = "", drop=(), layout=EC_TEST_LAYOUT, seed: int = 1,
                     hw=(16, 16)) -> tuple[dict[str, bytes], dict]:  # fmt: skip
    """One category's archive members (under the folder `top`, "" for the splits at the top) and the arrays of
    each sample keyed (split, stem): `layout` lists (split, stems); in val and test_public every second sample is
    bad; one test_private sample without a mask."""
    rng = np.random.default_rng(seed)
    files, arrays = {}, {}
    for split, stems in layout:
        for i, stem in enumerate(stems):
            bad = (i % 2 == 1) if split != "train" else False
            more, arr = eyecandies_sample_files(f"{top}{split}/data/{stem}", rng, bad, hw)
            files.update(more)
            arrays[(split, stem)] = arr
    files.update(eyecandies_sample_files(f"{top}test_private/data/00", rng, None, hw)[0])
    return {k: v for k, v in files.items() if k not in drop}, arrays


# --------------------------------------------------------------------------- ImageNet ResNet-34 (torchvision)


def resnet34_shapes() -> dict[str, tuple[int, ...]]:
    """torchvision's ResNet-34 state dict, key -> shape, in its order (BasicBlocks [3, 4, 6, 3], fc of 1,000)."""
    shapes: dict[str, tuple[int, ...]] = {"conv1.weight": (64, 3, 7, 7)}

    def bn(prefix: str, width: int) -> None:
        for name in ("weight", "bias", "running_mean", "running_var"):
            shapes[f"{prefix}.{name}"] = (width,)

    bn("bn1", 64)
    cin = 64
    for layer, (width, blocks) in enumerate(zip((64, 128, 256, 512), (3, 4, 6, 3))):
        for block in range(blocks):
            p = f"layer{layer + 1}.{block}"
            shapes[f"{p}.conv1.weight"] = (width, cin if block == 0 else width, 3, 3)
            bn(f"{p}.bn1", width)
            shapes[f"{p}.conv2.weight"] = (width, width, 3, 3)
            bn(f"{p}.bn2", width)
            if block == 0 and layer > 0:
                shapes[f"{p}.downsample.0.weight"] = (width, cin, 1, 1)
                bn(f"{p}.downsample.1", width)
        cin = width
    shapes["fc.weight"], shapes["fc.bias"] = (1000, 512), (1000,)
    return shapes


def resnet34_state(seed: int = 11) -> dict:
    """A state dict with torchvision's ResNet-34 keys, shapes and dtype (float32), seeded values: convolutions
    and fc He-normal, batch norms near the identity with positive running variances."""
    import torch

    rng = np.random.default_rng(seed)
    state = {}
    for key, shape in resnet34_shapes().items():
        if key.endswith("running_var"):
            value = rng.uniform(0.5, 1.5, shape)
        elif key.endswith("running_mean") or key.endswith("bias"):
            value = rng.normal(0, 0.05, shape)
        elif len(shape) == 1:  # a batch norm's weight
            value = rng.uniform(0.5, 1.0, shape)
        else:
            value = rng.standard_normal(shape, dtype=np.float32) * np.sqrt(2 / np.prod(shape[1:]))
        state[key] = torch.from_numpy(np.ascontiguousarray(value, dtype=np.float32))
    return state


def resnet34_bytes(seed: int = 11) -> bytes:
    """The state dict as torch.save writes it (the zip format of torchvision's files; deterministic bytes)."""
    import torch

    buffer = io.BytesIO()
    torch.save(resnet34_state(seed), buffer)
    return buffer.getvalue()


# --------------------------------------------------------------------------- the registry's files


def mvtec_archive(items: int = 1) -> bytes:
    """The rehearsal's MVTec 3D-AD archive: `items` times the base samples per class and split."""
    layout = [(split, defect, n * items) for split, defect, n in REHEARSAL_LAYOUT]
    files, _ = mvtec_files(REHEARSAL_CLASSES, layout, sample_of=mvtec_scan, hw=REHEARSAL_HW)
    return tar_bytes(files, "xz")


def eyecandies_archives(items: int = 1) -> dict[str, bytes]:
    """Registry path -> a plain tar per category, the splits at its top: per `items`, 4 train, 1 val and 2
    test_public (a good and a bad) samples of 64 pixels, and one test_private sample."""
    layout = (("train", [f"{i:03d}" for i in range(4 * items)]), ("val", [f"{i:03d}" for i in range(items)]),
              ("test_public", [f"{i:02d}" for i in range(2 * items)]))  # fmt: skip
    return {
        f"{EYECANDIES}/{name}.tar": tar_bytes(eyecandies_files(layout=layout, seed=k, hw=(64, 64))[0])
        for k, name in enumerate(EYECANDIES_CLASSES)
    }


def fixtures(items: int = 1) -> dict[str, bytes]:
    """Registry path -> bytes: MVTec 3D-AD's archive, the ResNet-34 weights and the Eyecandies categories."""
    return {MVTEC: mvtec_archive(items), RESNET34: resnet34_bytes(), **eyecandies_archives(items)}
