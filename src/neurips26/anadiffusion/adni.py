"""Paper scale: ADNI T1 volumes, supplied by the user (ADNI's data-use agreement forbids redistribution), checked
against the user's manifest and preprocessed as the paper does.

AnaDiffusion trains and evaluates on ADNI T1 scans split by subject (an earlier version: 1,735 scans of 407
subjects, 305/41/61 subjects for train/validation/test; the paper tests on 291 held-out scans), preprocessed by N4
bias correction, skull stripping, affine registration to MNI152, resampling to 1.5 mm, clipping at the 1st-99th
intensity percentile and scaling to [-1, 1] (arXiv 2608.23014 and its earlier version). Tools, as named here:
N4 and the affine registration from ANTsPy (``antspyx``, Tustison et al. 2021), skull stripping by HD-BET (Isensee
et al. 2019, ``hd-bet``); both are imported only when called, with an error naming the package to install. HD-BET
downloads its network weights on first use, so that step needs network access once.

The manifest is a CSV file with a header and at least the columns ``path`` (relative to the ADNI folder), ``sha256``
(hex digest of the file) and ``subject`` (the ADNI subject id, e.g. ``002_S_0295``); further columns (``group``,
``scan``, ...) are kept. Write one with, e.g., ``sha256sum`` over the NIfTI files you downloaded.
"""

from __future__ import annotations

import math
import re
import tempfile
from pathlib import Path, PurePosixPath

import nibabel as nib
import numpy as np
import pandas as pd

from ..common.download import file_hash
from .template import load_mni152
from .volumes import clip_and_scale

__all__ = [
    "ADNI_ACCESS",
    "PAPER_SPLIT_SUBJECTS",
    "AdniDataError",
    "check_manifest",
    "n4_bias_correct",
    "preprocess_t1",
    "read_manifest",
    "register_affine",
    "resample_to_grid",
    "skull_strip",
    "split_subjects",
]

ADNI_ACCESS = (
    "ADNI data cannot be downloaded by this workflow: it requires an account and acceptance of the ADNI Data Use "
    "Agreement. Apply at https://ida.loni.usc.edu (Image and Data Archive, project ADNI), then download the "
    "T1-weighted MRI scans (e.g. ADNI1/GO/2/3 MPRAGE, as NIfTI) into one folder, write a manifest CSV with the "
    "columns path (relative to that folder), sha256 and subject (e.g. with sha256sum), and point the paper-scale "
    "configuration at the folder and the manifest."
)
# the earlier version's subject split (train, validation, test); the paper's 291 test scans come from the last
PAPER_SPLIT_SUBJECTS = {"train": 305, "val": 41, "test": 61}
_SHA256 = re.compile(r"^[0-9a-f]{64}$")
_REQUIRED = ("path", "sha256", "subject")


class AdniDataError(ValueError):
    """The user-supplied ADNI folder or manifest is missing or does not match."""


def read_manifest(manifest: str | Path) -> pd.DataFrame:
    """The manifest as a table (columns path, sha256, subject and any others), checked for form: the columns are
    there, every digest is 64 hex digits, paths are relative, inside the folder and unique."""
    manifest = Path(manifest)
    if not manifest.is_file():
        raise AdniDataError(f"ADNI manifest {manifest} does not exist. {ADNI_ACCESS}")
    table = pd.read_csv(manifest, dtype=str, keep_default_na=False)
    missing = [c for c in _REQUIRED if c not in table.columns]
    if missing:
        raise AdniDataError(f"{manifest}: missing columns {missing}; a manifest needs {list(_REQUIRED)}")
    if table.empty:
        raise AdniDataError(f"{manifest}: lists no files")
    table["sha256"] = table["sha256"].str.strip().str.lower()
    for row in table.itertuples():
        if not _SHA256.match(row.sha256):
            raise AdniDataError(f"{manifest}, row {row.Index + 2}: sha256 {row.sha256!r} is not 64 hex digits")
        path = PurePosixPath(row.path)
        if not row.path or path.is_absolute() or ".." in path.parts:
            raise AdniDataError(f"{manifest}, row {row.Index + 2}: path {row.path!r} must be relative, in the folder")
        if not row.subject.strip():
            raise AdniDataError(f"{manifest}, row {row.Index + 2}: the subject of {row.path!r} is empty")
    duplicated = table["path"][table["path"].duplicated()].tolist()
    if duplicated:
        raise AdniDataError(f"{manifest}: paths listed twice: {duplicated[:5]}")
    return table


