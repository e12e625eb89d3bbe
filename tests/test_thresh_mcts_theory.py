"""Paper 12 (thresholding MCTS): trees, T* DP vs the flip-set LP, GLR, instances, reward tapes."""

import json
import warnings

import numpy as np
import pytest

from neurips26.thresh_mcts.instances import (
    FIXED_INSTANCES,
    fixed_instance,
    instance_problem,
    instances_frame,
    make_instances,
    random_instance,
    reward_tape,
    validate_instance,
)
from neurips26.thresh_mcts.theory import (
    beta_threshold,
    characteristic_time,
    characteristic_time_batch,
    check_problem,
    divergence,
    glr_statistic,
    glr_statistic_batch,
    lp_characteristic_time,
    minimal_flip_sets,
)
from neurips26.thresh_mcts.tree import (
    complete_tree,
    from_records,
    make_tree,
    node_values,
    to_records,
    value,
)

KINDS = ("bernoulli", "gaussian")


def random_tree(rng, max_depth=3, max_branching=3):
    """Irregular random tree: branching 1..max_branching, random early leaves, random labels."""
    children, labels, depth = [[]], [None], [0]
    frontier = [0]
    while frontier:
        node = frontier.pop(0)
        internal = depth[node] == 0 or (depth[node] < max_depth and rng.random() < 0.8)
        if not internal:
            labels[node] = "LEAF"
            continue
        labels[node] = "MAX" if rng.random() < 0.5 else "MIN"
        for _ in range(int(rng.integers(1, max_branching + 1))):
            children.append([])
            labels.append(None)
            depth.append(depth[node] + 1)
            children[node].append(len(children) - 1)
            frontier.append(len(children) - 1)
    return make_tree(children, labels)


def random_problem(rng, kind):
    tree = random_tree(rng)
    while True:
        mu = rng.uniform(0.05, 0.95, tree.n_leaves)
        if rng.random() < 0.3:  # exact ties between leaves exercise the tie-breaking
            mu[rng.integers(tree.n_leaves)] = mu[0]
        theta = float(rng.uniform(0.2, 0.8))
        if abs(value(tree, mu) - theta) > 1e-3:
            return tree, mu, theta


def two_leaves(label):
    return make_tree([[1, 2], [], []], [label, "LEAF", "LEAF"])


# ------------------------------------------------------------------------------------------ trees


def test_complete_tree_structure_and_values():
    t = complete_tree(2, 3)
    assert (t.n_nodes, t.n_leaves, t.depth) == (13, 9, 2)
    assert t.labels[0] == "MAX" and set(t.labels[1:4]) == {"MIN"} and set(t.labels[4:]) == {"LEAF"}
    assert t.parent[0] == -1 and list(t.parent[1:4]) == [0, 0, 0]
    assert list(t.leaves) == list(range(4, 13)) and list(t.leaf_of_node[4:]) == list(range(9))
    pos = {int(n): i for i, n in enumerate(t.order)}
    assert all(pos[c] < pos[n] for n in range(t.n_nodes) for c in t.children[n])
    mu = np.arange(9) / 10.0  # MIN groups: 0.0, 0.3, 0.6 -> MAX 0.6
    vals = node_values(t, mu)
    assert vals[0] == pytest.approx(0.6) and list(vals[1:4]) == pytest.approx([0.0, 0.3, 0.6])
    assert value(complete_tree(2, 3, "MIN"), mu) == pytest.approx(0.2)  # MAX groups 0.2, 0.5, 0.8
    batch = np.stack([mu, mu[::-1]])
    assert node_values(t, batch).shape == (2, 13)
    assert node_values(t, batch)[1, 0] == pytest.approx(value(t, mu[::-1]))
    leaf = complete_tree(0, 2)
    assert leaf.n_leaves == 1 and value(leaf, [0.3]) == pytest.approx(0.3)


def test_irregular_tree_values_match_recursion():
    rng = np.random.default_rng(1)
    for _ in range(30):
        t = random_tree(rng)
        mu = rng.random(t.n_leaves)

        def rec(n, t=t, mu=mu):
            if not t.children[n]:
                return mu[t.leaf_of_node[n]]
            f = max if t.labels[n] == "MAX" else min
            return f(rec(c, t, mu) for c in t.children[n])

        assert value(t, mu) == pytest.approx(rec(0))


