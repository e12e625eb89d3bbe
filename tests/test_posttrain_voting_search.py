"""Random and adversarial violation search, and the NLHF monotonicity bound (implicit derivative, thresholds)."""

from __future__ import annotations

import numpy as np
import pytest

from neurips26.posttrain_voting import bounds
from neurips26.posttrain_voting.axioms import replay
from neurips26.posttrain_voting.nlhf import nlhf_equilibrium
from neurips26.posttrain_voting.profiles import Profile
from neurips26.posttrain_voting.rules import RULES
from neurips26.posttrain_voting.search import hill_climb, random_search

UNIFORM3 = np.full(3, 1 / 3)
CYCLE7 = Profile.from_strings(["A>B>C", "B>C>A", "C>A>B", "C>B>A"], counts=[2, 2, 2, 1])


def test_random_search_counts_mixing_violations_of_dpo_not_of_proportional_borda():
    dpo = random_search(RULES["dpo"], "mixing_consistency", 0.5, np.random.default_rng(0), trials=6)
    borda = random_search(RULES["proportional_borda"], "mixing_consistency", None, np.random.default_rng(0), trials=6)
    assert dpo.frequency == 1.0 and dpo.max_magnitude >= dpo.mean_magnitude > 1e-3
    assert not replay(dpo.witness).holds
    assert borda.violations == 0 and borda.witness is None


def test_hill_climb_finds_a_replayable_dpo_participation_violation():
    result, profiles = hill_climb(RULES["dpo"], "participation", 0.5, np.random.default_rng(0), steps=60, restarts=2)
    assert not result.holds and result.magnitude > 1e-3
    assert replay(result.witness).margin == pytest.approx(result.margin, rel=1e-9)
    assert result.witness["profile"] == profiles[0].to_dict()


def test_lift_sensitivity_matches_finite_difference():
    P = np.array([[0.5, 0.7, 0.2], [0.3, 0.5, 0.9], [0.8, 0.1, 0.5]])
    ref = np.array([0.5, 0.3, 0.2])
    h = 1e-6
    up, down = P.copy(), P.copy()
    up[0, 1], up[1, 0], down[0, 1], down[1, 0] = 0.7 + h, 0.3 - h, 0.7 - h, 0.3 + h
    for beta in (0.05, 0.5):
        fd = (nlhf_equilibrium(up, ref, beta).policy[0] - nlhf_equilibrium(down, ref, beta).policy[0]) / (2 * h)
        assert bounds.lift_sensitivity(P, ref, beta, 0, 1) == pytest.approx(fd, rel=1e-5)


def test_sensitivity_positive_for_large_beta_and_threshold_is_a_sign_change():
    P = bounds.cycle_pairwise(0.5, 0.5, 0.1)
    t = bounds.sensitivity_threshold(P, UNIFORM3, 0, 1)
    assert 0.05 < t < 0.2
    assert (
        bounds.lift_sensitivity(P, UNIFORM3, t * 0.99, 0, 1) < 0 < bounds.lift_sensitivity(P, UNIFORM3, t * 1.01, 0, 1)
    )
    assert bounds.lift_sensitivity(P, UNIFORM3, 5.0, 0, 1) > 0


def test_discrete_threshold_separates_violating_and_monotone_betas():
    t = bounds.discrete_threshold(CYCLE7, UNIFORM3)
    assert 0.02 < t < 0.1  # the cycle witness violates at 0.02 and not at 0.1 (axioms tests)
    assert not replay(_mono_witness(t * 0.9)).holds


def _mono_witness(beta):
    return {
        "axiom": "monotonicity",
        "rule": "nlhf",
        "beta": beta,
        "ref": UNIFORM3.tolist(),
        "profile": CYCLE7.to_dict(),
    }


def test_the_old_bound_matrix_is_unrealisable_and_the_condorcet_cycle_is_realisable():
    assert not bounds.is_realisable(bounds.cycle_pairwise(0.5, 0.5, 0.5))  # every voter A>B, B>C and C>A
    assert bounds.is_realisable(bounds.cycle_pairwise(1 / 6, 1 / 6, 1 / 6))  # the Condorcet profile


def test_realisable_bound_is_one_eighth_from_random_starts_and_its_matrix_is_realisable():
    """Weights on strict rankings (never a free matrix), random starts, a wide grid: 1/8 within the bisection's
    resolution, and the witness's matrix is a mixture of rankings."""
    grid = np.geomspace(1e-3, 10.0, 9)
    value, witness = bounds.realisable_bound(3, np.random.default_rng(0), 3, 60, grid, 6)
    assert 0.118 < value <= 0.126 and witness["upper"] >= 0.125
    assert bounds.is_realisable(witness["P"])
    with pytest.raises(ValueError, match="top of the beta grid"):
        bounds.realisable_bound(3, np.random.default_rng(0), 2, 30, np.geomspace(1e-3, 0.1, 4), 0)


def test_directed_search_finds_a_certified_violation_below_one_eighth_and_none_above():
    cycle = Profile.from_strings(["A>B>C", "B>C>A", "C>A>B", "B>A>C"], [30, 30, 30, 1])
    refs = [[0.78, 0.01, 0.21], [0.1311, 0.0009, 0.868]]
    below, profile, ref = bounds.directed_search([cycle], refs, 0.95 / 8, 60, 1, 1e-7)
    assert below > 1e-7
    assert not replay({"axiom": "monotonicity", "rule": "nlhf", "beta": 0.95 / 8, "ref": ref.tolist(),
                       "profile": profile.to_dict()}).holds  # fmt: skip
    above, _, _ = bounds.directed_search([cycle], refs, 1.05 / 8, 60, 1, 1e-7)
    assert above <= 1e-7
