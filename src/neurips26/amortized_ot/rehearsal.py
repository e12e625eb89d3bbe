"""Paper 18's rehearsal: what it cuts from the paper block, and fixture files in the real formats of its sources
(MNIST's four gzipped IDX files, shared with paper 04, and a GPW v4 15-arc-minute GeoTIFF at the user path)."""

from __future__ import annotations

import gzip
import io

import numpy as np

from neurips26.amortized_ot import experiment
from neurips26.common.rehearsal import Plan, largest

MNIST_FILES = (
    "train-images-idx3-ubyte.gz",
    "train-labels-idx1-ubyte.gz",
    "t10k-images-idx3-ubyte.gz",
    "t10k-labels-idx1-ubyte.gz",
)
MNIST_BASE = {"train": 384, "t10k": 96}  # images per split at items=1: paper 04's N and paper 18's pairs fit
GPW_SHAPE = (720, 1440)  # GPW v4's 15 arc-minute global grid (rows north to south)
GPW_NODATA = "-3.4028235e+38"  # the file's no-data value (float32's lowest), as its GDAL_NODATA tag spells it
GPW_FIXTURE = "fixtures/amortized_ot/gpw_v4_population_density_rev11_2015_15_min.tif"


def _pairs(block: dict, task: str) -> int:
    """Pairs a task's jobs draw or solve: its training pairs and its test pairs once per test group."""
    if task == "cfm":
        return block["cfm"]["train_pairs"]
    return block[task]["train_pairs"] + block[task]["test_pairs"] * len(experiment.test_groups(block, task))


def _fit(block: dict, wc: dict) -> int:
    """RA-OT: one pass over the training pairs; OA-OT: one over them per L-BFGS iteration (at most oa.max_iter)."""
    pairs = block[wc["task"]]["train_pairs"]
    return pairs * (block["oa"]["max_iter"] if wc["fitted"] == "oa" else 1)


def _runs_on_test_pairs(block: dict, wc: dict) -> int:
    """Predict and evaluate: every (predictor, test group) run of the task over the group's test pairs (cold Sinkhorn
    runs to each prediction's marginal error, mostly far below evaluation.max_iter, so the cut max_iter is left out)."""
    return len(experiment.predictions(block, wc["task"])) * block[wc["task"]]["test_pairs"]


def _cfm_evaluate(block: dict, wc: dict) -> int:
    """Every flow (plan x CFM seed) integrated over eval_samples points for ode_steps Euler steps."""
    cfm = block["cfm"]
    return len(cfm["plans"]) * len(block["cfm_seeds"]) * cfm["eval_samples"] * cfm["ode_steps"]


PLAN = Plan(
    budgets={
        "digits.train_pairs": 8,
        "digits.test_pairs": 4,
        "colour.train_pairs": 8,
        "colour.test_pairs": 4,
        "sphere.train_pairs": 8,
        "sphere.test_pairs": 4,
        "oa.max_iter": 2,
        "evaluation.max_iter": 20,
        "metaot.steps": 2,
        "metaot.batch_size": 4,
        "cfm.train_pairs": 4,
        "cfm.steps": 2,
        "cfm.eval_samples": 64,
        "cfm.ode_steps": 2,
    },
    sweeps={
        "fit_seeds": largest,
        "cfm_seeds": largest,
        # the main L (128, the paper's list's second last) and the largest (512): the main L's models are the
        # ones refitted, evaluated on other grids and profiled, so both must stay
        "projections": lambda values: values[-2:],
    },
    micro_batch=("metaot.batch_size",),
    shapes={},
    fixture_paths={"sphere.gpw_path": GPW_FIXTURE},
    # the work of one job, in pairs, pair-iterations, examples or sample-steps (rules not named here do not depend on
    # a cut budget: the figures, tables, claims and report read the results of the jobs above)
    work={
        "amortized_ot_pairs": lambda b, wc: _pairs(b, wc["task"]),
        "amortized_ot_ground_truth": lambda b, wc: _pairs(b, wc["task"]),
        "amortized_ot_fit": _fit,
        "amortized_ot_fit_seeded": _fit,
        "amortized_ot_fit_metaot": lambda b, wc: b["metaot"]["steps"] * b["metaot"]["batch_size"],
        "amortized_ot_fit_metaot_seeded": lambda b, wc: b["metaot"]["steps"] * b["metaot"]["batch_size"],
        "amortized_ot_predict": _runs_on_test_pairs,
        "amortized_ot_evaluate": _runs_on_test_pairs,
        # the profile times at most speed.PROFILE_PAIRS (50) colour test pairs
        "amortized_ot_speed_profile": lambda b, wc: min(50, b["colour"]["test_pairs"]),
        "amortized_ot_cfm_train": lambda b, wc: b["cfm"]["steps"] * b["cfm"]["batch_size"],
        "amortized_ot_cfm_train_seeded": lambda b, wc: b["cfm"]["steps"] * b["cfm"]["batch_size"],
        "amortized_ot_cfm_evaluate": _cfm_evaluate,
    },
    note=(
        "pairs per task 8 train / 4 test, OA-OT 2 iterations, Meta-OT and CFM 2 steps (Meta-OT micro-batch 4),"
        " one extra fit seed and CFM seed, L in {128, 512}; every atom count, basis size, width and the ground"
        " truth's tolerance are the paper's"
    ),
)
DATA_GROWTH: dict[str, int] = {}  # pairs are drawn per job; no rule's cost grows with the MNIST file's size


