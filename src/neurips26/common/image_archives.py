"""Readers of the canonical image archives, read in place (shared by the papers' paper-scale data steps)."""

from __future__ import annotations

import numpy as np


def read_idx_images(path) -> np.ndarray:
    """MNIST's IDX image format (gzip): magic 2051, count, rows, cols, then uint8 pixels."""
    import gzip

    with gzip.open(path, "rb") as handle:
        raw = handle.read()
    magic, count, rows, cols = np.frombuffer(raw[:16], dtype=">i4")
    if magic != 2051:
        raise ValueError(f"{path}: not an IDX image file (magic {magic}, expected 2051)")
    return np.frombuffer(raw[16:], dtype=np.uint8).reshape(count, rows, cols).astype(np.float64)


def read_idx_labels(path) -> np.ndarray:
    """MNIST's IDX label format (gzip): magic 2049, count, then one uint8 label per item (as int64)."""
    import gzip

    with gzip.open(path, "rb") as handle:
        raw = handle.read()
    magic, count = np.frombuffer(raw[:8], dtype=">i4")
    if magic != 2049:
        raise ValueError(f"{path}: not an IDX label file (magic {magic}, expected 2049)")
    labels = np.frombuffer(raw[8:], dtype=np.uint8)
    if len(labels) != count:
        raise ValueError(f"{path}: header says {count} labels, the file holds {len(labels)}")
    return labels.astype(np.int64)


def cifar10_from_archive(path: str) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """CIFAR-10 from the official python archive (read in place, nothing extracted): x_train (50000, 3,
    32, 32) and x_test (10000, ...) as float32 in [-1, 1], with int64 labels."""
    import pickle
    import tarfile

    batches: dict[str, dict] = {}
    with tarfile.open(path, "r:gz") as archive:
        for member in archive.getmembers():
            name = member.name.rsplit("/", 1)[-1]
            if member.isfile() and (name.startswith("data_batch_") or name == "test_batch"):
                batches[name] = pickle.load(archive.extractfile(member), encoding="bytes")
    expected = [f"data_batch_{i}" for i in range(1, 6)] + ["test_batch"]
    missing = [name for name in expected if name not in batches]
    if missing:
        raise ValueError(f"{path} is not the CIFAR-10 python archive: {missing} missing")

    def images(names: list[str]) -> tuple[np.ndarray, np.ndarray]:
        data = np.concatenate([batches[n][b"data"] for n in names]).reshape(-1, 3, 32, 32)
        labels = np.concatenate([np.asarray(batches[n][b"labels"]) for n in names]).astype(np.int64)
        return (data.astype(np.float32) / 127.5 - 1.0), labels

    x_train, y_train = images(expected[:5])
    x_test, y_test = images(["test_batch"])
    return x_train, y_train, x_test, y_test
