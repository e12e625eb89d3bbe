"""Paper 15's experiment: a config block -> the label conditions' targets, the teacher's logits and the checks of the
config (arXiv 2605.18648, Pavlovic, Paun and Poesio 2026). The item sets are itemset.py's (re-exported here)."""

from __future__ import annotations

import numpy as np

from .itemset import CLEAN, KIND_NAMES, MORPH, REAL, SOURCES, ItemSet, items_from_digits, items_from_votes
from .labels import (
    LABEL_CONDITIONS,
    NEEDS_TEACHER,
    LabelInputs,
    entropy,
    label_targets,
    matched_smoothing_epsilon,
    matched_temperature,
    soft_from_votes,
)
from .members import members_grid
from .sizes import MODELS
from .splits import split_sizes

__all__ = [
    "CLEAN",
    "KIND_NAMES",
    "MORPH",
    "REAL",
    "SOURCES",
    "ItemSet",
    "check_config",
    "items_from_digits",
    "items_from_votes",
    "label_inputs",
    "matched_settings",
    "member_targets",
    "needs_teacher",
    "targets",
    "teacher_logits",
    "teacher_seeds",
]

MATCHED = "matched"  # labels.epsilon / labels.temperature: matched to the human soft labels' mean training entropy


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
    clash = sorted(set(teacher_seeds(cfg["teacher"], cfg["seeds"])) & set(cfg["seeds"]))
    if clash:
        raise ValueError(
            f"teacher.seed {cfg['teacher']['seed']} makes teacher seeds {clash} that are also scored seeds: choose "
            f"an offset outside {cfg['seeds']}"
        )
    for name, spec in cfg["datasets"].items():
        if spec["source"] not in SOURCES:
            raise ValueError(f"datasets.{name}.source: unknown {spec['source']!r}; known: {list(SOURCES)}")
        key = "items" if spec["source"] == "cifar10h" else "clean"
        if min(split_sizes(spec[key], spec["fractions"])) < 1:
            raise ValueError(f"datasets.{name}: {spec[key]} {key} leave a split empty")
    if cfg["comparisons"]["primary"] not in cfg["datasets"]:
        raise ValueError(f"comparisons.primary {cfg['comparisons']['primary']!r} is not among datasets")
    used = {v for k, v in cfg["comparisons"].items() if k != "primary"}
    missing = sorted(used - set(cfg["conditions"]))
    if missing:
        raise ValueError(f"comparisons name conditions that are not run: {missing} (conditions: {cfg['conditions']})")


def label_inputs(items: ItemSet, index: np.ndarray, teacher_logits=None, epsilon: float = 0.1,
                 temperature: float = 2.0, seed: int = 0) -> LabelInputs:  # fmt: skip
    """The label inputs of the items `index` (the training split), with the teacher's logits on them where given."""
    return LabelInputs(items.original[index], items.counts[index], teacher_logits, epsilon, temperature, seed)


def teacher_seeds(teacher: dict, seeds) -> list[int]:
    """One teacher per scored seed: seed teacher.seed + s for scored seed s."""
    return [int(teacher["seed"]) + int(s) for s in seeds]


def matched_settings(labels: dict, human_entropy: float, logits=None) -> tuple[float, float]:
    """(epsilon, temperature) of the synthetic soft labels: the config's numbers, or where they are "matched" the
    epsilon and the temperature (on `logits`, one teacher's logits on the training items) whose labels have mean
    entropy `human_entropy` (the human soft labels' mean entropy on the training items). The temperature is NaN
    where there is no teacher."""
    eps = matched_smoothing_epsilon(human_entropy) if labels["epsilon"] == MATCHED else float(labels["epsilon"])
    if logits is None:
        return eps, float("nan")
    t = labels["temperature"]
    return eps, matched_temperature(logits, human_entropy) if t == MATCHED else float(t)


def member_targets(conditions, seeds, items: ItemSet, index: np.ndarray, labels: dict, logits=None):
    """The targets of every member (members_grid order, condition-major), float32 (M, N, K), and per seed the
    (epsilon, temperature) used. `logits` (S, N, K): seed s's teacher's logits on the items `index`, where a
    condition learns from a teacher. Per seed: its own teacher and its own shuffle (`human_soft_shuffled`)."""
    human_entropy = float(entropy(soft_from_votes(items.counts[index])).mean())
    settings = [matched_settings(labels, human_entropy, None if logits is None else logits[i])
                for i in range(len(seeds))]  # fmt: skip
    per_seed = {}
    for i, s in enumerate(seeds):
        inputs = label_inputs(items, index, None if logits is None else logits[i], *settings[i], seed=int(s))
        per_seed[int(s)] = inputs
    q = [label_targets(m.condition, per_seed[m.seed]) for m in members_grid(conditions, seeds)]
    return np.stack(q).astype(np.float32), settings, human_entropy


def teacher_logits(probs: np.ndarray) -> np.ndarray:
    """A trained teacher's logits, log of its clipped probabilities (N, K) (a softmax is shift-invariant, so these
    reproduce its distribution at temperature 1)."""
    return np.log(np.clip(np.asarray(probs, dtype=np.float64), 1e-12, 1.0))
