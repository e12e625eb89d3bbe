"""The synthetic cohort `synthbrain` and the checks of volumes and part masks (paper 03, AnaDiffusion)."""

import numpy as np
import pandas as pd
import pytest
from scipy.stats import spearmanr

from neurips26.anadiffusion.cohort import CohortSettings, synthesize_cohort
from neurips26.anadiffusion.template import build_template
from neurips26.anadiffusion.volumes import (
    check_affine,
    check_part_masks,
    check_parts,
    check_volumes,
    clip_and_scale,
    part_masks,
)

# everything but the one effect a test looks at switched off
STILL = dict(
    global_scale_sd=0.0,
    global_amplitude_mm=(0.0, 0.0),
    part_amplitude_mm=(0.0, 0.0),
    ventricle_expansion_cn_mm=(0.0, 0.0),
    ventricle_expansion_ad_mm=(0.0, 0.0),
    cerebellum_scale_sd=0.0,
    gm_atrophy_cn=(0.0, 0.0),
    gm_atrophy_ad=(0.0, 0.0),
    bias_amplitude=0.0,
    noise_sd=0.0,
)


@pytest.fixture(scope="module")
def template():
    return build_template(8.0, (24, 28, 24))


@pytest.fixture(scope="module")
def train(template):
    return synthesize_cohort(template, 24, seed=0, split="train")


def test_cohort_volumes_and_parts_are_valid_inputs(template, train):
    assert train.volumes.shape == (24, 24, 28, 24) and train.volumes.dtype == np.float32
    assert train.parts.shape == train.volumes.shape and train.parts.dtype == np.uint8
    check_volumes(train.volumes, template, affine=template.affine)
    check_parts(train.parts, train.brain)
    assert (train.volumes[~train.brain] == -1).all()  # skull-stripped, background -1
    assert (train.volumes.reshape(24, -1).max(axis=1) == 1).all()  # each scaled to its own 99th percentile


def test_subjects_table_describes_every_volume(train):
    table = train.subjects
    assert list(table["subject"]) == [f"train-{i:04d}" for i in range(24)]
    assert (table["group"] == "CN").sum() == 12 and (table["group"] == "AD").sum() == 12
    drawn = ("global_scale", "lh_amplitude_mm", "rh_amplitude_mm", "cb_amplitude_mm", "ventricle_expansion_mm",
             "gm_atrophy", "cerebellum_scale")  # fmt: skip
    for column in ("ventricles_mm3", "cerebellum_mm3", "brainstem_mm3", *drawn):
        assert table[column].notna().all() and table[column].std() > 0, column
    assert np.allclose(table["brain_mm3"], train.brain.reshape(24, -1).sum(1) * 512.0)
    ad = table["group"] == "AD"
    assert table.loc[ad, "gm_atrophy"].between(0.03, 0.10).all()
    assert table.loc[~ad, "gm_atrophy"].between(0.0, 0.05).all()
    assert table.loc[ad, "ventricle_expansion_mm"].mean() > table.loc[~ad, "ventricle_expansion_mm"].mean()


def test_cohort_is_deterministic_in_seed_and_split(template, train):
    again = synthesize_cohort(template, 24, seed=0, split="train")
    assert np.array_equal(again.volumes, train.volumes) and np.array_equal(again.parts, train.parts)
    pd.testing.assert_frame_equal(again.subjects, train.subjects)
    other = synthesize_cohort(template, 24, seed=1, split="train")
    assert not np.allclose(other.volumes, train.volumes)


def test_train_and_eval_are_independent_draws_of_distinct_subjects(template, train):
    evaluation = synthesize_cohort(template, 8, seed=0, split="eval")
    assert not set(evaluation.subjects["subject"]) & set(train.subjects["subject"])
    distance = np.abs(evaluation.volumes[:, None] - train.volumes[None]).reshape(8, 24, -1).max(-1)
    assert distance.min() > 0.1  # no eval volume repeats a training volume
    assert not np.allclose(evaluation.subjects["global_scale"], train.subjects["global_scale"][:8])


def test_true_ventricle_volume_grows_with_the_expansion(template):
    settings = CohortSettings(**{**STILL, "ventricle_expansion_cn_mm": (1.0, 1.0), "ventricle_expansion_ad_mm": (3, 1)})
    cohort = synthesize_cohort(template, 16, seed=2, settings=settings)
    table = cohort.subjects
    assert spearmanr(table["ventricle_expansion_mm"], table["ventricles_mm3"]).statistic == pytest.approx(1.0)
    at_zero = template.ventricle_fraction.sum() * template.voxel_volume_mm3
    assert table.loc[table["ventricle_expansion_mm"] > 2, "ventricles_mm3"].min() > 1.1 * at_zero
    variation = table[["ventricles_mm3", "cerebellum_mm3"]].std() / table[["ventricles_mm3", "cerebellum_mm3"]].mean()
    assert variation["cerebellum_mm3"] < 0.1 * variation["ventricles_mm3"]  # a local effect


def test_true_cerebellum_volume_follows_the_cerebellar_scale(template):
    cohort = synthesize_cohort(template, 12, seed=3, settings=CohortSettings(**{**STILL, "cerebellum_scale_sd": 0.05}))
    table = cohort.subjects
    assert spearmanr(table["cerebellum_scale"], table["cerebellum_mm3"]).statistic > 0.95


