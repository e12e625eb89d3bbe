r"""Data of paper 17.

Quick scale: a 2-D manifold (scikit-learn's S-curve or swiss roll, 3-D points with a known 1-D roll coordinate and
a height), standardised with fixed constants, lifted into ``dim`` dimensions by a fixed random map
``y = tanh(A p + b)`` (or, ``lift="none"``, kept in 3-D as the reference's ``swiss_roll_loader.py`` does), plus
Gaussian noise, with a random share of entries declared missing (NaN, ``mask`` False). The clean lifted points are
kept, and :func:`manifold_surface` draws the same noiseless manifold densely, so that the distance of a
reconstruction to the true manifold can be measured. The lifted shape is that of the oil-flow data the reference
code loads (12 dimensions, low intrinsic dimension).

:func:`build_dataset` keeps the truth of the hidden entries, which are the ones scored. :func:`read_oil_archive`
reads the oil-flow archive (``3PhData.tar.gz``: ``DataTrn.txt`` and its one-hot labels ``DataTrnLbls.txt``, as the
reference's ``oil_data_loader.py``) for paper scale, standardised per column.

Bad inputs are refused with a message naming the problem: a latent dimension <= 0, more inducing points than
data points, NaN outside the declared missing mask.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache

import numpy as np

__all__ = [
    "Manifold",
    "build_dataset",
    "check_observations",
    "check_sizes",
    "make_manifold",
    "manifold_surface",
    "read_oil_archive",
]

MAKERS = ("s_curve", "swiss_roll")
LIFTS = ("tanh", "none")


@dataclass(frozen=True)
class Manifold:
    y: np.ndarray  # (n, dim) observed, NaN where missing
    mask: np.ndarray  # (n, dim) True where observed
    clean: np.ndarray  # (n, dim) the noiseless lifted points
    points: np.ndarray  # (n, 3) the 3-D manifold points
    coordinate: np.ndarray  # (n,) the roll coordinate (for colouring latent spaces)


def _points(kind: str, n: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    from sklearn.datasets import make_s_curve, make_swiss_roll

    makers = {"s_curve": make_s_curve, "swiss_roll": make_swiss_roll}
    if kind not in makers:
        raise ValueError(f"unknown manifold {kind!r}; known: {sorted(makers)}")
    return makers[kind](n_samples=n, noise=0.0, random_state=seed)


@cache
def _standardisation(kind: str) -> tuple[np.ndarray, np.ndarray]:
    """Fixed column means and deviations of a manifold (from 100,000 points of a fixed seed), so that every sample
    and the dense surface share one map."""
    points, _ = _points(kind, 100_000, 12345)
    return points.mean(0), points.std(0)


def _lift(kind: str, points: np.ndarray, seed: int, dim: int, lift: str) -> np.ndarray:
    mean, std = _standardisation(kind)
    points = (points - mean) / std
    if lift == "none":
        return points
    gen = np.random.default_rng([seed, 1])  # the map depends on the seed only, not on n
    a, b = gen.standard_normal((dim, 3)) / np.sqrt(3), 0.1 * gen.standard_normal(dim)
    return np.tanh(points @ a.T + b)


def _check_shape(dim: int, lift: str) -> None:
    if lift not in LIFTS:
        raise ValueError(f"unknown lift {lift!r}; known: {list(LIFTS)}")
    if lift == "none" and dim != 3:
        raise ValueError(f"lift 'none' keeps the 3-D points: dim must be 3, got {dim}")
    if dim < 3:
        raise ValueError(f"need dim >= 3, got {dim}")


def make_manifold(kind: str, n: int, seed: int, dim: int = 12, noise: float = 0.05, missing: float = 0.1,
                  lift: str = "tanh") -> Manifold:  # fmt: skip
    if n < 2 or noise < 0 or not 0 <= missing < 1:
        raise ValueError(f"need n >= 2, noise >= 0 and missing in [0, 1); got {n}, {noise}, {missing}")
    _check_shape(dim, lift)
    points, coordinate = _points(kind, n, seed)
    clean = _lift(kind, points, seed, dim, lift)
    rng = np.random.default_rng([seed, 2])
    y = clean + noise * rng.standard_normal(clean.shape)
    mask = _missing_mask(clean.shape, missing, rng)
    return Manifold(np.where(mask, y, np.nan), mask, clean, points, coordinate)


def _missing_mask(shape: tuple[int, int], missing: float, rng: np.random.Generator) -> np.ndarray:
    mask = rng.random(shape) >= missing
    empty = ~mask.any(1)
    mask[empty, rng.integers(0, shape[1], int(empty.sum()))] = True  # every point keeps one observed entry
    return mask


def manifold_surface(kind: str, seed: int, dim: int = 12, n: int = 20_000, lift: str = "tanh") -> np.ndarray:
    """(n, dim) noiseless points densely on the manifold of :func:`make_manifold` with the same ``seed``."""
    _check_shape(dim, lift)
    points, _ = _points(kind, n, seed + 10_000)
    return _lift(kind, points, seed, dim, lift)


def build_dataset(kind: str, n: int, seed: int, dim: int, noise: float, missing: float,
                  lift: str = "tanh") -> dict[str, np.ndarray]:  # fmt: skip
    """The arrays of one dataset's ``.npz``: ``y`` (NaN where hidden), ``mask`` (True where observed), ``y_full``
    (every entry, the truth of the hidden ones), ``clean`` and ``coordinate``. As in the reference and Lalchand et
    al. 2022's missing-data experiments, the model is fitted to the observed entries and scored on the hidden ones
    of the same points."""
    if not 0 < missing < 1:
        raise ValueError(f"missing must be in (0, 1): the hidden entries are the ones scored, got {missing}")
    data = make_manifold(kind, n, seed, dim, noise, missing, lift)
    full = data.clean + noise * np.random.default_rng([seed, 2]).standard_normal(data.clean.shape)
    return {"y": data.y, "mask": data.mask, "y_full": full, "clean": data.clean, "coordinate": data.coordinate}


OIL_FILES = ("DataTrn.txt", "DataTrnLbls.txt")
OIL_SHAPE = (1000, 12)  # DataTrn: the training split's points and columns


def read_oil_archive(path, missing: float, seed: int) -> dict[str, np.ndarray]:
    """The oil-flow training split of the archive the reference loads (``DataTrn.txt``, 12 columns, standardised;
    the column ``mean`` and ``std`` are returned), its labels as class indices (the one-hot columns' argmax, also
    the colour of the latent plots), and ``missing`` of the entries hidden and scored as in :func:`build_dataset`
    (``clean`` is unknown: NaN)."""
    import io
    import tarfile

    if not 0 < missing < 1:
        raise ValueError(f"missing must be in (0, 1): the hidden entries are the ones scored, got {missing}")
    arrays = {}
    with tarfile.open(path) as tar:
        names = {m.name.split("/")[-1]: m for m in tar.getmembers() if m.isfile()}
        absent = [f for f in OIL_FILES if f not in names]
        if absent:
            raise ValueError(f"{path}: the oil-flow archive lacks {absent}")
        for name in OIL_FILES:
            arrays[name] = np.loadtxt(io.BytesIO(tar.extractfile(names[name]).read()), ndmin=2)
    y, labels = arrays["DataTrn.txt"], arrays["DataTrnLbls.txt"]
    if y.shape[1] != OIL_SHAPE[1] or labels.shape != (len(y), 3):
        raise ValueError(f"{path}: DataTrn has shape {y.shape} with labels {labels.shape}; expected (n, 12), (n, 3)")
    if not np.isfinite(y).all():
        raise ValueError(f"{path}: DataTrn has non-finite values")
    mean, std = y.mean(0), y.std(0)
    std = np.where(std > 0, std, 1.0)
    full = (y - mean) / std
    mask = _missing_mask(full.shape, missing, np.random.default_rng([seed, 2]))
    return {
        "y": np.where(mask, full, np.nan),
        "mask": mask,
        "y_full": full,
        "clean": np.full(full.shape, np.nan),
        "coordinate": labels.argmax(1).astype(float),
        "mean": mean,
        "std": std,
    }


def check_sizes(latent_dim: int, n_inducing: int, n_points: int) -> None:
    if latent_dim <= 0:
        raise ValueError(f"the latent dimension must be >= 1, got {latent_dim}")
    if n_inducing > n_points:
        raise ValueError(f"{n_inducing} inducing points for {n_points} data points: use at most as many as data points")


def check_observations(y: np.ndarray, mask: np.ndarray) -> None:
    if y.shape != mask.shape:
        raise ValueError(f"the missing mask {mask.shape} does not match the data {y.shape}")
    bad = np.argwhere(np.isnan(y) & mask)
    if len(bad):
        n, d = bad[0]
        raise ValueError(f"NaN outside the declared missing mask at {len(bad)} entries, first at row {n}, column {d}")