def test_records_round_trip():
    rng = np.random.default_rng(2)
    for t in [complete_tree(3, 2, "MIN"), random_tree(rng), random_tree(rng)]:
        rec = to_records(t)
        back = from_records(json.loads(json.dumps(rec)))
        assert back == t and back.children == t.children and back.labels == t.labels
        assert np.array_equal(back.leaves, t.leaves) and np.array_equal(back.order, t.order)
        assert from_records(json.dumps(rec)) == t
    assert hash(complete_tree(2, 2)) == hash(complete_tree(2, 2))


@pytest.mark.parametrize(
    "children, labels, match",
    [
        ([[1], [2], [1]], ["MAX", "MIN", "MAX"], "cycle"),
        ([[1], [1]], ["MAX", "MIN"], "cycle"),
        ([[1, 2], [0], []], ["MAX", "MIN", "LEAF"], "cycle"),
        ([[1, 2], [3], [3], []], ["MAX", "MIN", "MIN", "LEAF"], "shared child"),
        ([[1, 1], []], ["MAX", "LEAF"], "shared child"),
        ([[1, 2], [], []], ["MAX", "MIN", "LEAF"], "internal node 1 .*no children"),
        ([[1, 2], [], []], ["MAX", "LEAF", "AND"], "node 2 has unknown label"),
        ([[1], []], ["max", "LEAF"], "unknown label"),
        ([[1], [2], []], ["MAX", "LEAF", "LEAF"], "node 1 is labelled LEAF but has children"),
        ([[1], [], []], ["MAX", "LEAF", "LEAF"], "node 2 is not reachable"),
        ([[1], [], [0]], ["MAX", "LEAF", "MIN"], "node 0 must be the root"),
        ([[1, 5], []], ["MAX", "LEAF"], "child id 5"),
        ([[1]], ["MAX", "LEAF"], "labels has 2 entries"),
        ([], [], "empty"),
    ],
)
def test_bad_trees(children, labels, match):
    with pytest.raises(ValueError, match=match):
        make_tree(children, labels)


def test_bad_complete_tree_and_records():
    with pytest.raises(ValueError, match="branching"):
        complete_tree(2, 0)
    with pytest.raises(ValueError, match="depth"):
        complete_tree(-1, 2)
    with pytest.raises(ValueError, match="root_label"):
        complete_tree(2, 2, "LEAF")
    with pytest.raises(ValueError, match="children"):
        from_records({"labels": ["LEAF"]})
    with pytest.raises(ValueError, match="n_leaves=9"):
        value(complete_tree(2, 3), [0.5, 0.5])


# ----------------------------------------------------------------------------------------- theory


def test_divergence():
    d = divergence([0.7, 0.5, 0.0, 1.0], 0.5, "bernoulli")
    expected = 0.7 * np.log(0.7 / 0.5) + 0.3 * np.log(0.3 / 0.5)
    assert d[0] == pytest.approx(expected) and d[1] == 0.0
    assert np.isfinite(d).all() and d[2] == pytest.approx(np.log(2), rel=1e-9)
    assert divergence(0.3, np.array([0.5, 1.5]), "gaussian") == pytest.approx([0.02, 0.72])
    with pytest.raises(ValueError, match="kind"):
        divergence(0.1, 0.2, "poisson")


def test_hand_max_over_two_leaves_above_threshold_is_min():
    """MAX over two leaves above theta: both must flip, z = w1 d1 + w2 d2, T* = min(1/d1, 1/d2)."""
    mu, theta = np.array([0.6, 0.75]), 0.5
    d = divergence(mu, theta, "bernoulli")
    t = two_leaves("MAX")
    cert = characteristic_time(t, mu, theta, "bernoulli")
    assert cert.t_star == pytest.approx(min(1 / d))
    assert cert.weights == pytest.approx([0.0, 1.0])
    assert minimal_flip_sets(t, mu, theta) == [(0, 1)]
    assert lp_characteristic_time(t, mu, theta, "bernoulli") == pytest.approx(cert.t_star, rel=1e-9)