def test_grey_matter_atrophy_darkens_grey_matter(template):
    settings = CohortSettings(**{**STILL, "gm_atrophy_cn": (0.0, 0.1), "gm_atrophy_ad": (0.1, 0.3)})
    cohort = synthesize_cohort(template, 12, seed=4, settings=settings)
    grey = cohort.volumes[:, template.gm > 0.6].mean(axis=1)
    assert spearmanr(cohort.subjects["gm_atrophy"], grey).statistic < -0.95


def test_parts_deform_independently_of_each_other(template):
    def part_volumes(**changes):
        cohort = synthesize_cohort(template, 24, seed=5, settings=CohortSettings(**{**STILL, **changes}))
        return part_masks(cohort.parts).reshape(24, 3, -1).sum(-1)

    alone = part_volumes(part_amplitude_mm=(4.0, 4.0))
    together = part_volumes(global_scale_sd=0.05)
    assert abs(np.corrcoef(alone[:, 0], alone[:, 1])[0, 1]) < 0.6  # LH and RH vary on their own
    assert np.corrcoef(together[:, 0], together[:, 1])[0, 1] > 0.9  # a global change moves both


@pytest.mark.parametrize(
    "changes, message",
    [
        ({"global_amplitude_mm": (4.0, 2.0)}, "global_amplitude_mm"),
        ({"part_amplitude_mm": (-1.0, 2.0)}, "part_amplitude_mm"),
        ({"ventricle_expansion_ad_mm": (2.5, -0.1)}, "ventricle_expansion_ad_mm"),
        ({"gm_atrophy_ad": (0.5, 1.5)}, "gm_atrophy"),
        ({"noise_sd": -0.1}, "noise_sd"),
        ({"squaring_steps": 0}, "squaring_steps"),
    ],
)
def test_bad_settings_are_refused(changes, message):
    with pytest.raises(ValueError, match=message):
        CohortSettings(**changes)


def test_bad_cohort_arguments_are_refused(template):
    with pytest.raises(ValueError, match="n_subjects"):
        synthesize_cohort(template, 0, seed=0)
    with pytest.raises(ValueError, match="split"):
        synthesize_cohort(template, 2, seed=0, split="")
    with pytest.raises(ValueError, match="seed"):
        synthesize_cohort(template, 2, seed=1.5)


# ---------------------------------------------------------------- checks of volumes and parts


def test_clip_and_scale_maps_each_volume_to_unit_range():
    rng = np.random.default_rng(0)
    volumes = np.stack([rng.gamma(2.0, 1.0, (8, 8, 8)), 100 + 5 * rng.normal(size=(8, 8, 8))])
    scaled = clip_and_scale(volumes)
    for raw, out in zip(volumes, scaled):
        lo, hi = np.percentile(raw, [1, 99])
        assert out.min() == -1 and out.max() == 1
        assert np.allclose(out, 2 * (np.clip(raw, lo, hi) - lo) / (hi - lo) - 1, atol=1e-5)
    with pytest.raises(ValueError, match="non-finite"):
        clip_and_scale(np.full((4, 4, 4), np.nan))


def test_volume_checks_name_the_problem(template, train):
    volumes = train.volumes[:2].copy()
    with pytest.raises(ValueError, match="not \\(N, \\*\\(24, 28, 24\\)\\)"):
        check_volumes(volumes[:, :-1], template)
    with pytest.raises(ValueError, match="dtype"):
        check_volumes(volumes.astype(np.int16), template)
    bad = volumes.copy()
    bad[1, 3, 4, 5] = np.nan
    with pytest.raises(ValueError, match=r"1 non-finite voxels \(first at index \(1, 3, 4, 5\)\)"):
        check_volumes(bad, template)
    with pytest.raises(ValueError, match="outside \\[-1, 1\\]"):
        check_volumes(volumes * 1.5, template)
    flipped = template.affine @ np.diag([-1.0, 1, 1, 1])
    with pytest.raises(ValueError, match="orientation LAS is not RAS"):
        check_volumes(volumes, template, affine=flipped)
    shifted = template.affine.copy()
    shifted[0, 3] += 4.0
    with pytest.raises(ValueError, match="affine differs"):
        check_affine(shifted, template.affine)


def test_part_checks_refuse_overlap_gaps_spill_and_empty_parts(train):
    labels, brain = train.parts[:2], train.brain[:2]
    check_parts(labels, brain)
    unknown = labels.copy()
    unknown[0, 10, 10, 10] = 7
    with pytest.raises(ValueError, match="unknown labels \\[7\\]"):
        check_parts(unknown, brain)
    gap = labels.copy()
    gap[brain & (labels == 1)] = 0
    with pytest.raises(ValueError, match="covered by no part"):
        check_parts(gap, brain)
    with pytest.raises(ValueError, match="outside the brain"):
        check_parts(np.where(brain, labels, 3).astype(np.uint8), brain)
    masks = part_masks(labels)
    overlap = masks.copy()
    overlap[:, 2] |= masks[:, 0]
    with pytest.raises(ValueError, match="parts overlap"):
        check_part_masks(overlap, brain)
    empty = masks.copy()
    empty[1, 2] = False
    emptied = brain.copy()
    emptied[1] &= ~masks[1, 2]
    with pytest.raises(ValueError, match="part CB is empty \\(volume 1\\)"):
        check_part_masks(empty, emptied)
    with pytest.raises(ValueError, match="integer label"):
        check_parts(labels.astype(np.float32), brain)
