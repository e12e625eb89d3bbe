"""Paper 12 sampling rules: the incremental ratio rule against its full recomputation, stopping,
delta-correctness, per-round cost scaling, censoring, and the hand-solved corner cases."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
from scipy.stats import beta as beta_dist

from neurips26.thresh_mcts import algorithms as alg
from neurips26.thresh_mcts.incremental import IncrementalRatio, leaf_divergence, pairwise_sum
from neurips26.thresh_mcts.instances import reward_tape
from neurips26.thresh_mcts.theory import characteristic_time, divergence, glr_statistic
from neurips26.thresh_mcts.tree import complete_tree, make_tree, value


def random_tree(rng: np.random.Generator, depth: int, b_low: int = 2, b_high: int = 4):
    """A tree of the given depth with random branching in [b_low, b_high] and random MAX/MIN labels;
    some children of the root's subtrees stop early (leaves at several depths)."""
    children, labels = [[]], [None]
    frontier = [(0, 0)]
    while frontier:
        node, d = frontier.pop(0)
        if d == depth or (d >= 1 and rng.random() < 0.15):
            labels[node] = "LEAF"
            continue
        labels[node] = "MAX" if rng.random() < 0.5 else "MIN"
        for _ in range(rng.integers(b_low, b_high + 1)):
            children.append([])
            labels.append(None)
            children[node].append(len(children) - 1)
            frontier.append((len(children) - 1, d + 1))
    return make_tree(children, labels)


def random_problem(seed: int, kind: str):
    rng = np.random.default_rng(seed)
    tree = random_tree(rng, depth=int(rng.integers(2, 4)))
    if kind == "bernoulli":
        mu = rng.uniform(0.2, 0.8, tree.n_leaves)
        theta = 0.5 if seed % 2 else float(np.clip(value(tree, mu) + rng.choice([-1, 1]) * 0.08, 0.05, 0.95))
    else:
        mu = rng.normal(0.0, 0.5, tree.n_leaves)
        theta = value(tree, mu) + rng.choice([-1, 1]) * 0.3
    return tree, mu, theta


def state_after(tree, tape, counts):
    counts = np.asarray(counts, dtype=np.int64)
    sums = np.array([tape[leaf, : counts[leaf]].sum() for leaf in range(tree.n_leaves)])
    return counts, sums


# ---------------------------------------------------------------------------------------------------
# the full DP against theory.py and by hand


def test_leaf_divergence_matches_theory_divergence():
    xs = np.array([0.0, 1e-13, 0.1, 0.3, 0.5, 0.77, 1.0])
    for kind, thetas in (("bernoulli", [0.2, 0.5, 0.9]), ("gaussian", [-1.0, 0.5, 2.0])):
        for theta in thetas:
            got = [leaf_divergence(float(x), theta, kind) for x in xs]
            np.testing.assert_allclose(got, divergence(xs, theta, kind), rtol=1e-12, atol=1e-15)


def test_pairwise_sum_is_the_tournament_order():
    vals = [0.1, 0.2, 0.3, 1e16, -1e16]
    assert pairwise_sum(vals) == ((0.1 + 0.2) + (0.3 + 1e16)) + (-1e16 + 0.0)
    assert pairwise_sum([2.5]) == 2.5 and pairwise_sum([1.0, math.inf]) == math.inf


@pytest.mark.parametrize("kind", ["bernoulli", "gaussian"])
def test_dp_matches_theory_weights_and_glr(kind):
    rng = np.random.default_rng(3)
    checked = 0
    for seed in range(30):
        tree, mu, theta = random_problem(seed, kind)
        counts = rng.integers(1, 40, tree.n_leaves)
        k = tree.n_leaves
        mu_hat = rng.uniform(0.05, 0.95, k) if kind == "bernoulli" else rng.normal(0, 1, k)
        if np.any(np.abs(mu_hat - theta) < 1e-9):
            continue
        dp = alg.certificate_dp(tree, counts, mu_hat * counts, theta, kind)
        cert = characteristic_time(tree, mu_hat, theta, kind)
        np.testing.assert_allclose(dp.t_star[0], cert.t_star, rtol=1e-10)
        np.testing.assert_allclose(alg.certificate_weights(tree, dp), cert.weights, rtol=1e-9, atol=1e-12)
        z, side = glr_statistic(tree, mu_hat, counts, theta, kind)
        np.testing.assert_allclose(dp.z[0], z, rtol=1e-10)
        assert dp.side[0] == side
        # the ratio rule's leaf is argmin N / w* over the support (Gaussian: no exact ties)
        if kind == "gaussian":
            w = cert.weights
            ratio = np.where(w > 0, counts / np.where(w > 0, w, 1.0), np.inf)
            assert dp.choice == int(np.argmin(ratio))
        checked += 1
    assert checked >= 25


