"""Paper 15's rehearsal: what it cuts from the paper block, and the fixture files of its sources.

The rehearsal keeps the classifier (resnet_small), every label condition and every seed (they train as one batched
job: the members are the job's shape) and both datasets. It cuts the budgets: 2 epochs, the MNIST item set to 120
digits and 60 morphs, CIFAR-10H to the fixture's 64 test images, and the batch to 16 (the micro-batch: the rehearsal
runs it at 16 and 32, and the plan scales the measured tensor memory to the paper's 128). MNIST's IDX files are
paper 04's fixtures (amortized_ot.rehearsal.mnist_files) and CIFAR-10's python archive paper 06's
(pred_loss_space.rehearsal.cifar10_archive), the same bytes; CIFAR-10H's raw vote zip and released probabilities are
written here in the released formats (cifar10h.py's module docstring), on that archive's test images and labels.
"""

from __future__ import annotations

import gzip
import io
import pickle
import tarfile
import zipfile

import numpy as np

from neurips26.amortized_ot.rehearsal import mnist_files
from neurips26.common.rehearsal import Plan
from neurips26.pred_loss_space.rehearsal import CIFAR_BASE, cifar10_archive

from .cifar10h import ATTENTION_INDEX, CLASS_NAMES, RAW_MEMBER

__all__ = ["DATA_GROWTH", "PLAN", "cifar10h_files", "fixtures"]

FIXTURE_ANNOTATORS = 10  # each labels every fixture image once, plus ATTENTION_CHECKS attention checks
ATTENTION_CHECKS = 2


def _items(cfg: dict, wc) -> int:
    spec = cfg["datasets"][wc["dataset"]]
    return spec["items"] if spec["source"] == "cifar10h" else spec["clean"] + spec["morphs"]


def _members(cfg: dict) -> int:
    return len(cfg["conditions"]) * len(cfg["seeds"])


PLAN = Plan(
    budgets={
        "train.epochs": 2,
        "datasets.mnist_ambiguous.clean": 120,
        "datasets.mnist_ambiguous.morphs": 60,
        "datasets.cifar10h.items": CIFAR_BASE,
        "train.batch": 16,
    },
    micro_batch=("train.batch",),
    work={
        # item-epochs of every member and of the teachers (one per seed), per dataset
        "softlabel_audit_train": lambda cfg, wc: (
            cfg["train"]["epochs"] * _items(cfg, wc) * (_members(cfg) + len(cfg["seeds"]))
        ),
        "softlabel_audit_data": lambda cfg, wc: _items(cfg, wc),
        "softlabel_audit_evaluate": lambda cfg, wc: _items(cfg, wc) * _members(cfg),
        # the report reads the cut budgets as params (what was run) only: its tables are per condition, not per item
        "softlabel_audit_report": lambda cfg, wc: 1,
    },
    note=(
        "2 epochs on 120 MNIST digits and 60 morphs and on 64 CIFAR-10 test images with CIFAR-10H-format votes; every"
        " condition, seed and the classifier are the paper block's; batch 16 (and 32)"
    ),
)

DATA_GROWTH: dict[str, tuple[int, int]] = {}  # the items read are a budget (datasets.*), counted by PLAN.work


def _test_labels(archive: bytes) -> np.ndarray:
    with tarfile.open(fileobj=io.BytesIO(gzip.decompress(archive))) as tar:
        member = next(m for m in tar.getmembers() if m.name.endswith("/test_batch"))
        batch = pickle.load(tar.extractfile(member), encoding="bytes")
    return np.asarray(batch[b"labels"], dtype=np.int64)


def cifar10h_files(labels: np.ndarray, seed: int = 15) -> dict[str, bytes]:
    """CIFAR-10H's cifar10h-raw.zip (member cifar10h-raw.csv, one row per trial, attention checks at index -99999)
    and cifar10h-probs.npy (float64 (n, 10) vote proportions) for test images of CIFAR-10 labels `labels`: each of
    FIXTURE_ANNOTATORS annotators labels every image, choosing the true class with a per-image probability in
    [0.3, 1] and otherwise the image's confusable class (one per image) or, one time in four, any other class, so
    some images' human mode departs from the label, as on CIFAR-10H's hardest images."""
    import pandas as pd

    rng = np.random.default_rng(seed)
    n = len(labels)
    agree = rng.uniform(0.3, 1.0, n)
    confusable = rng.integers(1, 10, n)  # the other class as an offset from the true one
    rows = []
    for annotator in range(FIXTURE_ANNOTATORS):
        order = list(rng.permutation(n)) + [ATTENTION_INDEX] * ATTENTION_CHECKS
        for trial, image in enumerate(order):
            if image == ATTENTION_INDEX:
                true = chosen = int(rng.integers(0, 10))
            else:
                true = int(labels[image])
                offset = confusable[image] if rng.random() < 0.75 else rng.integers(1, 10)
                chosen = true if rng.random() < agree[image] else int((true + offset) % 10)
            rows.append({"annotator_id": annotator, "trial_index": trial, "chosen_label": chosen, "true_label": true,
                         "cifar10_test_test_idx": int(image), "is_attn_check": int(image == ATTENTION_INDEX),
                         "time_elapsed": 1500 * (trial + 1), "reaction_time": round(float(rng.uniform(400, 2500)), 1),
                         "true_category": CLASS_NAMES[true], "chosen_category": CLASS_NAMES[chosen],
                         "image_filename": f"{CLASS_NAMES[true]}_{int(image)}.png"})  # fmt: skip
    trials = pd.DataFrame(rows)
    kept = trials[trials["is_attn_check"] == 0]
    counts = np.zeros((n, 10), np.int64)
    np.add.at(counts, (kept["cifar10_test_test_idx"].to_numpy(), kept["chosen_label"].to_numpy()), 1)
    raw = io.BytesIO()
    with zipfile.ZipFile(raw, "w", zipfile.ZIP_DEFLATED) as archive:
        info = zipfile.ZipInfo(RAW_MEMBER, date_time=(1980, 1, 1, 0, 0, 0))  # a fixed date: the same bytes each build
        info.compress_type = zipfile.ZIP_DEFLATED
        archive.writestr(info, trials.to_csv(index=False))
    probs = io.BytesIO()
    np.save(probs, counts / counts.sum(axis=1, keepdims=True))
    return {"cifar10h/cifar10h-raw.zip": raw.getvalue(), "cifar10h/cifar10h-probs.npy": probs.getvalue()}


def fixtures(items: int = 1) -> dict[str, bytes]:
    """Registry path -> bytes: MNIST's IDX files and CIFAR-10's archive (the same bytes as the other papers that read
    them), and CIFAR-10H's two files on that archive's test images."""
    archive = cifar10_archive(items)
    return {
        **{f"mnist/{name}": payload for name, payload in mnist_files(items).items()},
        "cifar10/cifar-10-python.tar.gz": archive,
        **cifar10h_files(_test_labels(archive)),
    }
