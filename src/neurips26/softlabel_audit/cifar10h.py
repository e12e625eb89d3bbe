"""Real human labels at paper scale: CIFAR-10H's raw per-annotator votes (Peterson et al. 2019, jcpeterson/cifar-10h)
as vote counts over the 10,000 CIFAR-10 test images, and those images (Krizhevsky 2009) from the python archive.

The raw file is data/cifar10h-raw.zip of the repository, holding cifar10h-raw.csv with one row per trial. The reader
relies on these columns (the repository's README describes them):
- `annotator_id`: the annotator (an integer from 0);
- `is_attn_check`: 1 for an attention-check trial (dropped), 0 otherwise;
- `chosen_label`: the class chosen, 0..9 in CIFAR-10's order;
- `true_label`: CIFAR-10's label of the image (checked to be one per image);
- the image's index in the CIFAR-10 test set: `cifar10_test_test_idx` in the released file, `cifar10_test_set_idx`
  in the README (either is accepted); attention checks carry -99999 there.
Other columns (trial_index, categories, image_filename, subcategory, reaction_time, time_elapsed) are not read.
"""

from __future__ import annotations

import io
import pickle
import tarfile
import zipfile
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from neurips26.softlabel_audit.digits import N_CLASSES

N_TEST = 10_000
RAW_MEMBER = "cifar10h-raw.csv"
INDEX_COLUMNS = ("cifar10_test_test_idx", "cifar10_test_set_idx")  # as released, as documented
REQUIRED_COLUMNS = ("annotator_id", "is_attn_check", "chosen_label", "true_label")
ATTENTION_INDEX = -99999
CLASS_NAMES = ("airplane", "automobile", "bird", "cat", "deer", "dog", "frog", "horse", "ship", "truck")


@dataclass(frozen=True)
class HumanVotes:
    """Vote counts int64 (n_items, 10), each image's CIFAR-10 label (n_items,), and the annotations behind them:
    image index, annotator id and chosen class per kept trial (each (M,))."""

    counts: np.ndarray
    true_labels: np.ndarray
    item: np.ndarray
    annotator: np.ndarray
    label: np.ndarray

    @property
    def probs(self) -> np.ndarray:
        """The vote proportions (cifar10h-probs.npy holds the same)."""
        return self.counts / self.counts.sum(axis=1, keepdims=True)


def read_raw_table(path: str | Path):
    """The raw trials as a DataFrame, from cifar10h-raw.zip (member cifar10h-raw.csv) or the CSV itself."""
    import pandas as pd

    path = Path(path)
    if zipfile.is_zipfile(path):
        with zipfile.ZipFile(path) as archive:
            names = [n for n in archive.namelist() if n.rsplit("/", 1)[-1] == RAW_MEMBER]
            if not names:
                raise ValueError(f"{path}: no {RAW_MEMBER} in the archive (members: {archive.namelist()[:5]})")
            with archive.open(names[0]) as handle:
                return pd.read_csv(handle)
    return pd.read_csv(path)


def votes_from_raw(frame, n_items: int = N_TEST, source: str = "CIFAR-10H raw table") -> HumanVotes:
    """Vote counts per test image from the raw trials (module docstring), attention checks dropped; ValueError
    naming missing columns, the first bad row, or the first image without a vote."""
    index_column = next((c for c in INDEX_COLUMNS if c in frame.columns), None)
    missing = [c for c in REQUIRED_COLUMNS if c not in frame.columns] + ([] if index_column else [INDEX_COLUMNS[0]])
    if missing:
        raise ValueError(
            f"{source}: missing columns {missing} (the index column may also be called {INDEX_COLUMNS[1]}); "
            f"found {list(frame.columns)}"
        )
    columns = [index_column, *REQUIRED_COLUMNS]
    if frame[columns].isna().any(axis=None):
        row = int(np.flatnonzero(frame[columns].isna().any(axis=1).to_numpy())[0])
        raise ValueError(f"{source}: empty value in row {row}")
    kept = frame[(frame["is_attn_check"] == 0) & (frame[index_column] != ATTENTION_INDEX)]
    item = kept[index_column].to_numpy(dtype=np.int64)
    label = kept["chosen_label"].to_numpy(dtype=np.int64)
    truth = kept["true_label"].to_numpy(dtype=np.int64)
    rows = kept.index.to_numpy()
    for name, values, high in (("image index", item, n_items), ("chosen_label", label, N_CLASSES)):
        bad = (values < 0) | (values >= high)
        if bad.any():
            i = int(np.flatnonzero(bad)[0])
            raise ValueError(f"{source}: {name} {values[i]} outside 0..{high - 1} in row {rows[i]}")
    counts = np.bincount(item * N_CLASSES + label, minlength=n_items * N_CLASSES).reshape(n_items, N_CLASSES)
    empty = counts.sum(axis=1) == 0
    if empty.any():
        raise ValueError(f"{source}: zero annotators for image {int(np.flatnonzero(empty)[0])}")
    true_labels = np.full(n_items, -1, dtype=np.int64)
    true_labels[item] = truth
    clash = truth != true_labels[item]
    if clash.any():
        i = int(np.flatnonzero(clash)[0])
        raise ValueError(f"{source}: image {item[i]} has two true labels (row {rows[i]})")
    annotator = kept["annotator_id"].to_numpy(dtype=np.int64)
    return HumanVotes(counts.astype(np.int64), true_labels, item, annotator, label)