def test_hand_solved_two_leaf_trees():
    # MIN over two leaves above theta: forall-node, T* = 1/d1 + 1/d2, ratio pulls the smaller N d
    d = [divergence(m, 0.5, "bernoulli") for m in (0.7, 0.9)]
    tree_min = make_tree([[1, 2], [], []], ["MIN", "LEAF", "LEAF"])
    dp = alg.certificate_dp(tree_min, [10, 3], [7.0, 2.7], 0.5, "bernoulli")
    assert dp.t_star[0] == pytest.approx(1 / d[0] + 1 / d[1])
    assert dp.choice == int(np.argmin([10 * d[0], 3 * d[1]]))
    assert dp.z[0] == pytest.approx(min(10 * d[0], 3 * d[1]))
    # MAX over the same leaves: exists-node, everything on the leaf further from theta, Z adds both
    tree_max = make_tree([[1, 2], [], []], ["MAX", "LEAF", "LEAF"])
    dp = alg.certificate_dp(tree_max, [10, 3], [7.0, 2.7], 0.5, "bernoulli")
    assert dp.t_star[0] == pytest.approx(1 / d[1]) and dp.choice == 1
    np.testing.assert_allclose(alg.certificate_weights(tree_max, dp), [0.0, 1.0])
    assert dp.z[0] == pytest.approx(10 * d[0] + 3 * d[1])


def test_leaf_on_the_threshold_is_handled_without_division_by_zero():
    # MIN over leaves 0.5 (= theta: d = 0) and 0.5 (d = 0) and 0.8: T* = inf, weights on the d = 0 leaves
    tree = make_tree([[1, 2, 3], [], [], []], ["MIN", "LEAF", "LEAF", "LEAF"])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        dp = alg.certificate_dp(tree, [4, 2, 5], [2.0, 1.0, 4.0], 0.5, "bernoulli")
        w = alg.certificate_weights(tree, dp)
    assert math.isinf(dp.t_star[0]) and dp.z[0] == 0.0 and dp.side[0]
    np.testing.assert_allclose(w, [0.5, 0.5, 0.0])
    assert dp.choice == 1  # zero evidence; the less pulled of the two
    inc = IncrementalRatio(tree, 0.5, "bernoulli", [4, 2, 5], [2.0, 1.0, 4.0])
    assert inc.choice == 1 and inc.root_z == 0.0 and math.isinf(inc.t_star[0])
    # a run through such states ends with the right answer
    mu = np.array([0.5, 0.7, 0.8])
    tree2 = make_tree([[1, 2, 3], [], [], []], ["MAX", "LEAF", "LEAF", "LEAF"])
    res = alg.run(tree2, 0.6, "bernoulli", reward_tape(mu, "bernoulli", 5000, 0), 0.1, "ratio_incremental", 5000)
    assert res.answer is True


# ---------------------------------------------------------------------------------------------------
# the incremental implementation


