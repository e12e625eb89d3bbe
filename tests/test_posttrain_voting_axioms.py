"""Axiom checkers on hand-made profiles, and replays of the violation witnesses the searches found."""

from __future__ import annotations

import numpy as np
import pytest

from neurips26.posttrain_voting.axioms import (
    AXIOMS,
    check_commutativity,
    check_mixing_consistency,
    check_monotonicity,
    check_participation,
    check_participation_sd,
    check_reinforcement,
    check_staged_vs_joint,
    lift,
    replay,
)
from neurips26.posttrain_voting.profiles import Profile, coval_like, pairwise_matrix
from neurips26.posttrain_voting.rules import RULES, maximal_lottery

UNIFORM3 = np.full(3, 1 / 3)
# a 3-cycle with margins x = m(A,B) = 1/7, y = m(B,C) = 1/7, z = m(C,A) = 3/7 (7 voters)
CYCLE7 = Profile.from_strings(["A>B>C", "B>C>A", "C>A>B", "C>B>A"], counts=[2, 2, 2, 1])


def test_lift_moves_one_step_in_weak_orders():
    assert lift(np.array([0, 1, 2]), 2).tolist() == [0, 2, 1]  # swap with the candidate above
    assert lift(np.array([0, 1, 1]), 2).tolist() == [0, 2, 1]  # leaves its tie class, alone above it
    assert lift(np.array([1, 0, 1]), 2).tolist() == [2, 0, 1]
    assert lift(np.array([0, 1, 2]), 0) is None


def test_maximal_lottery_violates_monotonicity_on_a_hand_solved_cycle():
    """p ∝ (m(B,C), m(C,A), m(A,B)) = (1, 3, 1)/5; lifting A over B in C>B>A makes m(A,B) = 3/7 and
    p = (1, 3, 3)/7, so A drops from 1/5 to 1/7 (Fishburn's maximal lotteries are not monotone in this sense)."""
    assert np.allclose(maximal_lottery(pairwise_matrix(CYCLE7)), [0.2, 0.6, 0.2])
    lifted = Profile.from_strings(["A>B>C", "B>C>A", "C>A>B"], counts=[2, 2, 3])
    assert np.allclose(maximal_lottery(pairwise_matrix(lifted)), [1 / 7, 3 / 7, 3 / 7])
    assert not check_monotonicity(RULES["maximal_lottery"], CYCLE7).holds


@pytest.mark.parametrize(("beta", "violated"), [(0.02, True), (0.1, False), (1.0, False)])
def test_nlhf_monotonicity_depends_on_beta_on_the_cycle(beta, violated):
    res = check_monotonicity(RULES["nlhf"], CYCLE7, UNIFORM3, beta)
    assert (not res.holds) == violated
    if violated:
        assert res.witness["after"] < res.witness["before"] and replay(res.witness).margin == pytest.approx(res.margin)


@pytest.mark.parametrize("name", ["dpo", "probabilistic_borda", "proportional_borda"])
def test_borda_like_rules_are_monotone_on_random_profiles(name):
    rng = np.random.default_rng(0)
    for _ in range(5):
        ref = rng.dirichlet(np.ones(4))
        for beta in (0.02, 1.0):
            assert check_monotonicity(RULES[name], coval_like(rng), ref, beta).holds


def test_proportional_borda_is_mixing_consistent_and_dpo_is_not():
    rng = np.random.default_rng(1)
    A, B = coval_like(rng), coval_like(rng, n=9)
    ref = np.full(4, 0.25)
    assert check_mixing_consistency(RULES["proportional_borda"], A, B).margin < 1e-12
    res = check_mixing_consistency(RULES["dpo"], A, B, ref, 0.5)
    assert not res.holds and replay(res.witness).holds is False


def test_reinforcement_on_two_cycles_with_equal_outcomes():
    """The cycle and the reversed cycle have different P but every symmetric rule gives uniform on both,
    and on their union (all six rankings): reinforcement holds non-vacuously."""
    A = Profile.from_strings(["A>B>C", "B>C>A", "C>A>B"])
    B = Profile.from_strings(["A>C>B", "C>B>A", "B>A>C"])
    for name in ("dpo", "nlhf", "proportional_borda", "probabilistic_borda"):
        res = check_reinforcement(RULES[name], A, B, UNIFORM3, 0.3)
        assert res.holds and res.margin > -1e-9, name  # premise met (margin not the vacuous negative gap)


def test_dpo_commutes_and_nlhf_does_not():
    rng = np.random.default_rng(2)
    A, B = coval_like(rng), coval_like(rng)
    ref = rng.dirichlet(np.ones(4) * 2)
    assert check_commutativity(RULES["dpo"], A, B, ref, 0.5).margin < 1e-12
    res = check_commutativity(RULES["nlhf"], A, B, ref, 0.5)
    assert not res.holds and res.magnitude > 1e-4
    # staged DPO applies the reward twice, so it differs from joint post-training
    assert not check_staged_vs_joint(RULES["dpo"], A, B, ref, 0.5).holds


def test_commutativity_needs_a_reference_rule():
    with pytest.raises(ValueError, match="takes no reference"):
        check_commutativity(RULES["proportional_borda"], CYCLE7, CYCLE7)


