"""Paper 11's metrics of one run from its anomaly maps, as the paper's tables report them (ADer's evaluator): per
class, image AUROC (the image score is the map's maximum), pixel AUROC and AUPRO@0.3, and their mean over classes
(the tables' "m" prefix); per defect type, the same three per class against its normal test images, averaged over
classes (which defects each method detects, e.g. those visible in one modality only)."""

from __future__ import annotations

import numpy as np

from .metrics import aupro, image_auroc, pixel_auroc

__all__ = ["image_scores", "run_metrics"]

MEAN = "mean"


def image_scores(maps: np.ndarray) -> np.ndarray:
    return maps.reshape(len(maps), -1).max(1)


def _three(maps: np.ndarray, masks: np.ndarray, labels: np.ndarray, limit: float) -> dict[str, float]:
    return {
        "i_auroc": image_auroc(image_scores(maps), labels),
        "p_auroc": pixel_auroc(maps, masks),
        "aupro": aupro(maps, masks, limit),
    }


def run_metrics(maps: np.ndarray, masks: np.ndarray, cls: np.ndarray, defect: np.ndarray,
                limit: float = 0.3) -> list[dict]:  # fmt: skip
    """Rows (group, name, i_auroc, p_auroc, aupro): group "class" per class and its mean over classes ("mean"),
    group "defect" per defect type: in each class that has images of it, those images against the class's normal
    images, averaged over those classes (as the class means are; C4 reads these)."""
    if not (len(maps) == len(masks) == len(cls) == len(defect)):
        raise ValueError(f"{len(maps)} maps, {len(masks)} masks, {len(cls)} classes, {len(defect)} defect labels")
    labels = defect != "good"
    rows = []
    for c in dict.fromkeys(cls.tolist()):
        keep = cls == c
        rows.append({"group": "class", "name": c, **_three(maps[keep], masks[keep], labels[keep], limit)})
    per_class = rows[:]
    means = {k: float(np.mean([r[k] for r in per_class])) for k in ("i_auroc", "p_auroc", "aupro")}
    rows.append({"group": "class", "name": MEAN, **means})
    for d in dict.fromkeys(defect[labels].tolist()):
        per = []
        for c in dict.fromkeys(cls[defect == d].tolist()):
            keep = (cls == c) & ((defect == d) | ~labels)
            per.append(_three(maps[keep], masks[keep], labels[keep], limit))
        rows.append({"group": "defect", "name": d, **{k: float(np.mean([r[k] for r in per])) for k in per[0]}})
    return rows
