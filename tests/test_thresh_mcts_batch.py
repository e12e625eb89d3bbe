"""Paper 12: the numpy batch of runs (``thresh_mcts.batch.run_batch``) against the scalar reference
``algorithms.run``, run by run: same tau, answer, censoring, counts (and forced pulls, rounds)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from neurips26.thresh_mcts import algorithms as alg
from neurips26.thresh_mcts.batch import BATCH_RULES, run_batch
from neurips26.thresh_mcts.batch.layout import Layout, divergences
from neurips26.thresh_mcts.batch.lucb import kl_bounds
from neurips26.thresh_mcts.batch.track_and_stop import TaS
from neurips26.thresh_mcts.incremental import leaf_divergence
from neurips26.thresh_mcts.instances import reward_tape
from neurips26.thresh_mcts.tree import complete_tree, make_tree, value

N_INSTANCES = 10
R = 8
T_MAX = 400
DELTAS = np.array([0.1, 0.3] * (R // 2))  # one batch, two confidence levels


def random_tree(rng: np.random.Generator, depth: int):
    """Random MAX/MIN labels, branching 2-4, some leaves above the last level (so some levels list
    children out of min-leaf order)."""
    children, labels = [[]], [None]
    frontier = [(0, 0)]
    while frontier:
        node, d = frontier.pop(0)
        if d == depth or (d >= 1 and rng.random() < 0.2):
            labels[node] = "LEAF"
            continue
        labels[node] = "MAX" if rng.random() < 0.5 else "MIN"
        for _ in range(rng.integers(2, 5)):
            children.append([])
            labels.append(None)
            children[node].append(len(children) - 1)
            frontier.append((len(children) - 1, d + 1))
    return make_tree(children, labels)


def instance(i: int):
    """Instance i: Bernoulli for even i (theta = 0.5 for i % 4 == 0, where means hit theta and d = 0
    ties occur), Gaussian for odd i; depth 2 or 3."""
    rng = np.random.default_rng(1000 + i)
    tree = random_tree(rng, depth=2 + (i // 2) % 2)
    kind = "bernoulli" if i % 2 == 0 else "gaussian"
    if kind == "bernoulli":
        mu = rng.uniform(0.2, 0.8, tree.n_leaves)
        theta = 0.5 if i % 4 == 0 else float(np.clip(value(tree, mu) + rng.choice([-1, 1]) * 0.15, 0.05, 0.95))
    else:
        mu = rng.normal(0.0, 0.6, tree.n_leaves)
        theta = value(tree, mu) + rng.choice([-1, 1]) * 0.4
    tapes = np.stack([reward_tape(mu, kind, T_MAX, 7919 * i + r) for r in range(R)])
    return tree, mu, theta, kind, tapes


INSTANCES = [instance(i) for i in range(N_INSTANCES)]
_REFERENCE: dict = {}


def reference(i: int, rule: str):
    """The scalar runs of instance i (cached: the tail tests reuse them)."""
    if (i, rule) not in _REFERENCE:
        tree, mu, theta, kind, tapes = INSTANCES[i]
        _REFERENCE[(i, rule)] = [
            alg.run(tree, theta, kind, tapes[r], DELTAS[r], rule, T_MAX, mu_true=mu) for r in range(R)
        ]
    return _REFERENCE[(i, rule)]


def assert_same(batch, runs, rule, where=""):
    for r, s in enumerate(runs):
        msg = f"{where} rule {rule} run {r}"
        assert batch.tau[r] == s.tau, msg
        assert batch.censored[r] == s.censored, msg
        assert batch.answers()[r] == s.answer, msg
        assert batch.answer[r] == (s.answer is True), msg
        np.testing.assert_array_equal(batch.counts[r], s.counts, err_msg=msg)
        assert batch.rounds[r] == s.rounds, msg
        if rule != "lucb":
            assert batch.forced[r] == s.forced, msg


def test_instances_cover_the_cases_the_rules_must_agree_on():
    kinds = {inst[3] for inst in INSTANCES}
    assert kinds == {"bernoulli", "gaussian"}
    assert {inst[0].depth for inst in INSTANCES} == {2, 3}
    assert any(inst[3] == "bernoulli" and inst[2] == 0.5 for inst in INSTANCES)
    assert any(not lv.sorted for inst in INSTANCES for lv in Layout(inst[0]).levels)  # both tie paths
    assert max(inst[0].n_leaves for inst in INSTANCES) > 20 and min(inst[0].n_leaves for inst in INSTANCES) < 10


@pytest.mark.parametrize("rule", BATCH_RULES)
def test_batch_makes_the_scalar_decisions_run_by_run(rule):
    """Every rule, 10 instances x 8 runs with their own tapes and two deltas, all rounds numpy."""
    outcomes = set()
    forced = 0
    for i, (tree, mu, theta, kind, tapes) in enumerate(INSTANCES):
        runs = reference(i, rule)
        batch = run_batch(tree, theta, kind, tapes, DELTAS, rule, T_MAX, mu_true=mu, tail=0)
        assert_same(batch, runs, rule, where=f"instance {i}")
        outcomes |= {s.answer for s in runs}
        forced += sum(s.forced for s in runs)
    assert outcomes == {True, False, None}  # both answers and censoring occur
    if rule not in ("lucb", "uniform"):
        assert forced > 0  # forced exploration happened


@pytest.mark.parametrize("rule", BATCH_RULES)
def test_scalar_tail_continuation_is_exact(rule):
    """Handing the last runs to the scalar loop mid-run (fixed or timed threshold) is exact."""
    for i in (0, 3, 4):
        tree, mu, theta, kind, tapes = INSTANCES[i]
        for tail in (3, None):
            batch = run_batch(tree, theta, kind, tapes, DELTAS, rule, T_MAX, mu_true=mu, tail=tail)
            assert_same(batch, reference(i, rule), rule, where=f"instance {i} tail {tail}")
        assert run_batch(tree, theta, kind, tapes, DELTAS, rule, T_MAX, mu_true=mu, tail=R).scalar_runs == R


def random_states(tree, rng, n_states: int):
    """Counts and integer reward sums: many means exactly 1/2 (d = 0), many equal means (ties)."""
    k = tree.n_leaves
    counts = rng.choice([1, 2, 4, 6], size=(n_states, k))
    sums = np.floor(counts * rng.choice([0.0, 0.25, 0.5, 0.5, 0.75, 1.0], size=(n_states, k)))
    return counts.astype(np.int64), sums.astype(float)


def test_dp_weights_and_ratio_choice_match_the_scalar_dp_with_ties_and_zero_divergence():
    rng = np.random.default_rng(5)
    n_inf = 0
    for i in range(8):
        tree = random_tree(rng, depth=2 + i % 2) if i else complete_tree(2, 3)
        counts, sums = random_states(tree, rng, 60)
        for rule in ("d_tracking", "ratio"):
            st = TaS(
                Layout(tree),
                0.5,
                "bernoulli",
                np.zeros((60, tree.n_leaves, 1)),
                rule,
                np.zeros(60, dtype=np.int64),
                [alg._Beta(0.1, tree.n_leaves, False)],
                10**6,
                None,
            )
            k = tree.n_leaves
            st.counts[:] = counts.T
            st.sums[:] = sums.T
            leaves = np.repeat(np.arange(k), 60)
            with np.errstate(divide="ignore", invalid="ignore"):
                st._set_leaves(
                    leaves,
                    leaves * 60 + np.tile(np.arange(60), k),
                    counts.T.ravel(),
                    sums.T.ravel(),
                )
                saved = st.evaluate()
                weights = st.weights(saved) if rule == "d_tracking" else None
            root = st.lay.root
            for r in range(60):
                dp = alg.certificate_dp(tree, counts[r], sums[r], 0.5, "bernoulli")
                assert st.f[1, root, r] == dp.z[0] and (st.f[0, root, r] == 1.0) == dp.side[0]
                assert st.f[2, root, r] == dp.t_star[0]
                if rule == "d_tracking":
                    np.testing.assert_array_equal(weights[:, r], alg.certificate_weights(tree, dp))
                    n_inf += np.isinf(dp.t_star[0])
                else:
                    assert st.choice()[r] == dp.choice
    assert n_inf > 20  # the 1/m weights on d = 0 certificate leaves were exercised


def test_vector_divergences_and_kl_bounds_are_the_scalar_functions_bit_for_bit():
    """numpy's np.log / np.square differ from libm in the last bit on some inputs; ours must not."""
    rng = np.random.default_rng(11)
    n = rng.integers(1, 5000, 4000)
    means = rng.binomial(n, rng.uniform(0.0, 1.0, n.size)) / n
    means[:6] = [0.0, 1.0, 0.5, 1e-13, 1.0 - 1e-13, np.nextafter(0.5, 1.0)]
    for theta in (0.5, 0.3, 0.91, 1e-13):
        expected = [leaf_divergence(m, theta, "bernoulli") for m in means.tolist()]
        np.testing.assert_array_equal(divergences(means, theta, "bernoulli"), expected)
    gauss = np.concatenate([rng.normal(0.0, 1.0, 4000), rng.normal(0.3, 1e-9, 100), [0.3]])
    expected = [leaf_divergence(m, 0.3, "gaussian") for m in gauss.tolist()]
    np.testing.assert_array_equal(divergences(gauss, 0.3, "gaussian"), expected)
    rates = np.array([math.log(20 * (1.0 + math.log(c)) / 0.1) for c in n[:600].tolist()])
    low, high = kl_bounds(means[:600], rates / n[:600])
    expected = np.array(
        [
            alg._confidence_bounds(m, c, r, "bernoulli")
            for m, c, r in zip(means[:600].tolist(), n[:600].tolist(), rates.tolist())
        ]
    )
    np.testing.assert_array_equal(low, expected[:, 0])
    np.testing.assert_array_equal(high, expected[:, 1])