def test_hand_min_over_two_leaves_above_threshold_is_sum():
    mu, theta = np.array([0.6, 0.75]), 0.5
    d = divergence(mu, theta, "gaussian")
    t = two_leaves("MIN")
    cert = characteristic_time(t, mu, theta, "gaussian")
    assert cert.t_star == pytest.approx(1 / d[0] + 1 / d[1])  # 1/0.005 + 1/0.03125
    assert cert.t_star == pytest.approx(232.0)
    assert cert.weights == pytest.approx((1 / d) / (1 / d).sum())
    assert sorted(minimal_flip_sets(t, mu, theta)) == [(0,), (1,)]
    assert lp_characteristic_time(t, mu, theta, "gaussian") == pytest.approx(232.0, rel=1e-9)


def test_hand_mixed_sides():
    theta = 0.5
    mu = np.array([0.3, 0.8])
    d = divergence(mu, theta, "gaussian")
    # MAX on ">=": exists-node, only the leaf above theta certifies it
    c = characteristic_time(two_leaves("MAX"), mu, theta, "gaussian")
    assert c.t_star == pytest.approx(1 / d[1]) and c.weights == pytest.approx([0, 1])
    assert list(c.side) == [True, False, True]
    # MIN on "<": exists-node on "<", the leaf below theta certifies it
    c = characteristic_time(two_leaves("MIN"), mu, theta, "gaussian")
    assert c.t_star == pytest.approx(1 / d[0]) and c.weights == pytest.approx([1, 0])
    # depth 2: MAX(MIN(0.7, 0.6), MIN(0.9, 0.4)) = 0.6 >= 0.5; only the first MIN certifies
    t = complete_tree(2, 2)
    mu = np.array([0.7, 0.6, 0.9, 0.4])
    d = divergence(mu, theta, "gaussian")
    c = characteristic_time(t, mu, theta, "gaussian")
    assert c.t_star == pytest.approx(1 / d[0] + 1 / d[1])
    assert c.weights == pytest.approx([1 / d[0] / c.t_star, 1 / d[1] / c.t_star, 0, 0])
    assert c.node_t[0] == pytest.approx(c.t_star) and c.node_t[2] == pytest.approx(1 / d[3])
    # MIN(MAX(0.3, 0.45), MAX(0.8, 0.9)) = 0.45 < 0.5: a forall MAX under an exists MIN,
    # so T* is the sum over the first two leaves
    t = complete_tree(2, 2, "MIN")
    mu = np.array([0.3, 0.45, 0.8, 0.9])
    d = divergence(mu, theta, "bernoulli")
    c = characteristic_time(t, mu, theta, "bernoulli")
    assert c.t_star == pytest.approx(1 / d[0] + 1 / d[1])
    assert lp_characteristic_time(t, mu, theta, "bernoulli") == pytest.approx(c.t_star, rel=1e-7)


def test_ties_broken_by_smallest_leaf_index():
    t = complete_tree(1, 3)  # MAX over 3 leaves
    c = characteristic_time(t, [0.7, 0.7, 0.7], 0.5, "bernoulli")
    assert list(c.weights) == [1.0, 0.0, 0.0]
    c = characteristic_time(t, [0.6, 0.7, 0.7], 0.5, "bernoulli")
    assert list(c.weights) == [0.0, 1.0, 0.0]
    # tie between two identical MIN subtrees: the one holding the smaller leaf index wins
    t2 = make_tree(
        [[3, 1], [5, 6], [], [2, 4], [], [], []],
        ["MAX", "MIN", "LEAF", "MIN", "LEAF", "LEAF", "LEAF"],
    )
    # leaves (ids 2, 4, 5, 6) -> indices 0..3; node 3 holds leaves 0, 1 and node 1 holds leaves 2, 3
    c = characteristic_time(t2, [0.7, 0.8, 0.8, 0.7], 0.5, "gaussian")
    assert (c.weights > 0).tolist() == [True, True, False, False]


