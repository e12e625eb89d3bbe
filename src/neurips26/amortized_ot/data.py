"""Measure pairs for the four tasks of the paper (arXiv:2604.15114, abstract): digits as grid measures, colour
transfer, supply-demand on the sphere (Meta-OT's sphere task, Amos et al. 2023) and 2-D toy minibatches."""

from __future__ import annotations

import numpy as np
from scipy.ndimage import zoom

from neurips26.amortized_ot.measures import PairBatch
from neurips26.common.image_archives import read_idx_images

DIGIT_FLOOR = 1e-3
COLOUR_IMAGES = (
    "astronaut",
    "coffee",
    "chelsea",
    "rocket",
    "retina",
    "stereo_motorcycle",
    "immunohistochemistry",
    "hubble_deep_field",
)


def grid_points(res: int) -> np.ndarray:
    """Pixel centres of a res x res grid on [0, 1]^2, row-major, as (res*res, 2)."""
    centres = (np.arange(res) + 0.5) / res
    rows, cols = np.meshgrid(centres, centres, indexing="ij")
    return np.stack([cols.ravel(), 1.0 - rows.ravel()], axis=1)


def image_to_weights(images: np.ndarray, res: int) -> np.ndarray:
    """Grey images (N, h, w) -> grid weights (N, res*res): bilinear resample, floor, normalise."""
    images = np.asarray(images, dtype=np.float64)
    if images.shape[1] != res:
        images = np.stack([zoom(img, res / img.shape[0], order=1) for img in images])
    images = np.clip(images, 0.0, None)
    images = images / images.max(axis=(1, 2), keepdims=True)
    weights = images.reshape(len(images), -1) + DIGIT_FLOOR
    return weights / weights.sum(axis=1, keepdims=True)


def digit_pairs(images: np.ndarray, n_pairs: int, res: int, seed: int) -> tuple[PairBatch, np.ndarray]:
    """Random ordered pairs of distinct images as grid measures; returns the batch and (P, 2) image ids."""
    rng = np.random.default_rng(seed)
    ids = np.stack([rng.choice(len(images), size=2, replace=False) for _ in range(n_pairs)])
    weights = image_to_weights(images, res)
    grid = grid_points(res)
    support = np.broadcast_to(grid, (n_pairs, *grid.shape)).copy()
    return PairBatch(support, weights[ids[:, 0]], support.copy(), weights[ids[:, 1]]), ids


def load_colour_images() -> dict[str, np.ndarray]:
    """The RGB images bundled with scikit-image, as floats in [0, 1]."""
    from skimage import data as skdata

    images = {}
    for name in COLOUR_IMAGES:
        loaded = getattr(skdata, name)()
        if isinstance(loaded, tuple):  # stereo_motorcycle returns (left, right, disparity)
            loaded = loaded[0]
        img = np.asarray(loaded, dtype=np.float64)
        images[name] = img[..., :3] / (255.0 if img.max() > 1.0 else 1.0)
    return images


def colour_pairs(
    images: dict[str, np.ndarray], n_pairs: int, crop: int, n_colours: int, seed: int
) -> tuple[PairBatch, np.ndarray, np.ndarray]:
    """Pairs of random crops from two different images; each measure is n_colours pixel colours, uniform.

    Returns the batch, the crops (P, 2, crop, crop, 3) for figures, and the image-name ids (P, 2).
    """
    rng = np.random.default_rng(seed)
    names = sorted(images)
    crops = np.empty((n_pairs, 2, crop, crop, 3))
    ids = np.stack([rng.choice(len(names), size=2, replace=False) for _ in range(n_pairs)])
    colours = np.empty((n_pairs, 2, n_colours, 3))
    for p in range(n_pairs):
        for side in range(2):
            img = images[names[ids[p, side]]]
            top = rng.integers(0, img.shape[0] - crop + 1)
            left = rng.integers(0, img.shape[1] - crop + 1)
            crops[p, side] = img[top : top + crop, left : left + crop]
            pixels = crops[p, side].reshape(-1, 3)
            colours[p, side] = pixels[rng.choice(len(pixels), size=n_colours, replace=False)]
    uniform = np.full((n_pairs, n_colours), 1.0 / n_colours)
    return PairBatch(colours[:, 0], uniform, colours[:, 1], uniform.copy()), crops, ids


