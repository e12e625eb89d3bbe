"""Seeded train/val/test splits by item, the check that no item sits in two splits, and the difficult items on which
calibration is measured (arXiv 2605.18648: "improves model calibration on difficult samples")."""

from __future__ import annotations

import numpy as np

SPLITS = ("train", "val", "test")
# The paper's annotated subsets (train, val, test). From a secondary source citing the paper, not checked against the
# paper itself: use them for proportions and paper-scale sizes with that caveat.
PAPER_SUBSET_SIZES = {"mnist": (2131, 457, 457), "ambiguous": (1738, 373, 373)}
DIFFICULT_QUANTILE = 2 / 3  # difficult items: the top third of the test items by human-label entropy (rank)


def paper_fractions(subset: str = "mnist") -> tuple[float, float, float]:
    """The paper's train/val/test shares of an annotated subset (about 0.70/0.15/0.15; secondary source)."""
    if subset not in PAPER_SUBSET_SIZES:
        raise ValueError(f"unknown subset {subset!r}; allowed: {sorted(PAPER_SUBSET_SIZES)}")
    sizes = np.array(PAPER_SUBSET_SIZES[subset], dtype=float)
    return tuple((sizes / sizes.sum()).tolist())


def split_sizes(n: int, fractions=(0.7, 0.15, 0.15)) -> tuple[int, int, int]:
    """Sizes of the splits of `n` items: val and test rounded from their fractions, train the rest."""
    fractions = np.asarray(fractions, dtype=float)
    if fractions.shape != (3,) or (fractions <= 0).any() or abs(fractions.sum() - 1) > 1e-9:
        raise ValueError(f"fractions must be three positive shares summing to 1, got {fractions.tolist()}")
    val, test = (int(round(n * f)) for f in fractions[1:])
    if n - val - test < 1 or min(val, test) < 1:
        raise ValueError(f"{n} items are too few for splits with fractions {fractions.tolist()}")
    return n - val - test, val, test


def split_items(labels: np.ndarray, sizes: tuple[int, int, int], seed: int) -> dict[str, np.ndarray]:
    """Disjoint train/val/test index arrays (sorted) of the given sizes, seeded and stratified by `labels`: items are
    ordered so that every prefix holds each class in proportion (rank within a random class order over class size),
    then cut in turn."""
    labels = np.asarray(labels)
    n = len(labels)
    if len(sizes) != 3 or min(sizes) < 0 or sum(sizes) > n:
        raise ValueError(f"split sizes {tuple(sizes)} must be three non-negative sizes adding up to at most {n}")
    rng = np.random.default_rng(seed)
    _, class_of, counts = np.unique(labels, return_inverse=True, return_counts=True)
    keys = rng.random(n)
    order = np.lexsort((keys, class_of))
    rank = np.empty(n)
    rank[order] = np.arange(n) - np.repeat(np.cumsum(counts) - counts, counts)
    spread = np.argsort((rank + rng.random(n)) / counts[class_of], kind="stable")
    cuts = np.cumsum(sizes)
    parts = np.split(spread[: cuts[-1]], cuts[:-1])
    splits = {name: np.sort(part) for name, part in zip(SPLITS, parts)}
    check_disjoint(splits)
    return splits


def check_disjoint(splits: dict[str, np.ndarray]) -> None:
    """ValueError naming the first item (smallest index) that lies in two splits, and the two splits."""
    names = list(splits)
    for i, first in enumerate(names):
        for second in names[i + 1 :]:
            both = np.intersect1d(splits[first], splits[second])
            if both.size:
                raise ValueError(f"item {both[0]} is in two splits: {first} and {second}")
    for name, items in splits.items():
        items = np.asarray(items)
        values, counts = np.unique(items, return_counts=True)
        if (counts > 1).any():
            raise ValueError(f"item {values[counts > 1][0]} appears twice in split {name}")


def difficult_items(human_entropy: np.ndarray, quantile: float = DIFFICULT_QUANTILE) -> np.ndarray:
    """Boolean mask of the difficult items: the n - round(quantile * n) items of highest human-label entropy (the top
    third by default), by rank, so the count is fixed; ties in entropy are broken by item order (the lower index is
    taken first). With the simulated panel's true distribution (ItemSet.reference) ties do not arise; with observed
    votes they can, and the tie-break decides which of the tied items count."""
    human_entropy = np.asarray(human_entropy, dtype=np.float64)
    if not 0.0 <= quantile < 1.0:
        raise ValueError(f"quantile must lie in [0, 1), got {quantile}")
    if human_entropy.size == 0 or not np.isfinite(human_entropy).all():
        raise ValueError("human entropies must be a non-empty array of finite numbers")
    n = len(human_entropy)
    top = np.lexsort((np.arange(n), -human_entropy))[: n - int(round(quantile * n))]
    mask = np.zeros(n, bool)
    mask[top] = True
    return mask
