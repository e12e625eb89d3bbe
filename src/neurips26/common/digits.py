"""scikit-learn's 8x8 digits at 16x16 in [-1, 1]: the offline image set of papers 01 and 04 at quick scale."""

from __future__ import annotations

import numpy as np
import torch
import torch.nn.functional as F


def digits16(seed: int = 0, n_train: int = 1500) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """scikit-learn's 8x8 digits, bilinearly upsampled to 16x16 and scaled to [-1, 1], with a fixed split.

    Returns x_train, y_train, x_test, y_test; images are float32 (N, 1, 16, 16), labels int64. The split is the
    first `n_train` images of a permutation drawn from `np.random.default_rng(seed)` (1500 / 297 by default).
    """
    from sklearn.datasets import load_digits

    digits = load_digits()
    if not 0 < n_train < len(digits.images):
        raise ValueError(f"n_train={n_train} must be between 1 and {len(digits.images) - 1}")
    small = torch.as_tensor(digits.images / 16.0, dtype=torch.float32).unsqueeze(1)
    large = F.interpolate(small, size=(16, 16), mode="bilinear", align_corners=False)
    images = np.clip(large.numpy() * 2.0 - 1.0, -1.0, 1.0).astype(np.float32)
    labels = np.asarray(digits.target, dtype=np.int64)
    order = np.random.default_rng(seed).permutation(len(images))
    train, test = order[:n_train], order[n_train:]
    return images[train], labels[train], images[test], labels[test]