def check_manifest(root: str | Path, manifest: str | Path) -> pd.DataFrame:
    """Verifies every file of `manifest` under `root` against its sha256; returns the manifest with a column
    ``file`` (absolute path). Raises AdniDataError, naming the file with the expected and actual digests, on the
    first mismatch, and explaining how to obtain ADNI when the folder, the manifest or a file is missing."""
    root = Path(root)
    if not root.is_dir():
        raise AdniDataError(f"ADNI folder {root} does not exist. {ADNI_ACCESS}")
    table = read_manifest(manifest)
    files = [root / p for p in table["path"]]
    absent = [str(p) for p in files if not p.is_file()]
    if absent:
        raise AdniDataError(f"{len(absent)} files of manifest {manifest} are not in {root}, e.g. {absent[:3]}")
    for path, expected in zip(files, table["sha256"]):
        actual = file_hash(path, "sha256")
        if actual != expected:
            raise AdniDataError(f"checksum mismatch for {path}: expected sha256 {expected}, got {actual}")
    return table.assign(file=[str(p.resolve()) for p in files])


def split_subjects(subjects, sizes: dict[str, int] | None = None, seed: int = 0) -> dict[str, str]:
    """Subject id -> split name, disjoint by subject: the distinct subjects shuffled with `seed` and cut in the
    proportions of `sizes` (default the paper's 305/41/61 subjects)."""
    sizes = sizes or PAPER_SPLIT_SUBJECTS
    if not sizes or any(isinstance(v, bool) or not isinstance(v, int) or v < 0 for v in sizes.values()):
        raise ValueError(f"sizes must map split names to counts >= 0, got {sizes!r}")
    if sum(sizes.values()) == 0:
        raise ValueError("sizes must not all be 0")
    unique = np.array(sorted(set(str(s) for s in subjects)))
    if len(unique) < len(sizes):
        raise ValueError(f"{len(unique)} subjects cannot fill {len(sizes)} splits")
    order = np.random.default_rng(seed).permutation(unique)
    bounds = np.cumsum([0, *sizes.values()]) / sum(sizes.values()) * len(unique)
    cut = [int(math.floor(b + 0.5)) for b in bounds]
    return {s: name for name, lo, hi in zip(sizes, cut[:-1], cut[1:]) for s in order[lo:hi]}


def _import(module: str, package: str):
    import importlib

    try:
        return importlib.import_module(module)
    except ImportError as error:
        raise ImportError(
            f"this preprocessing step needs the package {package!r} (pip install {package}), which is not "
            f"installed: {error}"
        ) from error


def n4_bias_correct(image: nib.Nifti1Image) -> nib.Nifti1Image:
    """N4 bias-field correction (Tustison et al. 2010) by ANTsPy's ``n4_bias_field_correction``, default settings."""
    ants = _import("ants", "antspyx")
    corrected = ants.n4_bias_field_correction(ants.from_nibabel_nifti(_float_image(image)))
    return ants.to_nibabel_nifti(corrected)


def register_affine(
    image: nib.Nifti1Image, reference: nib.Nifti1Image, masks: tuple[nib.Nifti1Image, ...] = (), seed: int = 0
) -> tuple[nib.Nifti1Image, list[nib.Nifti1Image]]:
    """Affine registration of `image` to `reference` (ANTsPy ``registration``, type "Affine", mutual information),
    resampled on the reference's grid (linear), with each of `masks` carried by the same transform (nearest)."""
    ants = _import("ants", "antspyx")
    fixed = ants.from_nibabel_nifti(_float_image(reference))
    moving = ants.from_nibabel_nifti(_float_image(image))
    result = ants.registration(fixed, moving, type_of_transform="Affine", random_seed=seed)
    warped = ants.apply_transforms(fixed, moving, result["fwdtransforms"], interpolator="linear")
    carried = [
        ants.to_nibabel_nifti(
            ants.apply_transforms(
                fixed, ants.from_nibabel_nifti(_float_image(m)), result["fwdtransforms"], interpolator="nearestNeighbor"
            )  # fmt: skip
        )
        for m in masks
    ]
    return ants.to_nibabel_nifti(warped), carried


