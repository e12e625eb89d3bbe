"""Paper 15's rehearsal: what it cuts from the paper block, and the fixture files of its sources.

The rehearsal keeps the classifier (resnet_small), the batch, every label condition and every seed (they train as one
batched job: the members are the job's shape). It cuts the budgets: 2 epochs, and the MNIST item set to 120 digits and
60 morphs. MNIST's IDX files are paper 04's fixtures (amortized_ot.rehearsal.mnist_files, the same bytes).

Not yet rehearsed: the CIFAR-10H dataset (its raw vote zip and probabilities need fixtures that agree with the CIFAR-10
fixture archive's images and the pinned probabilities' hash), so the sweep keeps the MNIST dataset only.
"""

from __future__ import annotations

from neurips26.amortized_ot.rehearsal import mnist_files
from neurips26.common.rehearsal import Plan

__all__ = ["PLAN", "fixtures"]


def _items(cfg: dict) -> int:
    return sum(d.get("clean", 10_000) + d.get("morphs", 0) for d in cfg["datasets"].values())


def _members(cfg: dict) -> int:
    return len(cfg["conditions"]) * len(cfg["seeds"])


PLAN = Plan(
    budgets={
        "train.epochs": 2,
        "datasets.mnist_ambiguous.clean": 120,
        "datasets.mnist_ambiguous.morphs": 60,
    },
    sweeps={"datasets": lambda datasets: {"mnist_ambiguous": datasets["mnist_ambiguous"]}},
    work={
        # item-epochs of every member and of the teacher (one member more)
        "softlabel_audit_train": lambda cfg, wc: cfg["train"]["epochs"] * _items(cfg) * (_members(cfg) + 1),
        "softlabel_audit_data": lambda cfg, wc: _items(cfg),
        "softlabel_audit_evaluate": lambda cfg, wc: _items(cfg) * _members(cfg),
    },
    note="2 epochs on 120 MNIST digits and 60 morphs; every condition, seed and the classifier are the paper block's",
)


def fixtures(items: int = 1) -> dict[str, bytes]:
    """Registry path -> bytes: MNIST's IDX files (the same bytes as the other papers that read MNIST)."""
    return {f"mnist/{name}": payload for name, payload in mnist_files(items).items()}
