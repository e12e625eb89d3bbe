"""The MNI152 template on the pipeline's grid: parts, regions, supports (paper 03, AnaDiffusion)."""

import nibabel as nib
import numpy as np
import pytest
from scipy import ndimage

from neurips26.anadiffusion.template import (
    PART_LABELS,
    PARTS,
    build_template,
    load_mni152,
    seam_band,
    template_from_arrays,
)
from neurips26.anadiffusion.volumes import check_parts

QUICK = (8.0, (24, 28, 24))


@pytest.fixture(scope="module")
def template():
    return build_template(*QUICK)


def test_grid_is_ras_symmetric_about_the_midline_and_holds_the_brain(template):
    assert template.shape == (24, 28, 24)
    assert nib.aff2axcodes(template.affine) == ("R", "A", "S")
    assert np.allclose(np.diag(template.affine)[:3], 8.0)
    x = template.coordinates()[0, :, 0, 0]
    assert np.allclose(x, -x[::-1]) and np.allclose(x[11:13], [-4.0, 4.0])  # centres at +-voxel/2
    edge = np.ones(template.shape, bool)
    edge[1:-1, 1:-1, 1:-1] = False
    assert not template.brain[edge].any()  # the canvas holds the whole brain with a margin


def test_brain_and_ventricle_volumes_match_the_1mm_template(template):
    t1, _ = load_mni152("t1")
    brain_mm3 = float((t1 > 0).sum())
    assert template.brain.sum() * template.voxel_volume_mm3 == pytest.approx(brain_mm3, rel=0.03)
    gm, _ = load_mni152("gm")
    assert template.ventricle_fraction.sum() * template.voxel_volume_mm3 == pytest.approx(22_000, rel=0.1)
    assert gm.max() <= 1 and template.gm.max() <= 1 and template.wm.min() >= 0


def test_t1_is_scaled_to_unit_range_with_background_minus_one(template):
    assert template.t1.dtype == np.float32
    assert template.t1.min() == -1.0 and template.t1.max() == 1.0
    assert (template.t1[~template.brain] == -1).all()
    assert np.median(template.t1[template.brain]) > 0  # tissue, not background
    # grey matter is darker than white matter in T1
    assert template.t1[template.gm > 0.6].mean() < template.t1[template.wm > 0.6].mean()


def test_parts_partition_the_brain_by_our_mni_definitions(template):
    check_parts(template.parts, template.brain)
    x, y, z = template.coordinates()
    cb = template.brain & (((z < -20) & (y < -35)) | ((np.abs(x) < 12) & (y > -40) & (y < -10) & (z < -10)))
    assert (template.part_mask("CB") == cb).all()
    assert (template.part_mask("LH") == (template.brain & (x < 0) & ~cb)).all()
    assert (template.part_mask("RH") == (template.brain & (x >= 0) & ~cb)).all()
    assert (template.cerebellum | template.brainstem).sum() == cb.sum()
    assert not (template.cerebellum & template.brainstem).any() and template.brainstem.any()


def test_hemispheres_are_mirror_images(template):
    swap = np.array([0, PART_LABELS["RH"], PART_LABELS["LH"], PART_LABELS["CB"]], dtype=np.uint8)
    assert (template.parts[::-1] == swap[template.parts]).all()


def test_supports_hold_their_parts_with_shapes_divisible_by_four(template):
    for part in PARTS:
        support = template.supports[part]
        assert all(n % 4 == 0 for n in support.shape), (part, support)
        inside = np.zeros(template.shape, bool)
        inside[support.slices] = True
        assert not (template.part_mask(part) & ~inside).any(), part
    lh, rh = template.supports["LH"], template.supports["RH"]
    assert lh.shape == rh.shape and rh.mirrored and not lh.mirrored
    assert rh.start[0] == template.shape[0] - lh.start[0] - lh.shape[0]


def test_supports_round_to_the_multiple_asked_and_keep_quicks_at_four(template):
    """Quick's multiple stays 4: the default is the supports quick and smoke have always had."""
    assert build_template(*QUICK, support_multiple=4) is template
    wide = build_template(8.0, (32, 32, 32), support_multiple=16)
    for part in PARTS:
        assert all(n % 16 == 0 for n in wide.supports[part].shape), (part, wide.supports[part])
        outside = wide.part_mask(part).copy()
        outside[wide.supports[part].slices] = False
        assert not outside.any(), part