def read_cifar10h(path: str | Path, n_items: int = N_TEST) -> HumanVotes:
    """CIFAR-10H's vote counts from cifar10h-raw.zip (or the CSV)."""
    return votes_from_raw(read_raw_table(path), n_items=n_items, source=str(path))


def check_against_probs(votes: HumanVotes, probs: np.ndarray, atol: float = 1e-6) -> None:
    """ValueError naming the first image where the released probabilities (cifar10h-probs.npy) differ from the
    vote proportions by more than `atol`."""
    probs = np.asarray(probs, dtype=np.float64)
    if probs.shape != votes.counts.shape:
        raise ValueError(f"probabilities of shape {probs.shape}, vote counts of shape {votes.counts.shape}")
    off = np.abs(probs - votes.probs).max(axis=1) > atol
    if off.any():
        i = int(np.flatnonzero(off)[0])
        raise ValueError(f"the released probabilities differ from the vote proportions first at image {i}")


def check_true_labels(votes: HumanVotes, cifar_labels: np.ndarray) -> None:
    """ValueError naming the first image whose CIFAR-10H true label is not CIFAR-10's test label."""
    cifar_labels = np.asarray(cifar_labels)
    if cifar_labels.shape != votes.true_labels.shape:
        raise ValueError(f"{len(cifar_labels)} CIFAR-10 labels for {len(votes.true_labels)} CIFAR-10H images")
    off = votes.true_labels != cifar_labels
    if off.any():
        i = int(np.flatnonzero(off)[0])
        raise ValueError(f"image {i}: CIFAR-10H says class {votes.true_labels[i]}, CIFAR-10 says {cifar_labels[i]}")


def read_cifar10_test(path: str | Path) -> tuple[np.ndarray, np.ndarray]:
    """CIFAR-10's test images uint8 (10000, 32, 32, 3) and labels int64 from the python archive
    (cifar-10-python.tar.gz, member cifar-10-batches-py/test_batch, read in place) or the test_batch pickle itself.
    Each row of the batch's `data` is the red, green and blue 32 x 32 planes, row-major."""
    path = Path(path)
    if tarfile.is_tarfile(path):
        with tarfile.open(path, "r:*") as archive:
            member = next((m for m in archive.getmembers() if m.isfile() and m.name.endswith("/test_batch")), None)
            if member is None:
                raise ValueError(f"{path}: no test_batch in the archive")
            raw = archive.extractfile(member).read()
    else:
        raw = path.read_bytes()
    batch = pickle.load(io.BytesIO(raw), encoding="bytes")
    missing = [k for k in (b"data", b"labels") if k not in batch]
    if missing:
        raise ValueError(f"{path}: test_batch lacks {[k.decode() for k in missing]}")
    data = np.asarray(batch[b"data"], dtype=np.uint8)
    if data.ndim != 2 or data.shape[1] != 3 * 32 * 32:
        raise ValueError(f"{path}: test_batch data must be (N, 3072), got {data.shape}")
    labels = np.asarray(batch[b"labels"], dtype=np.int64)
    if labels.shape != (len(data),):
        raise ValueError(f"{path}: {len(data)} images but {labels.shape} labels")
    return data.reshape(-1, 3, 32, 32).transpose(0, 2, 3, 1).copy(), labels
