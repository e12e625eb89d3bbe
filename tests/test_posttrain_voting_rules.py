"""The probabilistic voting rules on hand-solved profiles, pref_voting's documented example, Brandl, Brandt and
Seedig's consistency results for maximal lotteries on explicit profiles, and bad inputs."""

from __future__ import annotations

import numpy as np
import pytest

from neurips26.posttrain_voting.profiles import Profile, coval_like, pairwise_matrix
from neurips26.posttrain_voting.rules import (
    RULES,
    bradley_terry_reward,
    dpo,
    dpo_by_loss,
    maximal_lottery,
    maximal_lottery_unique,
    probabilistic_borda,
    proportional_borda,
    rlhf_bt,
)

CYCLE = pairwise_matrix(Profile.from_strings(["A>B>C", "B>C>A", "C>A>B"]))
# pref_voting README (voting-tools/pref_voting, README.md "Profiles and Voting Methods", commit bd92589):
# rankings [(0,1,2,3),(2,3,1,0),(3,1,2,0),(1,2,0,3),(1,3,2,0)], rcounts [5,3,2,4,3]
README = Profile.from_strings(["A>B>C>D", "C>D>B>A", "D>B>C>A", "B>C>A>D", "B>D>C>A"], counts=[5, 3, 2, 4, 3])


def test_proportional_borda_on_pref_voting_readme_profile():
    """Hand-computed Borda scores (candidates ranked below) 19, 38, 27, 18 of 102, as pref_voting's pr_borda
    (Holliday and Pacuit, pref_voting.probabilistic_methods.pr_borda) defines them for the README profile."""
    assert np.allclose(proportional_borda(pairwise_matrix(README)), np.array([19, 38, 27, 18]) / 102)


def test_maximal_lottery_picks_the_condorcet_winner_of_readme_profile():
    """B beats A 12-5, C 14-3, D 12-5 in the pref_voting README profile: the maximal lottery is B for sure."""
    assert np.allclose(maximal_lottery(pairwise_matrix(README)), [0, 1, 0, 0], atol=1e-9)


def test_maximal_lottery_of_cycles():
    assert np.allclose(maximal_lottery(CYCLE), [1 / 3] * 3)
    # margins x=m(A,B)=3/5, y=m(B,C)=1/5, z=m(C,A)=1/5 (as shares): p ∝ (y, z, x) = (1, 1, 3) / 5
    P = np.array([[0.5, 0.8, 0.4], [0.2, 0.5, 0.6], [0.6, 0.4, 0.5]])
    assert np.allclose(maximal_lottery(P), [0.2, 0.2, 0.6])


def test_bradley_terry_two_candidates_is_the_log_odds():
    P = np.array([[0.5, 0.8], [0.2, 0.5]])
    r = bradley_terry_reward(P, ridge=1e-12)
    assert r[0] - r[1] == pytest.approx(np.log(4), abs=1e-8) and r.sum() == pytest.approx(0)


def test_dpo_closed_form_on_two_candidates_and_uniform_on_cycle():
    P = np.array([[0.5, 0.8], [0.2, 0.5]])
    ref = np.array([0.25, 0.75])
    beta = 0.5
    expect = ref * np.array([4.0 ** (1 / (2 * beta)), 4.0 ** (-1 / (2 * beta))])
    assert np.allclose(dpo(P, ref, beta, ridge=1e-12), expect / expect.sum(), atol=1e-7)
    ref3 = np.array([0.2, 0.3, 0.5])
    assert np.allclose(dpo(CYCLE, ref3, 0.1), ref3)  # symmetric cycle: equal BT rewards, policy = reference


def test_rlhf_with_bt_reward_equals_dpo_at_population_level():
    """Check, not claim: KL-regularised RLHF solved numerically equals DPO's closed form."""
    rng = np.random.default_rng(0)
    P = np.stack([pairwise_matrix(coval_like(rng)) for _ in range(4)])
    ref = rng.dirichlet(np.ones(4), size=4)
    for beta in (0.1, 1.0):
        assert np.abs(rlhf_bt(P, ref, beta) - dpo(P, ref, beta)).max() < 1e-6


def test_probabilistic_borda_limits():
    P = pairwise_matrix(README)
    ref = np.array([0.1, 0.2, 0.3, 0.4])
    assert np.allclose(probabilistic_borda(P, ref, 1e6), ref, atol=1e-6)
    assert np.argmax(probabilistic_borda(P, ref, 1e-3)) == 1  # Borda winner B