def _idx(magic: int, array: np.ndarray) -> bytes:
    """An IDX file (big-endian int32 magic and dimensions, then uint8 data), gzipped as MNIST ships it."""
    header = np.array([magic, *array.shape], dtype=">i4").tobytes()
    return gzip.compress(header + np.ascontiguousarray(array, dtype=np.uint8).tobytes(), mtime=0)


def mnist_images(n: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """`n` digit-like uint8 images (28 x 28, the digit in the central 24 x 24 box on a zero background, as MNIST's)
    from scikit-learn's 8 x 8 digits upscaled 3x, and their labels; deterministic in `seed`."""
    from sklearn.datasets import load_digits

    digits = load_digits()
    pick = np.random.default_rng(seed).integers(0, len(digits.images), size=n)
    small = np.rint(digits.images[pick] * (255 / 16)).astype(np.uint8)
    images = np.zeros((n, 28, 28), dtype=np.uint8)
    images[:, 2:26, 2:26] = np.kron(small, np.ones((3, 3), dtype=np.uint8))
    return images, digits.target[pick].astype(np.uint8)


def mnist_files(items: int = 1) -> dict[str, bytes]:
    """MNIST's four files (file name -> gzipped IDX bytes): images magic 2051, labels magic 2049."""
    out = {}
    for split, seed in (("train", 0), ("t10k", 1)):
        images, labels = mnist_images(MNIST_BASE[split] * items, seed)
        out[f"{split}-images-idx3-ubyte.gz"] = _idx(2051, images)
        out[f"{split}-labels-idx1-ubyte.gz"] = _idx(2049, labels)
    return out


def gpw_geotiff(shape: tuple[int, int] = GPW_SHAPE, seed: int = 0) -> bytes:
    """A GPW v4 population density raster in the real file's format: one float32 band, north row first, the
    GeoTIFF tags of a WGS84 global grid (pixel scale, tie point at (-180, 90), geographic key directory) and
    GDAL's no-data tag, with no-data over the oceans (here: the rows south of 60 S and random cells)."""
    import tifffile

    rows, cols = shape
    rng = np.random.default_rng(seed)
    lat = 90 - (np.arange(rows) + 0.5) * 180 / rows
    lon = -180 + (np.arange(cols) + 0.5) * 360 / cols
    density = np.exp(-(((lat[:, None] - 30) / 20) ** 2)) * (1.5 + np.cos(np.radians(lon))[None, :]) * 200
    grid = (density * rng.lognormal(0, 1, size=shape)).astype(np.float32)
    grid[(lat < -60)[:, None] | (rng.uniform(size=shape) < 0.6)] = np.float32(GPW_NODATA)
    degrees = 360 / cols
    tags = [
        (33550, "d", 3, (degrees, degrees, 0.0), True),  # ModelPixelScaleTag
        (33922, "d", 6, (0.0, 0.0, 0.0, -180.0, 90.0, 0.0), True),  # ModelTiepointTag
        # GeoKeyDirectoryTag: raster-is-area, geographic model, WGS84
        (34735, "H", 16, (1, 1, 0, 3, 1024, 0, 1, 2, 1025, 0, 1, 1, 2048, 0, 1, 4326), True),
        (42113, "s", 0, GPW_NODATA, True),  # GDAL_NODATA
    ]
    buffer = io.BytesIO()
    tifffile.imwrite(buffer, grid, extratags=tags, compression="zlib", rowsperstrip=16)
    return buffer.getvalue()


def fixtures(items: int = 1) -> dict[str, bytes]:
    """Registry path -> bytes: MNIST's four IDX files (the `mnist` folder, shared with paper 04)."""
    return {f"mnist/{name}": payload for name, payload in mnist_files(items).items()}


def local_files() -> dict[str, bytes]:
    """The user-supplied GPW raster at `sphere.gpw_path`'s rehearsal value (relative to the workflow copy)."""
    return {GPW_FIXTURE: gpw_geotiff()}
