"""Dataset cartography of paper 15 (softlabel_audit) on hand-made training dynamics: coordinates, regions, alignment
with human uncertainty, refusals."""

import numpy as np
import pytest

from neurips26.softlabel_audit.cartography import Cartography, alignment, cartography, region_masks, regions

# three items over four epochs: learnt at once (0.9 throughout), flip-flopping (0.1/0.9), never learnt (0.1-0.2)
GOLD = np.array([[0.9, 0.1, 0.1], [0.9, 0.9, 0.1], [0.9, 0.1, 0.2], [0.9, 0.9, 0.2]])
RIGHT = GOLD > 0.5


def test_confidence_variability_and_correctness_of_hand_made_dynamics():
    carto = cartography(GOLD, RIGHT)
    np.testing.assert_allclose(carto.confidence, [0.9, 0.5, 0.15])
    np.testing.assert_allclose(carto.variability, [0.0, 0.4, 0.05])  # population std (ddof 0)
    np.testing.assert_allclose(carto.correctness, [1.0, 0.5, 0.0])


def test_leading_member_axes_are_kept_and_correctness_is_nan_without_predictions():
    stacked = np.stack([GOLD, GOLD[::-1]])  # (2 members, 4 epochs, 3 items)
    carto = cartography(stacked)
    assert carto.confidence.shape == (2, 3)
    np.testing.assert_allclose(carto.confidence[1], [0.9, 0.5, 0.15])  # epoch order does not matter
    assert np.isnan(carto.correctness).all()


def test_regions_select_a_third_by_variability_and_by_each_end_of_confidence():
    carto = Cartography(
        confidence=np.array([0.95, 0.9, 0.5, 0.55, 0.1, 0.2]),
        variability=np.array([0.01, 0.02, 0.40, 0.35, 0.05, 0.30]),
        correctness=np.zeros(6),
    )
    masks = region_masks(carto, fraction=1 / 3)  # floor(6 / 3) = 2 items each
    np.testing.assert_array_equal(np.flatnonzero(masks["ambiguous"]), [2, 3])
    np.testing.assert_array_equal(np.flatnonzero(masks["hard-to-learn"]), [4, 5])
    np.testing.assert_array_equal(np.flatnonzero(masks["easy-to-learn"]), [0, 1])
    carto_overlap = Cartography(carto.confidence, np.array([0.01, 0.02, 0.05, 0.03, 0.04, 0.30]), np.zeros(6))
    # item 5 has the top variability and is among the least confident: ambiguous wins; item 4 is the other top one
    labels = regions(carto_overlap, fraction=1 / 3)
    assert list(labels) == ["easy-to-learn", "easy-to-learn", "ambiguous", "other", "hard-to-learn", "ambiguous"]


def test_alignment_ranks_map_coordinates_against_human_entropy():
    human = np.array([0.0, 0.2, 0.6, 1.0])
    carto = Cartography(np.array([0.99, 0.9, 0.7, 0.4]), np.array([0.01, 0.1, 0.2, 0.3]), np.zeros(4))
    rho = alignment(carto, human)
    assert rho["variability"] == pytest.approx(1.0)
    assert rho["one_minus_confidence"] == pytest.approx(1.0)
    assert rho["confidence"] == pytest.approx(-1.0)
    scrambled = Cartography(carto.confidence, np.array([0.3, 0.01, 0.2, 0.1]), np.zeros(4))
    # ranks 4 1 3 2 against 1 2 3 4: rho = 1 - 6 * 14 / (4 * 15)
    assert alignment(scrambled, human)["variability"] == pytest.approx(-0.4)


def test_bad_dynamics_and_fractions_are_refused():
    with pytest.raises(ValueError, match=r"\[0, 1\]"):
        cartography(GOLD + 0.5)
    with pytest.raises(ValueError, match="epochs, items"):
        cartography(np.array([0.5, 0.5]))
    with pytest.raises(ValueError, match="booleans"):
        cartography(GOLD, RIGHT[:2])
    with pytest.raises(ValueError, match="fraction"):
        region_masks(cartography(GOLD), fraction=0.6)