@pytest.mark.parametrize("kind", ["bernoulli", "gaussian"])
def test_incremental_state_equals_full_recomputation_after_every_pull(kind):
    side_changes = 0
    for seed in range(4):
        tree, mu, theta = random_problem(100 + seed, kind)
        tape = reward_tape(mu, kind, 400, seed)
        rng = np.random.default_rng(seed)
        counts, sums = state_after(tree, tape, np.ones(tree.n_leaves))
        inc = IncrementalRatio(tree, theta, kind, counts, sums)
        previous = inc.snapshot()["side"]
        for _ in range(150):
            leaf = int(rng.integers(tree.n_leaves))
            inc.update(leaf, float(tape[leaf, counts[leaf]]))
            counts[leaf] += 1
            full = alg.certificate_dp(tree, counts, np.array(inc.sums), theta, kind)
            snap = inc.snapshot()
            np.testing.assert_array_equal(snap["side"], full.side)
            np.testing.assert_array_equal(snap["t_star"], full.t_star)  # bitwise, inf included
            np.testing.assert_array_equal(snap["z"], full.z)
            np.testing.assert_array_equal(snap["choice"], [e[2] for e in full.e])
            assert inc.least_pulled == min((c, leaf) for leaf, c in enumerate(counts.tolist()))
            internal = [c for c in range(tree.n_nodes) if tree.children[c]]
            side_changes += int((snap["side"] != previous)[internal].any())
            previous = snap["side"]
    assert side_changes > 0  # the walk did exercise internal nodes changing sides


def test_incremental_and_full_ratio_pick_identical_leaves():
    """>= 20 random instances (depth 2-3, branching 2-4, both kinds): the whole pull sequence, the
    stopping time and the answer are identical; and over 500 more rounds without stopping."""
    n_identical, tie_rich, rounds = 0, 0, 0
    for seed in range(24):
        kind = "bernoulli" if seed % 3 else "gaussian"
        tree, mu, theta = random_problem(seed, kind)
        tape = reward_tape(mu, kind, 3000, 1000 + seed)
        for stopping, t_max in ((True, 3000), (False, tree.n_leaves + 500)):
            full = alg.run(tree, theta, kind, tape, 0.1, "ratio", t_max, record=True, stopping=stopping)
            inc = alg.run(tree, theta, kind, tape, 0.1, "ratio_incremental", t_max, record=True, stopping=stopping)
            assert (full.tau, full.answer, full.forced) == (inc.tau, inc.answer, inc.forced)
            np.testing.assert_array_equal(full.pulls, inc.pulls)
            np.testing.assert_array_equal(full.counts, inc.counts)
            rounds += inc.rounds
        n_identical += 1
        tie_rich += kind == "bernoulli" and theta == 0.5
    assert n_identical >= 20 and tie_rich >= 5 and rounds >= 24 * 500


# ---------------------------------------------------------------------------------------------------
# runs


EASY_MU = np.array([0.85, 0.8, 0.2, 0.9])  # MAX(MIN(0.85, 0.8), MIN(0.2, 0.9)) = 0.8 > theta = 0.5
EASY_TREE = complete_tree(2, 2, "MAX")


@pytest.mark.parametrize("rule", sorted(alg.RULES))
def test_every_rule_stops_with_the_right_answer_on_an_easy_instance(rule):
    tape = reward_tape(EASY_MU, "bernoulli", 5000, 7)
    res = alg.run(EASY_TREE, 0.5, "bernoulli", tape, 0.05, rule, 5000, mu_true=EASY_MU)
    assert not res.censored and res.answer is True
    assert res.tau == res.counts.sum() < 1000 and res.counts.min() >= 1
    # and below the threshold: MIN root
    tree = complete_tree(2, 2, "MIN")
    mu = 1.0 - EASY_MU  # MIN(MAX(0.15, 0.2), MAX(0.8, 0.1)) = 0.2 < 0.5
    res = alg.run(tree, 0.5, "bernoulli", reward_tape(mu, "bernoulli", 5000, 8), 0.05, rule, 5000, mu_true=mu)
    assert not res.censored and res.answer is False


@pytest.mark.parametrize("rule", ["ratio_incremental", "d_tracking"])
def test_error_rate_is_below_delta(rule):
    """delta-correctness smoke check: 100 runs of a gap-0.1 instance at delta = 0.1; the one-sided 95%
    Clopper-Pearson lower bound of the error rate must not exceed delta (it is far below in practice)."""
    tree = complete_tree(2, 2, "MAX")
    mu = np.array([0.62, 0.7, 0.45, 0.8])  # V = 0.62, theta = 0.52
    errors = decided = 0
    for run_id in range(100):
        tape = reward_tape(mu, "bernoulli", 20000, 10_000 + run_id)
        res = alg.run(tree, 0.52, "bernoulli", tape, 0.1, rule, 20000)
        if not res.censored:
            decided += 1
            errors += res.answer is not True
    assert decided >= 95
    lower = beta_dist.ppf(0.05, errors, decided - errors + 1) if errors else 0.0
    assert lower <= 0.1, (errors, decided)


