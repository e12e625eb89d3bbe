"""Paper 11's metrics: AUROC against scikit-learn and the Mann-Whitney count, AUPRO against a hand-computed case and
a brute-force loop over thresholds with per-region overlaps."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.ndimage import label

from neurips26.ecfr.metrics import aupro, image_auroc, pixel_auroc, pro_curve


def test_image_auroc_is_the_share_of_correctly_ordered_pairs():
    scores = np.array([0.1, 0.4, 0.35, 0.8, 0.4])
    labels = np.array([0, 0, 1, 1, 1])
    pairs = [(a, n) for a in scores[labels == 1] for n in scores[labels == 0]]
    expected = np.mean([1.0 if a > n else 0.5 if a == n else 0.0 for a, n in pairs])  # ties count one half
    assert image_auroc(scores, labels) == pytest.approx(expected) == pytest.approx(5 / 6 - 1 / 12)


def test_pixel_auroc_pools_every_pixel():
    from sklearn.metrics import roc_auc_score

    rng = np.random.default_rng(0)
    masks = rng.random((3, 8, 8)) < 0.2
    maps = rng.random((3, 8, 8)) + masks
    assert pixel_auroc(maps, masks) == pytest.approx(roc_auc_score(masks.ravel(), maps.ravel()))


def test_a_single_label_is_refused_naming_the_problem():
    with pytest.raises(ValueError, match="only label \\[False\\]"):
        image_auroc(np.array([0.1, 0.2]), np.array([0, 0]))
    with pytest.raises(ValueError, match="differ in shape"):
        pixel_auroc(np.zeros((2, 4, 4)), np.zeros((2, 4, 5), dtype=bool))


def test_aupro_of_a_hand_computed_case():
    # one image of 1 x 10 pixels: a region of 2 pixels (scores 0.9 and 0.5) and 8 normal pixels
    maps = np.array([[[0.9, 0.5, 0.8, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1]]])
    masks = np.array([[[1, 1, 0, 0, 0, 0, 0, 0, 0, 0]]], dtype=bool)
    fpr, pro = pro_curve(maps, masks)
    # thresholds from the top: 0.9 -> (0, 1/2); 0.8 -> (1/8, 1/2); 0.5 -> (1/8, 1); 0.1 -> (1, 1)
    assert np.allclose(fpr, [0, 0, 1 / 8, 1 / 8, 1]) and np.allclose(pro, [0, 0.5, 0.5, 1, 1])
    # area up to FPR 0.3: 1/8 * 0.5 (flat at 1/2) + (0.3 - 1/8) * 1, divided by 0.3
    assert aupro(maps, masks) == pytest.approx((0.125 * 0.5 + 0.175 * 1.0) / 0.3)


def _brute_force_aupro(maps, masks, limit=0.3):
    regions = []
    for i in range(len(masks)):
        lab, n = label(masks[i], structure=np.ones((3, 3)))
        regions += [(i, lab == r) for r in range(1, n + 1)]
    points = [(0.0, 0.0)]
    for t in np.unique(maps)[::-1]:
        above = maps >= t
        fpr = (above & ~masks).sum() / (~masks).sum()
        pro = np.mean([(above[i] & region).sum() / region.sum() for i, region in regions])
        points.append((fpr, pro))
    fpr, pro = np.array(points).T
    grid = np.linspace(0, limit, 20001)
    return np.trapezoid(np.interp(grid, fpr, pro), grid) / limit


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_aupro_equals_a_brute_force_loop_over_thresholds(seed):
    rng = np.random.default_rng(seed)
    masks = np.zeros((4, 12, 12), dtype=bool)
    masks[0, 2:5, 2:6] = True
    masks[0, 8:10, 8:11] = True  # two regions in one image
    masks[2, 5:9, 1:3] = True
    maps = np.round(rng.random(masks.shape) + 0.8 * masks * rng.random(masks.shape), 2)  # rounded: ties
    assert aupro(maps, masks) == pytest.approx(_brute_force_aupro(maps, masks), abs=1e-4)
    assert aupro(masks.astype(float) + 0.01 * rng.random(masks.shape), masks) == pytest.approx(1.0)