@pytest.mark.parametrize("kind", KINDS)
def test_dp_matches_lp_on_random_trees(kind):
    rng = np.random.default_rng(12 if kind == "bernoulli" else 13)
    worst, n_big = 0.0, 0
    for _ in range(120):
        tree, mu, theta = random_problem(rng, kind)
        cert = characteristic_time(tree, mu, theta, kind)
        lp = lp_characteristic_time(tree, mu, theta, kind)
        assert np.isfinite(cert.t_star)
        worst = max(worst, abs(cert.t_star - lp) / lp)
        n_big += tree.n_leaves > 14
        # weights: a distribution supported on the certificate
        assert cert.weights.sum() == pytest.approx(1.0, abs=1e-12)
        assert (cert.weights >= 0).all()
        sup = cert.weights > 0
        d = divergence(mu, theta, kind)
        assert cert.weights[sup] == pytest.approx((1 / d[sup]) / cert.t_star)
        # w* attains the LP value: its cheapest flip set costs exactly 1 / T*
        sets = minimal_flip_sets(tree, mu, theta)
        costs = [sum(cert.weights[list(s)] * d[list(s)]) for s in sets]
        assert min(costs) == pytest.approx(1 / cert.t_star, rel=1e-9)
        # GLR at (mu, N = t w*) equals t / T*
        z, side = glr_statistic(tree, mu, 1000.0 * cert.weights, theta, kind)
        assert z == pytest.approx(1000.0 / cert.t_star, rel=1e-9) and side == (value(tree, mu) >= theta)
    assert worst < 1e-6


def test_structural_and_bruteforce_flip_sets_agree():
    rng = np.random.default_rng(5)
    for _ in range(40):
        tree, mu, theta = random_problem(rng, "gaussian")
        if tree.n_leaves > 12:
            continue
        a = sorted(minimal_flip_sets(tree, mu, theta, method="bruteforce"))
        b = sorted(minimal_flip_sets(tree, mu, theta, method="structural"))
        assert a == b


def test_complete_trees_dp_lp_and_support():
    rng = np.random.default_rng(7)
    for depth, b in [(2, 3), (3, 2), (3, 3)]:
        t = complete_tree(depth, b)
        for kind in KINDS:
            mu = rng.uniform(0.2, 0.8, t.n_leaves)
            cert = characteristic_time(t, mu, 0.5, kind)
            assert lp_characteristic_time(t, mu, 0.5, kind) == pytest.approx(cert.t_star, rel=1e-6)
            # zero off the certificate: the support is a certificate
            # (flipping all the other leaves keeps the root's side)
            sides = mu >= 0.5
            sides_other = np.where(cert.weights > 0, sides, ~sides)
            assert (node_values(t, sides_other.astype(float))[0] >= 0.5) == (value(t, mu) >= 0.5)


def test_infinite_t_star_when_needed_leaf_sits_on_threshold():
    t = two_leaves("MIN")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        c = characteristic_time(t, [0.5, 0.7], 0.5, "bernoulli")
        assert c.t_star == np.inf and list(c.weights) == [0.0, 0.0]
        assert lp_characteristic_time(t, [0.5, 0.7], 0.5, "bernoulli") == np.inf
        # a leaf on theta that the certificate avoids is harmless
        c = characteristic_time(two_leaves("MAX"), [0.5, 0.7], 0.5, "bernoulli")
        assert np.isfinite(c.t_star) and list(c.weights) == [0.0, 1.0]


def test_glr_hand_cases():
    theta = 0.5
    mu_hat, n = np.array([0.6, 0.75]), np.array([10.0, 4.0])
    d = divergence(mu_hat, theta, "bernoulli")
    z, side = glr_statistic(two_leaves("MAX"), mu_hat, n, theta, "bernoulli")
    assert side is True and z == pytest.approx(10 * d[0] + 4 * d[1])  # both must be flipped
    z, side = glr_statistic(two_leaves("MIN"), mu_hat, n, theta, "bernoulli")
    assert side is True and z == pytest.approx(min(10 * d[0], 4 * d[1]))  # one flip suffices
    # opposite-side children of an exists-node do not count
    z, side = glr_statistic(two_leaves("MAX"), [0.3, 0.75], n, theta, "gaussian")
    assert side is True and z == pytest.approx(4 * 0.25**2 / 2)
    z, side = glr_statistic(two_leaves("MAX"), [0.3, 0.45], n, theta, "gaussian")
    assert side is False and z == pytest.approx(min(10 * 0.2**2 / 2, 4 * 0.05**2 / 2))
    # d = 0 and N = 0 give Z = 0 without warnings
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert glr_statistic(two_leaves("MIN"), [0.5, 0.9], [5, 5], theta, "bernoulli") == (
            0.0,
            True,
        )
        assert glr_statistic(two_leaves("MAX"), [0.9, 0.9], [0, 0], theta, "bernoulli") == (
            0.0,
            True,
        )
        assert glr_statistic(two_leaves("MAX"), [0.0, 1.0], [3, 3], theta, "bernoulli")[0] > 0


