"""Regional 3D MS-SSIM against MONAI, its scale limits, and the four editing columns on edits of known kind."""

import numpy as np
import pytest
import torch
from scipy import ndimage

from neurips26.anadiffusion import editing

SHAPE = (20, 24, 20)
SSIM = {"n_scales": 3, "kernel_size": 5}  # what a 20-voxel axis allows: 20 -> 10 -> 5


def brains(n, seed):
    """Smooth random volumes in [-1, 1] with background -1 outside a box-shaped brain."""
    rng = np.random.default_rng(seed)
    smooth = ndimage.gaussian_filter(rng.normal(size=(n, *SHAPE)), sigma=(0, 1.5, 1.5, 1.5))
    smooth = np.tanh(smooth / smooth.std())
    return np.where(BRAIN, smooth, -1.0)


BRAIN = np.zeros(SHAPE, dtype=bool)
BRAIN[2:18, 2:22, 2:18] = True
LEFT = BRAIN.copy()
LEFT[10:] = False  # the target part: the brain's first half along the first axis


def test_whole_volume_score_equals_monai_ms_ssim_and_ssim():
    from monai.metrics import SSIMMetric
    from monai.metrics.regression import compute_ms_ssim

    x, y = brains(2, 0), brains(2, 1)
    y = 0.6 * x + 0.4 * y  # similar, not equal
    whole = np.ones(SHAPE, dtype=bool)
    ours = editing.masked_ms_ssim(x, y, whole, **SSIM)
    tx, ty = (torch.as_tensor(v, dtype=torch.float32)[:, None] for v in (x, y))
    weights = editing.ms_ssim_weights(3)
    theirs = compute_ms_ssim(tx, ty, 3, data_range=2.0, kernel_size=5, kernel_sigma=1.5, weights=weights)
    np.testing.assert_allclose(ours, theirs[:, 0].numpy(), rtol=1e-5)
    single = editing.masked_ms_ssim(x, y, whole, n_scales=1, kernel_size=11)
    monai_ssim = SSIMMetric(spatial_dims=3, data_range=2.0, win_size=11, reduction="none")(tx, ty)
    np.testing.assert_allclose(single, monai_ssim[:, 0].numpy(), rtol=1e-5)


def test_regional_ssim_averages_the_windows_centred_in_the_region():
    from monai.metrics.regression import compute_ssim_and_cs

    x, y = brains(1, 12), brains(1, 13)
    region = np.zeros(SHAPE, dtype=bool)
    region[3:9, 5:20, 4:15] = True
    ours = editing.masked_ms_ssim(x, y, region, n_scales=1, kernel_size=5)[0]
    tx, ty = (torch.as_tensor(np.where(region, v, -1.0), dtype=torch.float32)[:, None] for v in (x, y))
    ssim_map = compute_ssim_and_cs(tx, ty, 3, kernel_size=(5, 5, 5), kernel_sigma=(1.5,) * 3, data_range=2.0)[0]
    centred = ssim_map[0, 0].numpy()[1:7, 3:18, 2:13]  # map index = voxel index - 2 (half the window)
    assert ours == pytest.approx(centred.mean(), rel=1e-5)


def test_ms_ssim_is_one_for_a_volume_with_itself_and_drops_with_noise():
    x = brains(2, 2)
    assert editing.masked_ms_ssim(x, x, BRAIN, **SSIM) == pytest.approx(1.0, abs=1e-12)
    rng = np.random.default_rng(3)
    scores = [
        editing.masked_ms_ssim(x, np.clip(x + s * rng.normal(size=x.shape), -1, 1), BRAIN, **SSIM).mean()
        for s in (0.02, 0.1, 0.4)
    ]
    assert 1 > scores[0] > scores[1] > scores[2]


def test_regional_score_ignores_what_lies_outside_the_region():
    x = brains(1, 4)
    y = x.copy()
    y[:, 12:] = brains(1, 5)[:, 12:]  # differs only away from LEFT (which ends at 10)
    assert editing.masked_ms_ssim(x, y, LEFT, **SSIM)[0] == pytest.approx(1.0, abs=1e-12)
    assert editing.masked_ms_ssim(x, y, BRAIN, **SSIM)[0] < 0.95


