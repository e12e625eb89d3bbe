"""An ambiguous digit set made by morphing pairs of digits of different classes: the stand-in for the paper's
"synthetic variant" of MNIST (arXiv 2605.18648; its generator is not public), whose ground truth of ambiguity is
known by construction.

The morph is a pixel-wise convex combination of two digits after centring, x = w * x_a + (1 - w) * x_b (the input
mixing of mixup, Zhang et al. 2018), with the morph weight w ~ U(W_RANGE) = U(0.4, 0.6) of class a. Both digits are
first translated (whole pixels, zero fill) so that their centre of mass lies at the centre of the 28 x 28 field, as
MNIST itself centres its digits (LeCun et al. 1998), so that the two strokes overlap instead of sitting side by side.
The generator's label is the class with the larger weight: a where w >= 0.5, b otherwise.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from neurips26.softlabel_audit.digits import N_CLASSES, Digits

W_RANGE = (0.4, 0.6)  # weight of class a, symmetric about 0.5 (either source can be the generator's label); narrow
# enough that the simulated human mode departs from the generator's label for about 30% of morphs (annotators.py),
# near the paper's share of about 33% (arXiv 2605.18648 per a secondary source): chosen after measuring that share


@dataclass(frozen=True)
class MorphSet:
    """Morphed images float32 (M, 28, 28) in [0, 1]; the two source classes and items (indices into the digits they
    were made from); the weight w of class a."""

    images: np.ndarray
    class_a: np.ndarray
    class_b: np.ndarray
    w: np.ndarray
    source_a: np.ndarray
    source_b: np.ndarray

    def __len__(self) -> int:
        return len(self.w)

    @property
    def labels(self) -> np.ndarray:
        """The generator's label: the class with weight >= 0.5."""
        return np.where(self.w >= 0.5, self.class_a, self.class_b)


def centre_of_mass(images: np.ndarray) -> np.ndarray:
    """(N, 2) intensity-weighted mean (row, column) of each image; the field's centre for a blank image."""
    images = np.asarray(images, dtype=np.float64)
    side_r, side_c = images.shape[1:]
    mass = images.sum(axis=(1, 2))
    rows = images.sum(axis=2) @ np.arange(side_r)
    cols = images.sum(axis=1) @ np.arange(side_c)
    centre = np.array([(side_r - 1) / 2, (side_c - 1) / 2])
    safe = np.where(mass > 0, mass, 1.0)
    return np.where((mass > 0)[:, None], np.stack([rows / safe, cols / safe], axis=1), centre)


def shift_images(images: np.ndarray, shifts: np.ndarray) -> np.ndarray:
    """Each image translated by its integer (rows, columns) shift, pixels moved off the field dropped, zeros in."""
    images = np.asarray(images)
    n, side_r, side_c = images.shape
    shifts = np.asarray(shifts, dtype=np.int64)
    src_r = np.arange(side_r)[None, :] - shifts[:, :1]  # output row r reads input row r - shift
    src_c = np.arange(side_c)[None, :] - shifts[:, 1:]
    ok = ((src_r >= 0) & (src_r < side_r))[:, :, None] & ((src_c >= 0) & (src_c < side_c))[:, None, :]
    out = images[
        np.arange(n)[:, None, None],
        np.clip(src_r, 0, side_r - 1)[:, :, None],
        np.clip(src_c, 0, side_c - 1)[:, None, :],
    ]
    return np.where(ok, out, 0).astype(images.dtype)


def centre_images(images: np.ndarray) -> np.ndarray:
    """Images translated by whole pixels so that each centre of mass lies within half a pixel of the field's centre."""
    side = np.array(images.shape[1:])
    return shift_images(images, np.rint((side - 1) / 2 - centre_of_mass(images)))


def draw_pairs(labels: np.ndarray, n: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """`n` seeded pairs of item indices (i, j) with different labels: i uniform over the items, j's class uniform
    over the other classes present, j uniform within that class."""
    labels = np.asarray(labels)
    classes, counts = np.unique(labels, return_counts=True)
    if len(classes) < 2:
        raise ValueError(f"morphing needs digits of at least two classes, got classes {classes.tolist()}")
    if n < 1:
        raise ValueError(f"the number of morphs must be >= 1, got {n}")
    rng = np.random.default_rng(seed)
    i = rng.integers(0, len(labels), n)
    pos_a = np.searchsorted(classes, labels[i])
    pos_b = rng.integers(0, len(classes) - 1, n)
    pos_b = pos_b + (pos_b >= pos_a)  # skip the class of i
    by_class = np.argsort(labels, kind="stable")
    starts = np.concatenate([[0], np.cumsum(counts)[:-1]])
    j = by_class[starts[pos_b] + (rng.random(n) * counts[pos_b]).astype(np.int64)]
    return i, j


def morph_pairs(digits: Digits, n: int, seed: int, w_range: tuple[float, float] = W_RANGE) -> MorphSet:
    """`n` morphs of pairs of `digits` of different classes (module docstring), seeded; draw them from one split's
    digits so that no source digit crosses splits."""
    low, high = w_range
    if not 0.0 <= low < high <= 1.0:
        raise ValueError(f"w_range must satisfy 0 <= low < high <= 1, got {w_range}")
    if digits.labels.max(initial=0) >= N_CLASSES:
        raise ValueError(f"digit labels must lie in 0..{N_CLASSES - 1}")
    i, j = draw_pairs(digits.labels, n, seed)
    w = np.random.default_rng([seed, 1]).uniform(low, high, n)
    centred = centre_images(digits.images)
    images = w[:, None, None] * centred[i] + (1.0 - w[:, None, None]) * centred[j]
    return MorphSet(
        images=np.clip(images, 0.0, 1.0).astype(np.float32),
        class_a=digits.labels[i],
        class_b=digits.labels[j],
        w=w,
        source_a=i,
        source_b=j,
    )