def fibonacci_sphere(n: int) -> np.ndarray:
    """n nearly uniform unit vectors (the Fibonacci lattice)."""
    i = np.arange(n) + 0.5
    polar = np.arccos(1 - 2 * i / n)
    azimuth = np.pi * (1 + 5**0.5) * i
    return np.stack([np.cos(azimuth) * np.sin(polar), np.sin(azimuth) * np.sin(polar), np.cos(polar)], axis=1)


def vmf_mixture_weights(
    points: np.ndarray, rng: np.random.Generator, n_min: int, n_max: int, kappa: tuple[float, float]
) -> np.ndarray:
    """Weights on `points` from a random mixture of von Mises-Fisher bumps (unnormalised densities)."""
    k = rng.integers(n_min, n_max + 1)
    centres = rng.normal(size=(k, 3))
    centres /= np.linalg.norm(centres, axis=1, keepdims=True)
    kappas = rng.uniform(*kappa, size=k)
    mix = rng.dirichlet(np.ones(k))
    # kappa/(4 pi sinh kappa) e^{kappa mu.x} = kappa/(2 pi (1 - e^{-2 kappa})) e^{kappa (mu.x - 1)}
    density = (mix * kappas / (2 * np.pi * (1 - np.exp(-2 * kappas))) * np.exp(kappas * (points @ centres.T - 1))).sum(
        1
    )
    weights = density / density.sum() + DIGIT_FLOOR / len(points)
    return weights / weights.sum()


def read_population_grid(path) -> np.ndarray:
    """GPW v4 population density GeoTIFF (equirectangular, north row first) as a 2-D array, no-data -> 0."""
    import tifffile

    grid = np.asarray(tifffile.imread(path), dtype=np.float64)
    if grid.ndim != 2 or grid.shape[1] != 2 * grid.shape[0]:
        raise ValueError(f"{path}: expected a global equirectangular raster (width = 2 x height), got {grid.shape}")
    return np.where(np.isfinite(grid) & (grid > 0), grid, 0.0)


def population_weights(grid: np.ndarray, points: np.ndarray) -> np.ndarray:
    """Population density at unit vectors `points` (nearest cell of the lat/lon grid), floored, normalised."""
    lat = np.degrees(np.arcsin(np.clip(points[:, 2], -1, 1)))
    lon = np.degrees(np.arctan2(points[:, 1], points[:, 0]))
    rows = np.clip(((90 - lat) / 180 * grid.shape[0]).astype(int), 0, grid.shape[0] - 1)
    cols = np.clip(((lon + 180) / 360 * grid.shape[1]).astype(int), 0, grid.shape[1] - 1)
    density = grid[rows, cols]
    if density.sum() <= 0:
        raise ValueError("the population grid is empty at every sphere point")
    weights = density / density.sum() + DIGIT_FLOOR / len(points)
    return weights / weights.sum()


def sphere_pairs(
    n_pairs: int, n_points: int, kappa: tuple[float, float], seed: int, supply: np.ndarray | None = None
) -> PairBatch:
    """Supply vs demand on a shared Fibonacci grid of the sphere. Supply is a random vMF mixture (3-6
    bumps) per pair, or the given weights (population density, as in Meta-OT); demand is always random."""
    rng = np.random.default_rng(seed)
    points = fibonacci_sphere(n_points)
    if supply is not None:
        supply = np.broadcast_to(supply, (n_pairs, n_points)).copy()
    else:
        supply = np.stack([vmf_mixture_weights(points, rng, 3, 6, kappa) for _ in range(n_pairs)])
    demand = np.stack([vmf_mixture_weights(points, rng, 3, 6, kappa) for _ in range(n_pairs)])
    support = np.broadcast_to(points, (n_pairs, *points.shape)).copy()
    return PairBatch(support, supply, support.copy(), demand)


def eight_gaussians(n: int, rng: np.random.Generator, radius: float = 2.0, std: float = 0.2) -> np.ndarray:
    angles = 2 * np.pi * rng.integers(0, 8, size=n) / 8
    centres = radius * np.stack([np.cos(angles), np.sin(angles)], axis=1)
    return centres + std * rng.normal(size=(n, 2))


def two_moons(n: int, rng: np.random.Generator, noise: float = 0.05) -> np.ndarray:
    """sklearn's make_moons, centred and scaled to the 8-Gaussians' extent."""
    from sklearn.datasets import make_moons

    points, _ = make_moons(n_samples=n, noise=noise, random_state=int(rng.integers(2**31)))
    return (points - np.array([0.5, 0.25])) * 1.5