def test_right_hemisphere_crop_is_mirrored_into_the_left_orientation(template):
    lh, rh = template.supports["LH"], template.supports["RH"]
    assert (rh.crop(template.part_mask("RH")) == lh.crop(template.part_mask("LH"))).all()
    assert np.allclose(rh.crop(template.t1), lh.crop(template.t1), atol=1e-5)  # the template is symmetric


def test_place_inverts_crop_inside_the_support(template):
    rng = np.random.default_rng(0)
    volumes = rng.uniform(-1, 1, (2, *template.shape)).astype(np.float32)
    for part in PARTS:
        support = template.supports[part]
        placed = support.place(support.crop(volumes), template.shape)
        inside = np.zeros(template.shape, bool)
        inside[support.slices] = True
        assert (placed[:, inside] == volumes[:, inside]).all() and (placed[:, ~inside] == -1).all()
    with pytest.raises(ValueError, match="support's shape"):
        template.supports["CB"].place(np.zeros((3, 3, 3)), template.shape)


def test_seam_band_is_the_part_interfaces_inside_the_brain(template):
    seam = template.seam
    assert seam.any() and not (seam & ~template.brain).any()
    # every voxel with a face neighbour in another part is in the band
    touching = np.zeros(template.shape, bool)
    for label in PART_LABELS.values():
        other = (template.parts > 0) & (template.parts != label)
        touching |= (template.parts == label) & ndimage.binary_dilation(other)
    assert (touching <= seam).all()
    # the outer surface alone is not a seam: brain voxels far from any other part are excluded
    lh = template.part_mask("LH")
    far = lh & (ndimage.distance_transform_edt(~((template.parts > 0) & ~lh), sampling=8.0) > 9)
    assert far.any() and not (seam & far).any()


def test_seam_width_grows_with_seam_mm():
    parts = np.zeros((12, 4, 4), np.uint8)
    parts[:6], parts[6:] = 1, 2
    assert seam_band(parts, 1.0, 1.0)[:, 0, 0].nonzero()[0].tolist() == [5, 6]
    assert seam_band(parts, 1.0, 3.0)[:, 0, 0].nonzero()[0].tolist() == [3, 4, 5, 6, 7, 8]


def test_ventricle_roi_contains_the_ventricles_inside_the_brain(template):
    assert template.ventricles.any()
    assert (template.ventricles <= template.ventricle_roi).all()
    assert (template.ventricle_roi <= template.brain).all()
    assert (template.ventricles == (template.ventricle_fraction >= 0.5)).all()
    # the ventricles are dark (CSF) in T1
    assert template.t1[template.ventricles].mean() < template.t1[template.brain].mean()


def test_arrays_round_trip(template):
    again = template_from_arrays(template.as_arrays())
    assert again.supports == template.supports and again.voxel_mm == template.voxel_mm
    for name in ("t1", "parts", "seam", "affine", "ventricle_fraction"):
        assert np.array_equal(getattr(again, name), getattr(template, name))
    arrays = template.as_arrays()
    del arrays["support_CB"]
    with pytest.raises(ValueError, match="support_CB"):
        template_from_arrays(arrays)


def test_template_is_cached_and_read_only(template):
    assert build_template(*QUICK) is template
    with pytest.raises(ValueError):
        template.t1[0, 0, 0] = 0.0


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"voxel_mm": 8.0, "shape": (24, 26, 24)}, "multiples of 4"),
        ({"voxel_mm": 8.0, "shape": (16, 16, 16)}, "cannot hold the template brain"),
        ({"voxel_mm": -1.0, "shape": (24, 28, 24)}, "voxel_mm"),
        ({"voxel_mm": 8.0, "shape": (24, 28, 24), "seam_mm": float("nan")}, "seam_mm"),
        ({"voxel_mm": 8.0, "shape": (24, 28, 24), "support_multiple": 8}, r"multiples of 8 \(support_multiple\)"),
        ({"voxel_mm": 8.0, "shape": (24, 28, 24), "support_multiple": 3}, "even integer"),
    ],
)
def test_bad_grids_are_refused(kwargs, message):
    with pytest.raises(ValueError, match=message):
        build_template(**kwargs)


def test_unknown_map_is_refused():
    with pytest.raises(ValueError, match="kind must be one of"):
        load_mni152("csf")
