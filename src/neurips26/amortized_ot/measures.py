"""Batches of discrete measure pairs and the checks every solver runs on them."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

WEIGHT_TOLERANCE = 1e-6


class MeasureError(ValueError):
    """Measures that no OT method here can take."""


@dataclass(frozen=True)
class PairBatch:
    """P pairs (mu_p, nu_p) with equal atom counts within the batch.

    x: (P, n, d) source supports, a: (P, n) source weights,
    y: (P, m, d) target supports, b: (P, m) target weights.
    """

    x: np.ndarray
    a: np.ndarray
    y: np.ndarray
    b: np.ndarray

    def __post_init__(self) -> None:
        check_pairs(self.x, self.a, self.y, self.b)

    @property
    def n_pairs(self) -> int:
        return self.x.shape[0]

    @property
    def dim(self) -> int:
        return self.x.shape[2]

    def subset(self, index: np.ndarray | slice) -> PairBatch:
        return PairBatch(self.x[index], self.a[index], self.y[index], self.b[index])

    def as_dict(self) -> dict[str, np.ndarray]:
        return {"x": self.x, "a": self.a, "y": self.y, "b": self.b}


def check_weights(w: np.ndarray, name: str) -> None:
    if not np.all(np.isfinite(w)):
        raise MeasureError(f"{name}: weights contain NaN or inf")
    if np.any(w < 0):
        raise MeasureError(f"{name}: weights must be non-negative (min {w.min():.3g})")
    sums = w.sum(axis=-1)
    worst = np.abs(sums - 1.0).max()
    if worst > WEIGHT_TOLERANCE:
        raise MeasureError(
            f"{name}: weights must sum to 1 within {WEIGHT_TOLERANCE:g} "
            f"(worst sum {sums.flat[np.abs(sums - 1).argmax()]:.6g})"
        )


def check_support(z: np.ndarray, name: str) -> None:
    if z.ndim != 3:
        raise MeasureError(f"{name}: support must have shape (pairs, atoms, dim), got {z.shape}")
    if not np.all(np.isfinite(z)):
        raise MeasureError(f"{name}: support coordinates contain NaN or inf")


def check_pairs(x: np.ndarray, a: np.ndarray, y: np.ndarray, b: np.ndarray) -> None:
    check_support(x, "source support x")
    check_support(y, "target support y")
    if x.shape[2] != y.shape[2]:
        raise MeasureError(f"dimension mismatch: source atoms live in R^{x.shape[2]}, target atoms in R^{y.shape[2]}")
    if a.shape != x.shape[:2]:
        raise MeasureError(f"source weights shape {a.shape} does not match support {x.shape[:2]}")
    if b.shape != y.shape[:2]:
        raise MeasureError(f"target weights shape {b.shape} does not match support {y.shape[:2]}")
    check_weights(a, "source weights a")
    check_weights(b, "target weights b")


def check_positive(value: float, name: str) -> None:
    if not np.isfinite(value) or value <= 0:
        raise MeasureError(f"{name} must be > 0, got {value}")


def check_on_sphere(z: np.ndarray, name: str, tol: float = 1e-6) -> None:
    norms = np.linalg.norm(z, axis=-1)
    if np.abs(norms - 1).max() > tol:
        raise MeasureError(
            f"{name}: points must be unit-norm on the sphere (max |norm-1| {np.abs(norms - 1).max():.3g})"
        )
