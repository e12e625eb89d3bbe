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
    dynamics (M, E, N_train); what they were trained on: per member and training item the entropy of its target and
    whether the target's largest probability is on the original label (M, N_train), and the synthetic labels'
    settings per member (epsilon, temperature: NaN where the condition has none) and the human soft labels' mean
    training entropy they were matched to."""

    members: list[Member]
    test_probs: np.ndarray
    gold_prob: np.ndarray
    correct: np.ndarray
    target_entropy: np.ndarray | None = None
    target_on_original: np.ndarray | None = None
    epsilon: np.ndarray | None = None
    temperature: np.ndarray | None = None
    human_entropy: float = float("nan")

    @property
    def trained(self) -> dict:
        return {k: getattr(self, k) for k in ("target_entropy", "target_on_original", "epsilon", "temperature")
                if getattr(self, k) is not None}  # fmt: skip


def write_runs(path, runs: Runs) -> None:
    save_npz(
        path,
        conditions=np.array([m.condition for m in runs.members]),
        seeds=np.array([m.seed for m in runs.members], np.int64),
        test_probs=runs.test_probs.astype(np.float32),
        gold_prob=runs.gold_prob.astype(np.float32),
        correct=runs.correct.astype(bool),
        human_entropy=np.float64(runs.human_entropy),
        **runs.trained,
    )


def read_runs(path) -> Runs:
    a = load_npz(path)
    members = [Member(str(c), int(s)) for c, s in zip(a["conditions"], a["seeds"])]
    optional = {k: a[k] for k in ("target_entropy", "target_on_original", "epsilon", "temperature") if k in a}
    return Runs(members, a["test_probs"].astype(np.float64), a["gold_prob"].astype(np.float64), a["correct"],
                human_entropy=float(a["human_entropy"]) if "human_entropy" in a else float("nan"),
                **optional)  # fmt: skip