def test_scales_must_fit_the_volume():
    assert editing.scales_that_fit((24, 28, 24), 11) == 2
    assert editing.scales_that_fit((24, 28, 24), 5) == 3
    assert editing.scales_that_fit((128, 128, 128), 11) == 4
    assert editing.scales_that_fit((176, 176, 176), 11) == 5
    assert editing.ms_ssim_weights(2) == pytest.approx((0.0448 / 0.3304, 0.2856 / 0.3304))
    x = brains(1, 6)
    with pytest.raises(ValueError, match="allow at most 3 scales"):
        editing.masked_ms_ssim(x, x, BRAIN, n_scales=4, kernel_size=5)
    with pytest.raises(ValueError, match="odd positive"):
        editing.masked_ms_ssim(x, x, BRAIN, n_scales=1, kernel_size=4)
    corner = np.zeros(SHAPE, dtype=bool)
    corner[4, 4, 4] = True  # inside the windows' centres at scales 1 and 2, not at the coarsest
    with pytest.raises(ValueError, match="no window centre at scale 3 of 3"):
        editing.masked_ms_ssim(x, x, corner, **SSIM)


def test_off_target_is_the_brain_beyond_the_dilated_target():
    off = editing.off_target_mask(BRAIN, LEFT, dilation_voxels=2)
    assert not off[:12].any() and off[12:18].any()
    np.testing.assert_array_equal(off[12:], BRAIN[12:])
    np.testing.assert_array_equal(editing.off_target_mask(BRAIN, LEFT, 0), BRAIN & ~LEFT)


def scores(original, donor, edited):
    return editing.editing_scores(original, donor, edited, LEFT, BRAIN, dilation_voxels=1, **SSIM)


def test_the_four_columns_on_edits_of_known_kind():
    original, donor = brains(3, 7), brains(3, 8)
    local = np.where(LEFT, donor, original)  # a perfect local transplant
    s = scores(original, donor, local)
    np.testing.assert_allclose(s.target_transfer, 1.0, atol=1e-12)
    np.testing.assert_allclose(s.off_target_preservation, 1.0, atol=1e-12)
    np.testing.assert_allclose(s.transfer_gain, 1.0 - s.baseline_transfer, atol=1e-12)
    assert (s.transfer_gain > 0.3).all()
    np.testing.assert_allclose(s.off_target_drift, 0.0, atol=1e-12)
    np.testing.assert_allclose(s.locality_contrast, s.transfer_gain, atol=1e-12)
    # replacing the whole recipient by the donor transfers as much, but is not local
    whole = scores(original, donor, donor.copy())
    np.testing.assert_allclose(whole.transfer_gain, s.transfer_gain, atol=1e-12)
    assert (whole.off_target_preservation < 0.7).all()
    assert (np.abs(whole.locality_contrast) < 0.5 * s.locality_contrast).all()
    # an edit that changes nothing gains nothing
    none = scores(original, donor, original.copy())
    np.testing.assert_allclose(none.transfer_gain, 0.0, atol=1e-12)
    np.testing.assert_allclose(none.locality_contrast, 0.0, atol=1e-12)
    np.testing.assert_allclose(none.target_transfer, none.baseline_transfer)
    assert set(s.columns()) >= {"target_transfer", "off_target_preservation", "transfer_gain", "locality_contrast"}


def test_editing_refuses_a_donor_equal_to_its_recipient_and_bad_shapes():
    original, donor = brains(2, 9), brains(2, 10)
    donor[1] = original[1]
    with pytest.raises(ValueError, match="edit 1: the donor equals the recipient"):
        scores(original, donor, original)
    with pytest.raises(ValueError, match="differ in shape"):
        scores(original, donor[:1], original)
    with pytest.raises(ValueError, match="off-target .* is empty"):
        editing.editing_scores(original, brains(2, 11), original, BRAIN, BRAIN, **SSIM)