def skull_strip(image: nib.Nifti1Image, device: str = "cpu") -> tuple[nib.Nifti1Image, nib.Nifti1Image]:
    """HD-BET brain extraction: (skull-stripped image, brain mask). HD-BET reads and writes files, so the image
    passes through a temporary folder; its weights are downloaded on first use."""
    _import("nnunetv2", "hd-bet")
    checkpoint = _import("HD_BET.checkpoint_download", "hd-bet")
    prediction = _import("HD_BET.hd_bet_prediction", "hd-bet")
    import torch

    checkpoint.maybe_download_parameters()
    predictor = prediction.get_hdbet_predictor(use_tta=False, device=torch.device(device))
    with tempfile.TemporaryDirectory(prefix="hdbet_") as folder:
        source, target = Path(folder) / "t1.nii.gz", Path(folder) / "t1_brain.nii.gz"
        nib.save(_float_image(image), source)
        prediction.hdbet_predict(str(source), str(target), predictor, keep_brain_mask=True)
        stripped = nib.load(target)
        stripped = nib.Nifti1Image(stripped.get_fdata(dtype=np.float32), stripped.affine)  # read before cleanup
        mask = nib.load(Path(folder) / "t1_brain_bet.nii.gz")
        mask = nib.Nifti1Image((np.asarray(mask.dataobj) > 0).astype(np.uint8), mask.affine)
    return stripped, mask


def resample_to_grid(
    image: nib.Nifti1Image, shape: tuple[int, int, int], affine: np.ndarray, order: int = 1
) -> np.ndarray:
    """`image` resampled on the grid (`shape`, `affine`) with nibabel (spline `order`: 1 linear, 0 nearest; zero
    outside the image): float32 (X, Y, Z)."""
    from nibabel.processing import resample_from_to

    if order not in (0, 1, 3):
        raise ValueError(f"order must be 0 (nearest), 1 (linear) or 3 (cubic), got {order!r}")
    out = resample_from_to(_float_image(image), (tuple(shape), np.asarray(affine)), order=order, cval=0.0)
    return np.asarray(out.dataobj, dtype=np.float32)


def preprocess_t1(
    image: nib.Nifti1Image,
    template,
    low: float = 1.0,
    high: float = 99.0,
    device: str = "cpu",
    seed: int = 0,
) -> np.ndarray:
    """The paper's preprocessing of one raw T1 scan onto `template`'s grid (its affine and shape; 1.5 mm at paper
    scale): N4, HD-BET skull strip, affine registration to the 1 mm MNI152 2009a T1 (skull-stripped, as the scan
    now is), resampling to the grid, clip to the `low`-`high` percentiles and scaling to [-1, 1]; background
    (outside the brain mask, carried by the same transform) -1. float32 (X, Y, Z)."""
    image = nib.as_closest_canonical(image)
    stripped, mask = skull_strip(n4_bias_correct(image), device=device)
    mni, mni_affine = load_mni152("t1")
    registered, (brain,) = register_affine(stripped, nib.Nifti1Image(mni, mni_affine), masks=(mask,), seed=seed)
    volume = resample_to_grid(registered, template.shape, template.affine, order=1)
    inside = resample_to_grid(brain, template.shape, template.affine, order=1) >= 0.5
    volume = np.where(inside, np.clip(volume, 0, None), 0).astype(np.float32)
    return np.where(inside, clip_and_scale(volume, low, high), np.float32(-1.0)).astype(np.float32)


def _float_image(image: nib.Nifti1Image) -> nib.Nifti1Image:
    """A float32 NIfTI copy in mm (what ANTsPy's converter and HD-BET expect)."""
    out = nib.Nifti1Image(np.asarray(image.dataobj, dtype=np.float32), image.affine)
    out.header.set_xyzt_units("mm", "sec")
    return out