TOY_SAMPLERS = {"8gaussians": eight_gaussians, "moons": two_moons}

TASK_COST = {"digits": "sqeuclidean", "colour": "sqeuclidean", "sphere": "sqgeodesic", "cfm": "sqeuclidean"}
TASKS = tuple(TASK_COST)


def pair_seed(seed: int, task: str, split: str) -> int:
    """Distinct, reproducible seeds per (task, split); resolutions of one split share pairs."""
    return 1000 * seed + 10 * TASKS.index(task) + ("train", "test").index(split)


def digit_images(source: str, split: str, seed: int, files: list[str]) -> np.ndarray:
    """Digit images of one split: scikit-learn's 8x8 digits (fixed 70/30 split) or MNIST's own split."""
    if source == "sklearn":
        from sklearn.datasets import load_digits

        return split_images(load_digits().images, split, seed)
    if source == "mnist":
        name = "train-images-idx3-ubyte.gz" if split == "train" else "t10k-images-idx3-ubyte.gz"
        matches = [f for f in files if str(f).endswith(name)]
        if not matches:
            raise FileNotFoundError(f"MNIST file {name} is not among the inputs {files}")
        return read_idx_images(matches[0])
    raise ValueError(f"unknown digit source '{source}' (allowed values: sklearn, mnist)")


def split_images(images: np.ndarray, split: str, seed: int, train_share: float = 0.7) -> np.ndarray:
    """A fixed, disjoint train/test split of an image set (so test pairs use unseen images)."""
    order = np.random.default_rng(seed).permutation(len(images))
    cut = int(train_share * len(images))
    return images[order[:cut]] if split == "train" else images[order[cut:]]


def toy_minibatch_pairs(
    n_pairs: int, batch_size: int, seed: int, source: str = "8gaussians", target: str = "moons"
) -> PairBatch:
    """Minibatches (source sample, target sample) with uniform weights, as in minibatch OT-CFM."""
    rng = np.random.default_rng(seed)
    x = np.stack([TOY_SAMPLERS[source](batch_size, rng) for _ in range(n_pairs)])
    y = np.stack([TOY_SAMPLERS[target](batch_size, rng) for _ in range(n_pairs)])
    uniform = np.full((n_pairs, batch_size), 1.0 / batch_size)
    return PairBatch(x, uniform, y, uniform.copy())


def task_pairs(
    task: str, cfg: dict, seed: int, split: str, n_pairs: int, res: int, source_files: list[str]
) -> dict[str, np.ndarray]:
    """The measure pairs of one task and split at one resolution, as arrays (x, a, y, b and, where a figure needs
    them, the image ids and colour crops). `cfg` is the task's block: source, crop or kappa."""
    pairs_seed = pair_seed(seed, task, split)
    if task == "digits":
        batch, ids = digit_pairs(digit_images(cfg["source"], split, seed, source_files), n_pairs, res, pairs_seed)
        return {**batch.as_dict(), "ids": ids}
    if task == "colour":
        batch, crops, ids = colour_pairs(load_colour_images(), n_pairs, cfg["crop"], res, pairs_seed)
        return {**batch.as_dict(), "ids": ids, "crops": crops}
    if task == "sphere":
        supply = None
        if cfg["source"] == "gpw":
            supply = population_weights(read_population_grid(source_files[0]), fibonacci_sphere(res))
        return sphere_pairs(n_pairs, res, tuple(cfg["kappa"]), pairs_seed, supply).as_dict()
    return toy_minibatch_pairs(n_pairs, res, pairs_seed).as_dict()


def task_groups(
    task: str, cfg: dict, seed: int, train_res: int, test_groups: dict[str, int], source_files: list[str]
) -> dict[str, dict[str, np.ndarray]]:
    """The training pairs ('train', at `train_res`) and every test group (name -> resolution) of a task;
    the test groups of one task share their pairs and differ in resolution only."""
    groups = {"train": task_pairs(task, cfg, seed, "train", cfg["train_pairs"], train_res, source_files)}
    for group, res in test_groups.items():
        groups[group] = task_pairs(task, cfg, seed, "test", cfg["test_pairs"], res, source_files)
    return groups
