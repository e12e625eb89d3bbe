"""Paper 11's procedural RGB + depth data: seeded pairs, defects with masks in the modalities they claim, the real
disparity map and textures of scikit-image, and the bad inputs refused."""

from __future__ import annotations

import numpy as np
import pytest

from neurips26.ecfr.data import CLASSES, DEFECTS, check_sample, make_sample


@pytest.mark.parametrize("cls", CLASSES)
def test_a_good_sample_is_seeded_and_an_object_on_a_plane(cls):
    a, b = make_sample(cls, "good", seed=3), make_sample(cls, "good", seed=3)
    assert np.array_equal(a.rgb, b.rgb) and np.array_equal(a.depth, b.depth)
    assert a.rgb.shape == (64, 64, 3) and a.depth.shape == (64, 64) and not a.mask.any()
    assert 0 <= a.rgb.min() and a.rgb.max() <= 1
    on_object = a.depth > 0.05
    assert 0.05 < on_object.mean() < 0.8  # an object, and a background plane around it
    assert not np.array_equal(make_sample(cls, "good", seed=4).rgb, a.rgb)


@pytest.mark.parametrize("defect", DEFECTS)
def test_each_defect_changes_exactly_the_modalities_it_claims_inside_its_mask(defect):
    changed = {"rgb": 0, "depth": 0}
    for seed in range(6):
        for cls in CLASSES:
            good, bad = make_sample(cls, "good", seed), make_sample(cls, defect, seed)
            assert bad.mask.any() and bad.defect == defect
            rgb_diff = np.abs(bad.rgb - good.rgb).max(-1)
            depth_diff = np.abs(bad.depth - good.depth)
            changed["rgb"] += rgb_diff[bad.mask].mean() > 0.02
            changed["depth"] += depth_diff[bad.mask].mean() > 0.02
            modality = {"crack": "both", "dent": "both", "hole": "both", "contamination": "rgb"}.get(defect, "depth")
            if modality == "rgb":
                assert np.array_equal(bad.depth, good.depth)  # contamination leaves the geometry alone
            if modality == "depth":
                assert np.array_equal(bad.rgb, good.rgb)  # the depth-only bump is not rendered in RGB
    expected = {"both": (30, 30), "rgb": (30, 0), "depth": (0, 30)}[modality]
    assert (changed["rgb"] >= 25) == (expected[0] > 0) and (changed["depth"] >= 25) == (expected[1] > 0), changed


def test_invalid_depth_is_nan_and_counted():
    s = make_sample("dome", "good", seed=0, invalid_depth=0.05)
    n = check_sample(s.rgb, s.depth, s.mask)
    assert n == int(np.isnan(s.depth).sum()) and 100 < n < 300  # about 5% of 4,096 pixels


def test_bad_pairs_are_refused_naming_the_problem():
    s = make_sample("ring", "crack", seed=0)
    with pytest.raises(ValueError, match="RGB \\(64, 64\\) and depth \\(32, 32\\) differ in size"):
        check_sample(s.rgb, s.depth[:32, :32], s.mask)
    with pytest.raises(ValueError, match="mask \\(64, 63\\) does not match the image"):
        check_sample(s.rgb, s.depth, s.mask[:, :63])
    with pytest.raises(ValueError, match="mask is not binary"):
        check_sample(s.rgb, s.depth, s.mask * 0.5 + 0.2)
    with pytest.raises(ValueError, match="unknown class 'bagel'"):
        make_sample("bagel", "good", 0)
    with pytest.raises(ValueError, match="unknown defect 'scratch'"):
        make_sample("ring", "scratch", 0)