def test_t_max_equal_to_k_conservative_beta_and_a_single_leaf():
    tree, mu, theta, kind, tapes = INSTANCES[2]
    k = tree.n_leaves
    for rule in ("d_tracking", "lucb"):
        batch = run_batch(tree, theta, kind, tapes, 0.1, rule, k, mu_true=mu, tail=0)
        runs = [alg.run(tree, theta, kind, tapes[r], 0.1, rule, k, mu_true=mu) for r in range(R)]
        assert_same(batch, runs, rule)
        assert (batch.tau == k).all()
    batch = run_batch(tree, theta, kind, tapes, 0.05, "ratio", T_MAX, conservative=True, tail=0)
    runs = [alg.run(tree, theta, kind, tapes[r], 0.05, "ratio", T_MAX, conservative=True) for r in range(R)]
    assert_same(batch, runs, "ratio")
    leaf = make_tree([[]], ["LEAF"])
    tapes1 = np.stack([reward_tape([0.8], "bernoulli", 200, r) for r in range(4)])
    for rule in BATCH_RULES:
        batch = run_batch(leaf, 0.5, "bernoulli", tapes1, 0.1, rule, 200, mu_true=[0.8], tail=0)
        runs = [alg.run(leaf, 0.5, "bernoulli", tapes1[r], 0.1, rule, 200, mu_true=[0.8]) for r in range(4)]
        assert_same(batch, runs, rule)