def test_batch_versions_match_scalar():
    rng = np.random.default_rng(9)
    t = complete_tree(3, 3)
    for kind in KINDS:
        mu = rng.uniform(0.2, 0.8, (6, t.n_leaves))
        mu[0, :] = 0.5  # a non-identifiable row
        n = rng.integers(0, 50, mu.shape).astype(float)
        ts, ws = characteristic_time_batch(t, mu, 0.5, kind)
        zs, sides = glr_statistic_batch(t, mu, n, 0.5, kind)
        for r in range(mu.shape[0]):
            c = characteristic_time(t, mu[r], 0.5, kind)
            assert ts[r] == c.t_star and np.array_equal(ws[r], c.weights)
            assert (zs[r], sides[r]) == glr_statistic(t, mu[r], n[r], 0.5, kind)
        assert ts[0] == np.inf and not ws[0].any()


def test_beta_threshold():
    assert beta_threshold(1, 0.1) == pytest.approx(np.log(10))
    assert beta_threshold(np.e, 0.01) == pytest.approx(np.log(200))
    assert beta_threshold(np.e, 0.01, n_leaves=9, conservative=True) == pytest.approx(np.log(1800))
    assert beta_threshold(np.array([1.0, np.e]), 0.1) == pytest.approx(np.log([10, 20]))
    with pytest.raises(ValueError, match="delta"):
        beta_threshold(10, 0.5)
    with pytest.raises(ValueError, match="delta"):
        beta_threshold(10, 0.0)
    with pytest.raises(ValueError, match="t must"):
        beta_threshold(0.5, 0.1)
    with pytest.raises(ValueError, match="n_leaves"):
        beta_threshold(10, 0.1, conservative=True)


@pytest.mark.parametrize(
    "mu, theta, kind, match",
    [
        ([1.2, 0.3], 0.5, "bernoulli", r"Bernoulli mu must lie in \[0, 1\]"),
        ([-0.1, 0.3], 0.5, "bernoulli", r"Bernoulli mu must lie in \[0, 1\]"),
        ([0.7, 0.3], 1.0, "bernoulli", r"theta must lie in \(0, 1\)"),
        ([0.7, 0.3], 0.0, "bernoulli", r"theta must lie in \(0, 1\)"),
        ([0.7, 0.3], 0.7, "bernoulli", "not identifiable: the root value equals the threshold"),
        ([0.7, 0.3], 0.7 + 1e-12, "gaussian", "not identifiable"),
        ([0.7, np.nan], 0.5, "gaussian", "finite"),
        ([0.7, 0.3, 0.1], 0.5, "gaussian", "n_leaves=2"),
        ([0.7, 0.3], "0.5", "gaussian", "theta must be a real scalar"),
        ([0.7, 0.3], 0.5, "poisson", "kind"),
    ],
)
def test_bad_problems(mu, theta, kind, match):
    with pytest.raises(ValueError, match=match):
        check_problem(two_leaves("MAX"), mu, theta, kind)


def test_check_problem_ok_and_other_entry_points_validate():
    t = two_leaves("MAX")
    assert check_problem(t, [0.7, 0.3], 0.5, "bernoulli") == pytest.approx(0.7)
    assert check_problem(t, [1.7, 0.3], 1.5, "gaussian") == pytest.approx(1.7)  # Gaussian theta may leave (0,1)
    with pytest.raises(ValueError, match="Bernoulli mu"):
        characteristic_time(t, [1.2, 0.3], 0.5, "bernoulli")
    with pytest.raises(ValueError, match="counts"):
        glr_statistic(t, [0.7, 0.3], [1, -1], 0.5, "bernoulli")
    with pytest.raises(ValueError, match="counts"):
        glr_statistic(t, [0.7, 0.3], [1, 1, 1], 0.5, "bernoulli")
    with pytest.raises(ValueError, match="mu_hat"):
        glr_statistic_batch(t, [0.7, 0.3], [1, 1], 0.5, "bernoulli")


# -------------------------------------------------------------------------------------- instances


