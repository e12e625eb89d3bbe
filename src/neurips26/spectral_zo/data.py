"""The offline data of the spectral zeroth-order study: a synthetic teacher-student task whose input covariance has
eigenvalues i^(-alpha) (the dial on activation anisotropy that the SZO-kappa family, our reconstruction, and AGZO,
arXiv 2601.17261, exploit), and scikit-learn's 8x8 digits in [0, 1] with a seeded stratified split."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

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