def test_errors_and_the_result_object():
    tree, mu, theta, kind, tapes = INSTANCES[1]
    with pytest.raises(NotImplementedError, match="ratio_incremental"):
        run_batch(tree, theta, kind, tapes, 0.1, "ratio_incremental", T_MAX)
    with pytest.raises(ValueError, match="unknown rule"):
        run_batch(tree, theta, kind, tapes, 0.1, "thompson", T_MAX)
    with pytest.raises(ValueError, match="tapes"):
        run_batch(tree, theta, kind, tapes[0], 0.1, "ratio", T_MAX)
    with pytest.raises(ValueError, match="delta"):
        run_batch(tree, theta, kind, tapes, 0.7, "ratio", T_MAX)
    with pytest.raises(ValueError, match="delta"):
        run_batch(tree, theta, kind, tapes, np.full(R + 1, 0.1), "ratio", T_MAX)
    with pytest.raises(ValueError, match="delta"):
        run_batch(tree, theta, kind, tapes, 0.7, "lucb", T_MAX)
    for bad in (None, "0.1", True, ["x"] * R):
        with pytest.raises(ValueError, match="delta"):
            run_batch(tree, theta, kind, tapes, bad, "ratio", T_MAX)
    with pytest.raises(ValueError, match="t_max"):
        run_batch(tree, theta, kind, tapes, 0.1, "ratio", tree.n_leaves - 1)
    with pytest.raises(ValueError, match="mu_true"):
        run_batch(tree, theta, kind, tapes, 0.1, "oracle", T_MAX)
    with pytest.raises(ValueError, match="theta"):
        run_batch(tree, 1.5, "bernoulli", (tapes > 0).astype(float), 0.1, "ratio", T_MAX)
    with pytest.raises(ValueError, match="tail"):
        run_batch(tree, theta, kind, tapes, 0.1, "ratio", T_MAX, tail=-1)
    short = tapes[:, :, :3]
    for rule in ("d_tracking", "lucb"):  # the scalar raises on the same short tapes
        with pytest.raises(ValueError, match="tape too short"):
            alg.run(tree, theta, kind, short[0], 0.1, rule, T_MAX)
        with pytest.raises(ValueError, match="tape too short"):
            run_batch(tree, theta, kind, short, 0.1, rule, T_MAX, tail=0)
    bern = INSTANCES[0]
    as_uint8 = run_batch(bern[0], bern[2], bern[3], bern[4].astype(np.uint8), DELTAS, "d_tracking", T_MAX, tail=0)
    assert_same(as_uint8, reference(0, "d_tracking"), "d_tracking", where="uint8 tapes")
    with pytest.raises(ValueError, match="numeric"):
        run_batch(tree, theta, kind, tapes.astype(str), 0.1, "ratio", T_MAX)
    empty = run_batch(tree, theta, kind, tapes[:0], 0.1, "ratio", T_MAX)
    assert empty.n_runs == 0 and empty.counts.shape == (0, tree.n_leaves)
    res = run_batch(tree, theta, kind, tapes, 0.1, "ratio", T_MAX, tail=0)
    assert res.total_rounds == int((res.tau - tree.n_leaves).sum()) and res.run_rounds_per_second > 0
    assert res.tau.dtype == np.int64 and res.answer.dtype == bool and res.censored.dtype == bool
    assert not res.answer[res.censored].any()
