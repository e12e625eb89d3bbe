"""Profiles of weak rankings: parsing, the pairwise matrix with ties as 1/2, Borda scores, seeded generators."""

from __future__ import annotations

import numpy as np
import pytest

from neurips26.posttrain_voting.profiles import (
    Profile,
    all_strict_rankings,
    borda_scores,
    coval_like,
    impartial_culture,
    mallows,
    pairwise_matrix,
)


def test_pairwise_matrix_counts_ties_as_half_and_weights_voters():
    prof = Profile.from_strings(["A>B>C=D", "B>A=C=D"], counts=[3, 1])
    P = pairwise_matrix(prof)
    assert P[0, 1] == pytest.approx(3 / 4)  # 3 voters A>B, 1 voter B>A
    assert P[2, 3] == pytest.approx(1 / 2)  # C=D for everybody
    assert P[0, 2] == pytest.approx((3 + 0.5) / 4)  # 3 strict, 1 tie
    assert np.allclose(P + P.T, 1) and np.allclose(np.diag(P), 0.5)


def test_borda_scores_of_weak_order_give_half_to_ties():
    assert borda_scores(Profile.from_strings(["A>B=C>D"]).levels).tolist() == [[3, 1.5, 1.5, 0]]


def test_strings_round_trip_and_levels_are_normalised():
    prof = Profile(np.array([[0, 5, 5, 9]]), np.array([2.0]))
    assert prof.to_strings() == ["A>B=C>D"] and prof.levels.tolist() == [[0, 1, 1, 2]]
    again = Profile.from_dict(prof.to_dict())
    assert np.array_equal(again.levels, prof.levels) and np.array_equal(again.counts, prof.counts)


@pytest.mark.parametrize(
    ("rankings", "match"),
    [(["A>B>B"], "exactly once"), (["A>B>E"], "exactly once"), ([], "0 voters")],
)
def test_bad_rankings_are_refused(rankings, match):
    with pytest.raises(ValueError, match=match):
        Profile.from_strings(rankings, m=3)


def test_zero_voters_and_ties_refused_where_strict_is_needed():
    with pytest.raises(ValueError, match="not all zero"):
        Profile.from_strings(["A>B"], counts=[0])
    with pytest.raises(ValueError, match="needs strict rankings"):
        Profile.from_strings(["A=B>C"]).require_strict("maximal_lottery")
    assert Profile.from_strings(["A>B>C"]).require_strict() is not None


def test_all_strict_rankings_are_the_m_factorial_permutations():
    lv = all_strict_rankings(3)
    assert len(lv) == 6 and len({tuple(r) for r in lv}) == 6 and (np.sort(lv, 1) == np.arange(3)).all()


def test_generators_are_seeded_and_shaped():
    a = coval_like(np.random.default_rng(3))
    b = coval_like(np.random.default_rng(3))
    assert a.to_strings() == b.to_strings() and a.m == 4 and a.n_voters == 17
    assert not impartial_culture(50, 5, np.random.default_rng(0)).has_ties


def test_mallows_adjacent_pair_probability_matches_theory():
    # Mallows with m=2: P(center order) = 1 / (1 + phi); phi=0 is the center itself
    prof = mallows(4000, 2, 0.5, np.random.default_rng(1))
    assert pairwise_matrix(prof)[0, 1] == pytest.approx(1 / 1.5, abs=0.025)
    assert pairwise_matrix(mallows(10, 4, 0.0, np.random.default_rng(0), center=[2, 0, 3, 1]))[2, 1] == 1.0