def test_fixed_instances():
    for name, spec in FIXED_INSTANCES.items():
        for kind in KINDS:
            inst = fixed_instance(name, kind)
            tree, mu, theta, k = instance_problem(inst)
            assert k == kind and tree == complete_tree(spec["depth"], spec["branching"])
            assert inst["value"] == pytest.approx(value(tree, mu)) and abs(inst["value"] - theta) > 0.05
            assert 10 < inst["t_star"] < 5e4
            assert inst["t_star"] == pytest.approx(characteristic_time(tree, mu, theta, kind).t_star)
    assert fixed_instance("I1", "gaussian")["id"] == "I1_gauss"
    with pytest.raises(ValueError, match="unknown fixed instance"):
        fixed_instance("I9")
    with pytest.raises(ValueError, match="not identifiable"):
        fixed_instance("I1", theta=0.6)


def test_random_instances_seeded_with_gap_and_bound():
    a = random_instance("R", 3, 3, 0.05, seed=4)
    b = random_instance("R", 3, 3, 0.05, seed=4)
    assert a == b and a != random_instance("R", 3, 3, 0.05, seed=5)
    assert a["gap"] == pytest.approx(0.05) and abs(a["value"] - a["theta"]) == pytest.approx(0.05)
    assert all(0.2 <= m <= 0.8 for m in a["mu"]) and a["n_leaves"] == 27
    g = random_instance("G", 2, 4, 0.1, seed=1, kind="gaussian", t_star_max=2e3)
    assert g["t_star"] <= 2e3 and g["kind"] == "gaussian"
    with pytest.raises(ValueError, match="no instance"):
        random_instance("R", 3, 4, 0.05, seed=0, t_star_max=1.0, max_tries=5)
    with pytest.raises(ValueError, match="gap"):
        random_instance("R", 2, 2, 0.0, seed=0)


def test_make_instances_and_frame():
    insts = make_instances(seed=3)
    assert [i["id"] for i in insts] == ["I1", "I2", "I3", "R1", "R2", "R3", "R4", "R5", "R6"]
    assert make_instances(seed=3) == insts
    assert all(i["t_star"] <= 5e4 for i in insts)
    for i in insts[3:]:
        assert i["gap"] == pytest.approx(0.05) or i["gap"] == pytest.approx(0.1)
    json.dumps(insts)  # JSON-able
    df = instances_frame(insts)
    assert len(df) == 9 and {
        "id",
        "depth",
        "branching",
        "kind",
        "mu",
        "tree",
        "theta",
        "value",
        "t_star",
    } <= set(df.columns)
    row = df.iloc[4]
    tree, mu, theta, kind = instance_problem(row)
    assert tree == from_records(insts[4]["tree"]) and list(mu) == insts[4]["mu"]
    assert validate_instance(row)["t_star"] == pytest.approx(insts[4]["t_star"])
    more = make_instances(fixed=["I1"], random_specs=[], gaussian_fixed=True, user=[dict(insts[4], id="U1")])
    assert [i["id"] for i in more] == ["I1", "I1_gauss", "U1"]
    with pytest.raises(ValueError, match="duplicate"):
        make_instances(fixed=["I1", "I1"], random_specs=[])
    with pytest.raises(ValueError, match="misses keys"):
        make_instances(random_specs=[{"id": "R1", "depth": 2}])
    bad = dict(insts[0], id="bad", theta=insts[0]["value"])
    with pytest.raises(ValueError, match="instance 'bad': not identifiable"):
        validate_instance(bad)


def test_reward_tape_seeded_with_right_means():
    mu = np.array([0.1, 0.5, 0.9])
    tape = reward_tape(mu, "bernoulli", 20000, seed=11)
    assert tape.shape == (3, 20000) and tape.dtype == float
    assert set(np.unique(tape)) <= {0.0, 1.0}
    assert np.array_equal(tape, reward_tape(mu, "bernoulli", 20000, seed=11))
    assert not np.array_equal(tape, reward_tape(mu, "bernoulli", 20000, seed=12))
    assert tape.mean(axis=1) == pytest.approx(mu, abs=0.015)
    g = reward_tape(mu, "gaussian", 20000, seed=11)
    assert g.mean(axis=1) == pytest.approx(mu, abs=0.03) and g.std(axis=1) == pytest.approx(1.0, abs=0.03)
    with pytest.raises(ValueError, match="Bernoulli mu"):
        reward_tape([1.5], "bernoulli", 10, 0)
    with pytest.raises(ValueError, match="length"):
        reward_tape(mu, "bernoulli", -1, 0)
    with pytest.raises(ValueError, match="kind"):
        reward_tape(mu, "laplace", 10, 0)
