r"""Anomaly-detection metrics of paper 11, as the MVTec 3D-AD evaluation and ADer compute them.

* :func:`image_auroc`: AUROC of the image scores (max of each anomaly map) against the image labels
  (scikit-learn's ``roc_auc_score``);
* :func:`pixel_auroc`: AUROC of every pixel's score against the ground-truth masks, all test images pooled;
* :func:`aupro`: the area under the per-region-overlap curve up to a false-positive rate of ``limit`` (0.3),
  divided by ``limit`` (Bergmann et al. 2021/2022). Regions are the connected components (8-connectivity) of every
  ground-truth mask; at a threshold t, PRO is the mean over regions of the share of the region's pixels scoring above
  t, and FPR the share of anomaly-free pixels scoring above t. The curve is computed exactly at every distinct score
  (one pass over the pixels sorted by score, ties grouped), then integrated by the trapezoid rule up to ``limit``,
  linearly interpolated there.

A test set needs both normal and anomalous images (pixels): AUROC is undefined otherwise, and an error names it.
"""

from __future__ import annotations

import numpy as np

__all__ = ["aupro", "image_auroc", "pixel_auroc", "pro_curve"]


def _check(scores: np.ndarray, labels: np.ndarray, what: str) -> None:
    if scores.shape != labels.shape:
        raise ValueError(f"{what}: scores {scores.shape} and labels {labels.shape} differ in shape")
    if not np.isfinite(scores).all():
        raise ValueError(f"{what}: scores must be finite")
    present = np.unique(labels)
    if len(present) < 2:
        raise ValueError(f"{what}: the test set has only label {present.tolist()}; AUROC needs normal and anomalous")


def image_auroc(scores: np.ndarray, labels: np.ndarray) -> float:
    from sklearn.metrics import roc_auc_score

    scores, labels = np.asarray(scores, dtype=float), np.asarray(labels).astype(bool)
    _check(scores, labels, "image AUROC")
    return float(roc_auc_score(labels, scores))


def pixel_auroc(maps: np.ndarray, masks: np.ndarray) -> float:
    from sklearn.metrics import roc_auc_score

    maps, masks = np.asarray(maps, dtype=float), np.asarray(masks).astype(bool)
    _check(maps, masks, "pixel AUROC")
    return float(roc_auc_score(masks.ravel(), maps.ravel()))


def pro_curve(maps: np.ndarray, masks: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(FPR, PRO) at every distinct score, from the highest threshold down; both start at 0 and end at 1."""
    from scipy.ndimage import label

    maps, masks = np.asarray(maps, dtype=float), np.asarray(masks).astype(bool)
    _check(maps, masks, "AUPRO")
    weights = np.zeros(maps.shape)
    n_regions = 0
    structure = np.ones((3, 3), dtype=int)
    for i in range(len(masks)):
        regions, count = label(masks[i], structure=structure)
        for r in range(1, count + 1):
            region = regions == r
            weights[i][region] = 1.0 / region.sum()
        n_regions += count
    scores = maps.ravel()
    order = np.argsort(-scores, kind="stable")
    scores, normal, weights = scores[order], ~masks.ravel()[order], weights.ravel()[order]
    fpr = np.cumsum(normal) / normal.sum()
    pro = np.cumsum(weights) / n_regions
    last = np.r_[np.flatnonzero(np.diff(scores)), len(scores) - 1]  # the last pixel of each group of equal scores
    return np.r_[0.0, fpr[last]], np.r_[0.0, pro[last]]


def aupro(maps: np.ndarray, masks: np.ndarray, limit: float = 0.3) -> float:
    if not 0 < limit <= 1:
        raise ValueError(f"the FPR limit must be in (0, 1], got {limit}")
    fpr, pro = pro_curve(maps, masks)
    keep = fpr <= limit
    x, y = fpr[keep], pro[keep]
    if x[-1] < limit:  # interpolate the curve at the limit
        j = np.searchsorted(fpr, limit)
        t = (limit - fpr[j - 1]) / (fpr[j] - fpr[j - 1])
        x, y = np.r_[x, limit], np.r_[y, pro[j - 1] + t * (pro[j] - pro[j - 1])]
    return float(np.trapezoid(y, x) / limit)
