"""Paper 15's result files: the item set (data.npz) and a training job's runs (runs.npz: members, test predictions,
training dynamics), written atomically, read back as the library's objects."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from neurips26.common.io import load_npz, save_npz

from .itemset import ItemSet
from .members import Member

__all__ = ["Runs", "read_items", "read_runs", "write_items", "write_runs"]


def write_items(path, items: ItemSet) -> None:
    save_npz(path, **items.arrays())


def read_items(path) -> ItemSet:
    return ItemSet.from_arrays(load_npz(path))


@dataclass
class Runs:
    """The members of one training job (condition-major), their test predictions (M, N_test, K) and training
    dynamics (M, E, N_train)."""

    members: list[Member]
    test_probs: np.ndarray
    gold_prob: np.ndarray
    correct: np.ndarray


def write_runs(path, runs: Runs) -> None:
    save_npz(
        path,
        conditions=np.array([m.condition for m in runs.members]),
        seeds=np.array([m.seed for m in runs.members], np.int64),
        test_probs=runs.test_probs.astype(np.float32),
        gold_prob=runs.gold_prob.astype(np.float32),
        correct=runs.correct.astype(bool),
    )


def read_runs(path) -> Runs:
    a = load_npz(path)
    members = [Member(str(c), int(s)) for c, s in zip(a["conditions"], a["seeds"])]
    return Runs(members, a["test_probs"].astype(np.float64), a["gold_prob"].astype(np.float64), a["correct"])
