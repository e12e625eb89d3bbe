"""Paper 15's morphed digits: centring, pairs of different classes, the convex mix and the generator's label."""

from __future__ import annotations

import numpy as np
import pytest

from neurips26.softlabel_audit.digits import Digits
from neurips26.softlabel_audit.morph import (
    centre_images,
    centre_of_mass,
    draw_pairs,
    morph_pairs,
    shift_images,
)


def _dot(row: int, col: int) -> np.ndarray:
    image = np.zeros((28, 28), dtype=np.float32)
    image[row, col] = 1.0
    return image


def test_centre_of_mass_of_hand_made_images():
    two = _dot(2, 4) + _dot(6, 4)  # mean row 4, column 4
    np.testing.assert_allclose(centre_of_mass(np.stack([two, np.zeros((28, 28))])), [[4, 4], [13.5, 13.5]])


def test_shift_moves_pixels_and_drops_what_leaves_the_field():
    moved = shift_images(np.stack([_dot(2, 4), _dot(0, 0)]), np.array([[3, -1], [-1, 0]]))
    np.testing.assert_array_equal(moved[0], _dot(5, 3))
    assert moved[1].sum() == 0


def test_centred_images_have_their_mass_at_the_centre():
    images = np.stack([_dot(2, 4) + _dot(6, 4), _dot(20, 25)])
    np.testing.assert_array_less(np.abs(centre_of_mass(centre_images(images)) - 13.5), 0.51)


def test_pairs_have_different_classes_and_reach_every_other_class():
    labels = np.repeat(np.arange(10), 30)
    i, j = draw_pairs(labels, 2000, seed=0)
    assert (labels[i] != labels[j]).all()
    assert len(set(zip(labels[i].tolist(), labels[j].tolist()))) == 90  # every ordered pair of classes
    np.testing.assert_array_equal(i, draw_pairs(labels, 2000, seed=0)[0])
    with pytest.raises(ValueError, match="at least two classes"):
        draw_pairs(np.zeros(5, dtype=int), 3, seed=0)


def test_a_morph_is_the_convex_mix_of_its_centred_sources_and_its_label_the_heavier_class():
    images = np.stack([_dot(13, 13) + _dot(14, 14), _dot(13, 14) + _dot(14, 13), _dot(5, 5)])
    digits = Digits(images, np.array([1, 7, 1]))
    morphs = morph_pairs(digits, 400, seed=3)
    assert morphs.images.shape == (400, 28, 28) and morphs.images.dtype == np.float32
    assert (morphs.class_a != morphs.class_b).all() and ((morphs.w >= 0.3) & (morphs.w <= 0.7)).all()
    centred = centre_images(images)
    expected = (
        morphs.w[:, None, None] * centred[morphs.source_a] + (1 - morphs.w[:, None, None]) * centred[morphs.source_b]
    )
    np.testing.assert_allclose(morphs.images, expected, atol=1e-6)
    np.testing.assert_array_equal(morphs.labels, np.where(morphs.w >= 0.5, morphs.class_a, morphs.class_b))
    assert 0.3 < (morphs.w >= 0.5).mean() < 0.7  # either source can win


def test_morphs_are_seeded_and_the_weight_range_is_checked():
    digits = Digits(np.random.default_rng(0).random((20, 28, 28)).astype(np.float32), np.arange(20) % 4)
    a, b = morph_pairs(digits, 10, seed=1), morph_pairs(digits, 10, seed=1)
    np.testing.assert_array_equal(a.images, b.images)
    assert not np.array_equal(a.w, morph_pairs(digits, 10, seed=2).w)
    with pytest.raises(ValueError, match="w_range"):
        morph_pairs(digits, 10, seed=1, w_range=(0.7, 0.3))