def test_every_rule_returns_lotteries_batched():
    rng = np.random.default_rng(1)
    P = np.stack([pairwise_matrix(coval_like(rng)) for _ in range(3)])
    ref = rng.dirichlet(np.ones(4), size=3)
    for rule in RULES.values():
        out = rule(P, ref, 0.3)
        assert out.shape == (3, 4) and np.allclose(out.sum(-1), 1) and (out >= -1e-12).all(), rule.name


@pytest.mark.parametrize("name", ["dpo", "rlhf_bt", "nlhf", "probabilistic_borda"])
def test_reference_rules_refuse_bad_beta_and_references(name):
    rule = RULES[name]
    ref = np.full(3, 1 / 3)
    for beta in (0.0, -1.0, float("nan")):
        with pytest.raises(ValueError, match="beta"):
            rule(CYCLE, ref, beta)
    with pytest.raises(ValueError, match="zeros where the rule needs full support"):
        rule(CYCLE, np.array([0.5, 0.5, 0.0]), 0.1)
    with pytest.raises(ValueError, match="sum to 1"):
        rule(CYCLE, np.array([0.5, 0.5, 0.5]), 0.1)


def test_bad_pairwise_matrix_refused():
    with pytest.raises(ValueError, match=r"P\[a, b\] \+ P\[b, a\] = 1"):
        proportional_borda(np.array([[0.5, 0.9], [0.9, 0.5]]))


def test_dpo_loss_minimiser_equals_the_closed_form():
    rng = np.random.default_rng(7)
    for beta in (0.1, 1.0):
        P = pairwise_matrix(coval_like(rng))
        ref = rng.dirichlet(np.ones(4))
        assert np.abs(dpo_by_loss(P, ref, beta) - dpo(P, ref, beta)).max() < 1e-6


def test_maximal_lottery_uniqueness_is_detected():
    assert maximal_lottery_unique(pairwise_matrix(Profile.from_strings(["A>B>C", "B>C>A", "C>A>B"])))
    assert not maximal_lottery_unique(pairwise_matrix(Profile.from_strings(["A>B>C", "B>A>C"])))  # A, B tied


def test_maximal_lotteries_are_composition_consistent_on_a_cloned_condorcet_cycle():
    """Brandl, Brandt and Seedig (2016), "Consistent probabilistic social choice", Econometrica 84(5): maximal
    lotteries are composition-consistent (their main theorem: the only rule that is both population- and
    composition-consistent): a decomposable clone set gets the compressed profile's probability, split by the clone
    set's own maximal lottery. The cycle a>b>c, b>c>a, c>a>b with a cloned as a1 > a2 in every ranking (A = a1,
    B = a2, C = b, D = c): the compressed cycle's lottery is uniform and a1 beats a2 unanimously, so
    (1/3, 0, 1/3, 1/3)."""
    cloned = Profile.from_strings(["A>B>C>D", "C>D>A>B", "D>A>B>C"])
    P = pairwise_matrix(cloned)
    assert maximal_lottery_unique(P)
    assert np.allclose(maximal_lottery(P), [1 / 3, 0, 1 / 3, 1 / 3], atol=1e-9)


def test_maximal_lotteries_are_population_consistent_on_two_explicit_electorates():
    """Brandl, Brandt and Seedig (2016), population-consistency: if two disjoint electorates have a lottery in
    common, the union's lotteries are the common ones. Electorate X (2, 1, 2 voters on the three cyclic rankings:
    margins A>B 3, B>C 1, C>A 1) and electorate Y (4, 2, 4 on the cyclic rankings and three voters each on A>B>C and
    C>B>A, which cancel) both have the unique maximal lottery (1/5, 1/5, 3/5) (margins x, y, z of the cycle give p
    proportional to (y, z, x)); so has their union."""
    x = Profile.from_strings(["A>B>C", "B>C>A", "C>A>B"], counts=[2, 1, 2])
    y = Profile.from_strings(["A>B>C", "B>C>A", "C>A>B", "C>B>A"], counts=[4 + 3, 2, 4, 3])
    union = Profile.from_strings(["A>B>C", "B>C>A", "C>A>B", "C>B>A"], counts=[2 + 7, 1 + 2, 2 + 4, 3])
    for profile in (x, y, union):
        P = pairwise_matrix(profile)
        assert maximal_lottery_unique(P)
        assert np.allclose(maximal_lottery(P), [0.2, 0.2, 0.6], atol=1e-9)