def test_proportional_borda_satisfies_participation_on_random_profiles():
    rng = np.random.default_rng(3)
    for _ in range(10):
        assert check_participation(RULES["proportional_borda"], coval_like(rng)).holds


# Witnesses found by search.hill_climb (seed 0, m=3, uniform reference), replayed here.
def _participation_witness(rule, beta, rankings, counts, voter):
    return {
        "axiom": "participation",
        "rule": rule,
        "beta": beta,
        "ref": [1 / 3, 1 / 3, 1 / 3],
        "profile": {"rankings": rankings, "counts": counts, "m": 3},
        "voter": voter,
    }


WITNESS_DPO_PARTICIPATION = _participation_witness("dpo", 0.5, ["A>B>C", "B>A>C"], [1.0, 5.0], "C>B>A")
WITNESS_SOFTMAX_BORDA_PARTICIPATION = _participation_witness(
    "probabilistic_borda", 0.3, ["A>B>C", "A>C>B"], [1.0, 4.0], "A>C>B"
)


@pytest.mark.parametrize(
    ("witness", "before", "after"),
    [(WITNESS_DPO_PARTICIPATION, 0.961535, 0.935453), (WITNESS_SOFTMAX_BORDA_PARTICIPATION, 1.801785, 1.800649)],
)
def test_participation_witnesses_replay(witness, before, after):
    res = replay(witness)
    assert not res.holds
    assert res.witness["before"] == pytest.approx(before, abs=1e-6) and res.witness["after"] == pytest.approx(
        after, abs=1e-6
    )
    assert replay(witness | {"rule": "proportional_borda"}).holds  # the Borda lottery keeps the voter's utility


def test_sd_participation_on_a_hand_solved_pair_and_the_dpo_witness():
    """Strong SD-participation asks f(N + v) to SD-dominate f(N) for v; the weak form only forbids f(N) strictly
    SD-dominating f(N + v). The DPO witness breaks the strong form, not the weak one; proportional Borda keeps both."""
    strong = replay(WITNESS_DPO_PARTICIPATION | {"axiom": "participation_sd_strong"})
    assert not strong.holds and strong.margin > 1e-3
    top_before, top_after = strong.witness["top_before"], strong.witness["top_after"]
    assert any(b > a for b, a in zip(top_before, top_after))
    assert replay(WITNESS_DPO_PARTICIPATION | {"axiom": "participation_sd_weak"}).holds
    rng = np.random.default_rng(4)
    for _ in range(5):
        profile = coval_like(rng)
        for axiom in ("participation_sd_strong", "participation_sd_weak"):
            assert AXIOMS[axiom].check(RULES["proportional_borda"], profile).holds


class _Fixed:
    """A rule returning fixed lotteries before and after a join (to hand-solve the SD margins)."""

    name, uses_reference = "fixed", False

    def __init__(self, before, after):
        self.before, self.after = np.asarray(before), np.asarray(after)

    def __call__(self, P, ref=None, beta=None):
        return self.before if np.ndim(P) == 2 else np.broadcast_to(self.after, np.shape(P)[:-1])


@pytest.mark.parametrize(
    ("before", "after", "strong_holds", "weak_holds"),
    [
        ([0.5, 0.3, 0.2], [0.6, 0.3, 0.1], True, True),  # after SD-dominates before
        ([0.6, 0.3, 0.1], [0.5, 0.3, 0.2], False, False),  # before strictly SD-dominates after
        ([0.5, 0.1, 0.4], [0.4, 0.4, 0.2], False, True),  # incomparable: only the strong form fails
    ],
)
def test_sd_participation_margins_hand_solved(before, after, strong_holds, weak_holds):
    voter = Profile.from_strings(["A>B>C"]).levels
    rule = _Fixed(before, after)
    assert check_participation_sd(rule, CYCLE7, joiners=voter).holds == strong_holds
    assert check_participation_sd(rule, CYCLE7, joiners=voter, strong=False).holds == weak_holds


def test_staged_vs_joint_compares_at_matched_strength():
    """Two DPO stages at beta give ref exp((r_A + r_B) / beta); on two copies of one profile that is the joint run at
    beta / 2 exactly (the Bradley-Terry reward of A + A is r_A)."""
    rng = np.random.default_rng(5)
    A = coval_like(rng)
    ref = rng.dirichlet(np.ones(4))
    assert check_staged_vs_joint(RULES["dpo"], A, A, ref, 0.5).margin < 1e-9


def test_reinforcement_premise_is_met_by_equal_borda_and_not_by_one_matrix():
    """The two Condorcet cycles have different pairwise matrices and equal Borda scores: DPO (which reads the
    profile only through the Borda scores) gives both the reference, so the premise is met and the axiom holds; a
    pair with one pairwise matrix meets it only trivially and counts as premise not met."""
    A = Profile.from_strings(["A>B>C", "B>C>A", "C>A>B"])
    B = Profile.from_strings(["C>B>A", "A>C>B", "B>A>C"])
    ref = np.array([0.5, 0.3, 0.2])
    res = check_reinforcement(RULES["dpo"], A, B, ref, 0.5)
    assert res.holds and res.margin > -1e-7  # premise met, f(A + B) = f(A)
    assert check_reinforcement(RULES["dpo"], A, A, ref, 0.5).margin == -1.0
