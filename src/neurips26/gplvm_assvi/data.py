r"""Quick-scale data of paper 17: a 2-D manifold (scikit-learn's S-curve or swiss roll, 3-D points with a known 1-D
roll coordinate and a height) lifted into ``dim`` dimensions by a fixed random map ``y = tanh(A p / scale + b)``,
plus Gaussian noise, with a random share of entries declared missing (NaN, ``mask`` False). The clean lifted points
are kept, so that the distance of a reconstruction to the true manifold can be measured. The shape of the oil-flow
data the reference code loads (12 dimensions, low intrinsic dimension).

Bad inputs are refused with a message naming the problem: a latent dimension <= 0, more inducing points than
data points, NaN outside the declared missing mask.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = ["Manifold", "check_observations", "check_sizes", "make_manifold"]


@dataclass(frozen=True)
class Manifold:
    y: np.ndarray  # (n, dim) observed, NaN where missing
    mask: np.ndarray  # (n, dim) True where observed
    clean: np.ndarray  # (n, dim) the noiseless lifted points
    points: np.ndarray  # (n, 3) the 3-D manifold points
    coordinate: np.ndarray  # (n,) the roll coordinate (for colouring latent spaces)


def make_manifold(kind: str, n: int, seed: int, dim: int = 12, noise: float = 0.05, missing: float = 0.1) -> Manifold:
    from sklearn.datasets import make_s_curve, make_swiss_roll

    makers = {"s_curve": make_s_curve, "swiss_roll": make_swiss_roll}
    if kind not in makers:
        raise ValueError(f"unknown manifold {kind!r}; known: {sorted(makers)}")
    if n < 2 or dim < 3 or noise < 0 or not 0 <= missing < 1:
        raise ValueError(f"need n >= 2, dim >= 3, noise >= 0 and missing in [0, 1); got {n}, {dim}, {noise}, {missing}")
    points, coordinate = makers[kind](n_samples=n, noise=0.0, random_state=seed)
    points = (points - points.mean(0)) / points.std(0)
    lift = np.random.default_rng([seed, 1])  # the map depends on the seed only, not on n
    a, b = lift.standard_normal((dim, 3)) / np.sqrt(3), 0.1 * lift.standard_normal(dim)
    clean = np.tanh(points @ a.T + b)
    rng = np.random.default_rng([seed, 2])
    y = clean + noise * rng.standard_normal(clean.shape)
    mask = rng.random(clean.shape) >= missing
    empty = ~mask.any(1)
    mask[empty, rng.integers(0, dim, int(empty.sum()))] = True  # every point keeps one observed entry
    return Manifold(np.where(mask, y, np.nan), mask, clean, points, coordinate)


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
