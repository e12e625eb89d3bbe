"""Paper 06: exact Shapley values against brute-force enumeration of player orders, the Shapley axioms
(efficiency, symmetry, null player, additivity), Monte Carlo convergence, the baselines, mask checks, and the
redundancy property of a duplicated feature under the plug-in estimator (claim C3)."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from neurips26.fairness_audit.coalitions import coalition_values, value_table
from neurips26.fairness_audit.shapley import (
    MAX_EXACT_PLAYERS,
    exact_shapley,
    leave_one_out,
    monte_carlo_shapley,
    singletons,
    validate_masks,
)


def random_game(d, seed=0):
    values = np.random.default_rng(seed).normal(size=1 << d)
    values[0] = 0.0
    return values


def brute_force_shapley(values, d):
    """Average marginal contribution over all d! orders."""
    phi = np.zeros(d)
    orders = list(itertools.permutations(range(d)))
    for order in orders:
        mask = 0
        for player in order:
            phi[player] += values[mask | 1 << player] - values[mask]
            mask |= 1 << player
    return phi / len(orders)


def game_from(function, d):
    return np.array([function(frozenset(i for i in range(d) if m >> i & 1)) for m in range(1 << d)])


def test_exact_matches_enumeration_of_all_24_orders():
    values = random_game(4, seed=1)
    np.testing.assert_allclose(exact_shapley(values), brute_force_shapley(values, 4), rtol=0, atol=1e-12)


@pytest.mark.parametrize("d", [1, 2, 5, 8, 12])
def test_efficiency_holds_to_round_off(d):
    values = random_game(d, seed=d)
    values[0] = 0.7  # mu(empty) need not be 0 for the identity
    assert exact_shapley(values).sum() == pytest.approx(values[-1] - values[0], rel=1e-12, abs=1e-12)


def test_symmetric_players_are_equal_and_null_players_get_zero():
    # players 0 and 1 are interchangeable, player 3 never changes the value
    weights = np.array([1.0, 1.0, 0.3, 0.0])
    values = game_from(
        lambda s: np.sqrt(sum(weights[i] for i in s)) + 0.5 * (0 in s and 2 in s) + 0.5 * (1 in s and 2 in s), 4
    )
    phi = exact_shapley(values)
    assert phi[0] == pytest.approx(phi[1]) and phi[3] == pytest.approx(0.0, abs=1e-15)
    assert phi[2] > 0


def test_additive_game_gives_each_player_its_own_value():
    own = np.array([0.3, -0.1, 0.0, 1.2, 0.05])
    values = game_from(lambda s: sum(own[i] for i in s), 5)
    np.testing.assert_allclose(exact_shapley(values), own, atol=1e-14)
    np.testing.assert_allclose(leave_one_out(values), own, atol=1e-14)
    np.testing.assert_allclose(singletons(values), own, atol=1e-14)


def test_baselines_by_hand():
    values = np.array([0.0, 1.0, 2.0, 4.0])  # mu(1) = 1, mu(2) = 2, mu(12) = 4
    np.testing.assert_allclose(leave_one_out(values), [2.0, 3.0])
    np.testing.assert_allclose(singletons(values), [1.0, 2.0])
    np.testing.assert_allclose(exact_shapley(values), [1.5, 2.5])


def test_monte_carlo_converges_to_exact_within_a_few_standard_errors():
    d = 6
    values = random_game(d, seed=3)
    exact = exact_shapley(values)
    estimate = monte_carlo_shapley(values, d, n_permutations=3000, seed=0)
    z = np.abs(estimate.phi - exact) / estimate.se
    assert z.max() < 4, z
    assert estimate.se.max() < 0.05
    again = monte_carlo_shapley(values, d, n_permutations=12_000, seed=1)
    assert np.abs(again.phi - exact).max() < np.abs(estimate.phi - exact).max() + 2 * estimate.se.max()


def test_monte_carlo_evaluates_each_coalition_once_from_any_source():
    d = 5
    values = random_game(d, seed=4)
    calls = []

    def value_of(mask):
        calls.append(mask)
        return values[mask]

    by_callable = monte_carlo_shapley(value_of, d, n_permutations=200, seed=2)
    assert len(calls) == len(set(calls)) == len(by_callable.cache)
    by_mapping = monte_carlo_shapley({m: v for m, v in enumerate(values)}, d, n_permutations=200, seed=2)
    np.testing.assert_array_equal(by_callable.phi, by_mapping.phi)
    calls.clear()
    monte_carlo_shapley(value_of, d, n_permutations=200, seed=2, cache=by_callable.cache)
    assert calls == []  # all cached
    # every sampled order's marginals add up to mu(full) - mu(empty), so the estimate is efficient too
    assert by_callable.phi.sum() == pytest.approx(values[-1] - values[0], abs=1e-12)


def test_bad_games_and_masks_are_refused():
    with pytest.raises(ValueError, match=f"d <= {MAX_EXACT_PLAYERS} players, got d=13"):
        exact_shapley(np.zeros(1 << 13))
    with pytest.raises(ValueError, match="2\\^d entries"):
        exact_shapley(np.zeros(6))
    with pytest.raises(ValueError, match="NaN"):
        exact_shapley(np.array([0.0, np.nan]))
    with pytest.raises(ValueError, match=r"coalition mask 16 out of range \[0, 15\] for d=4"):
        validate_masks([0, 3, 16], 4)
    with pytest.raises(ValueError, match="coalition mask -1"):
        validate_masks([-1], 4)
    with pytest.raises(ValueError, match="must be integers"):
        validate_masks([0.5], 4)
    with pytest.raises(ValueError, match="n_permutations"):
        monte_carlo_shapley(random_game(2), 2, n_permutations=1)


def test_duplicated_feature_splits_its_share_under_the_plugin_estimator():
    """Claim C3: with X_4 an exact copy of X_1, phi_1 = phi_4 and phi_1 + phi_4 is close to phi_1 of the game
    without the copy. Plug-in with shared bins makes mu(S + copy) = mu(S) exactly whenever X_1 is in S."""
    rng = np.random.default_rng(0)
    n = 3000
    a = rng.integers(0, 2, n)
    y = (rng.random(n) < 0.3 + 0.4 * a).astype(int)
    x1, x2, x3 = a + 0.5 * y + rng.normal(size=n), y + rng.normal(size=n), 0.5 * a + rng.normal(size=n)
    measures = ["B_SP", "B_EO", "uniA_EO"]
    original = coalition_values([x1, x2, x3], a, y, measures, "plugin", seed=0)
    copied = coalition_values([x1, x2, x3, x1.copy()], a, y, measures, "plugin", seed=0)
    errors = {}
    for measure in measures:
        before, after = value_table(original, measure, 3), value_table(copied, measure, 4)
        with_1 = [m for m in range(8) if m & 1]
        np.testing.assert_array_equal(after[[m | 8 for m in with_1]], after[with_1])  # the copy adds nothing
        np.testing.assert_array_equal(after[8 | np.arange(8)][[0, 2, 4, 6]], after[[1, 3, 5, 7]])  # copy = x1
        phi_before, phi_after = exact_shapley(before), exact_shapley(after)
        assert phi_after[0] == pytest.approx(phi_after[3], rel=1e-12)
        errors[measure] = abs(phi_after[0] + phi_after[3] - phi_before[0]) / phi_before[0]
    print("C3 relative error per measure:", {k: round(float(v), 4) for k, v in errors.items()})
    assert max(errors.values()) < 0.1, errors