def test_per_round_cost_is_linear_for_d_tracking_and_logarithmic_for_incremental_ratio():
    """ops per round on complete ternary trees, K = 9..729 (depth 2..6), 150 rounds without stopping:
    log-log slope >= 0.9 for the full DP, <= 0.3 for the incremental rule (pure O(log K) gives ~0.25)."""
    ks, per_round = [], {"d_tracking": [], "ratio_incremental": []}
    for depth in range(2, 7):
        tree = complete_tree(depth, 3, "MAX")
        mu = np.random.default_rng(depth).uniform(0.2, 0.8, tree.n_leaves)
        tape = reward_tape(mu, "bernoulli", 400, depth)
        ks.append(tree.n_leaves)
        for rule in per_round:
            res = alg.run(tree, 0.5, "bernoulli", tape, 0.1, rule, tree.n_leaves + 150, stopping=False)
            assert res.censored and res.rounds == 150
            per_round[rule].append(res.ops_per_round)
    slope = {r: np.polyfit(np.log(ks), np.log(v), 1)[0] for r, v in per_round.items()}
    assert slope["d_tracking"] >= 0.9, slope
    assert slope["ratio_incremental"] <= 0.3, slope
    assert per_round["ratio_incremental"][-1] < per_round["d_tracking"][-1] / 20


def test_censoring_at_t_max():
    tree = complete_tree(2, 3, "MAX")
    mu = np.full(9, 0.5)
    mu[0] = 0.52  # V = 0.5 vs theta 0.51: hopeless within 40 pulls
    tape = reward_tape(mu, "bernoulli", 100, 0)
    for rule in alg.RULES:
        res = alg.run(tree, 0.51, "bernoulli", tape, 0.01, rule, 40, mu_true=mu)
        assert res.censored and res.answer is None
        assert res.tau == 40 == res.counts.sum()


def test_uniform_counts_differ_by_at_most_one():
    tree = complete_tree(2, 3, "MIN")
    mu = np.random.default_rng(1).uniform(0.3, 0.7, 9)
    tape = reward_tape(mu, "gaussian", 2000, 1)
    for t_max in (9, 10, 50, 301):
        res = alg.run(tree, 0.5, "gaussian", tape, 0.1, "uniform", t_max, stopping=False, record=True)
        assert res.counts.max() - res.counts.min() <= 1 and res.tau == t_max
        np.testing.assert_array_equal(res.pulls, np.arange(t_max) % 9)  # round robin


def test_forced_exploration_and_tape_errors():
    tree = complete_tree(1, 3, "MAX")
    mu = np.array([0.9, 0.1, 0.1])
    res = alg.run(
        tree, 0.5, "bernoulli", reward_tape(mu, "bernoulli", 10_000, 0), 0.1, "d_tracking", 2000, stopping=False
    )
    t = res.tau
    assert res.forced > 0 and res.counts.min() >= math.sqrt(t) - 3 / 2 - 1
    with pytest.raises(ValueError, match="tape too short"):
        alg.run(tree, 0.5, "bernoulli", reward_tape(mu, "bernoulli", 5, 0), 0.1, "uniform", 100, stopping=False)
    with pytest.raises(ValueError, match="oracle rule needs mu_true"):
        alg.run(tree, 0.5, "bernoulli", reward_tape(mu, "bernoulli", 50, 0), 0.1, "oracle", 50)
    with pytest.raises(ValueError, match="unknown rule"):
        alg.run(tree, 0.5, "bernoulli", reward_tape(mu, "bernoulli", 50, 0), 0.1, "ucb", 50)
    with pytest.raises(ValueError, match="delta"):
        alg.run(tree, 0.5, "bernoulli", reward_tape(mu, "bernoulli", 50, 0), 0.7, "ratio", 50)
    with pytest.raises(ValueError, match="t_max"):
        alg.run(tree, 0.5, "bernoulli", reward_tape(mu, "bernoulli", 50, 0), 0.1, "ratio", 2)
