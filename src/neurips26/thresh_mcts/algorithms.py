r"""Sequential sampling rules for thresholding MCTS: one run on a reward tape.

The Track-and-Stop loop and D-/C-Tracking follow Garivier and Kaufmann (2016) and the Julia implementation
xuedong/BestArm.jl (src/fixed_confidence/track_stop.jl, with its forced exploration); the ratio rule is our
reading of the paper's abstract ("a ratio-based modification of the D-Tracking arm-pulling strategy"), its lower
bound and GLR statistic our derivation in :mod:`theory`.

Every Track-and-Stop rule (``d_tracking``, ``c_tracking``, ``ratio``, ``ratio_incremental``, ``uniform``,
``oracle``) runs the same loop:

1. pull every leaf once (``t = K``);
2. at each ``t``: stop if the GLR statistic ``Z(root) > beta(t, delta)`` (:func:`theory.beta_threshold`)
   and answer the empirical side of the root; stop *censored* (no answer) if ``t >= t_max``;
3. otherwise pull a leaf: forced exploration first (if ``min_l N_l < sqrt(t) - K/2``, the least-pulled
   leaf, smallest index among ties), else the rule's leaf; the j-th pull of leaf l returns ``tape[l, j]``.

Rules (:data:`RULES`):

* ``d_tracking``: ``argmax_l t w*_l(mu_hat) - N_l`` (Garivier and Kaufmann 2016), a full DP every round.
* ``c_tracking``: ``argmax_l S_l - N_l`` with ``S = 1 + sum over rounds of w*(mu_hat)`` (the initial pulls
  count as one unit of weight per leaf, so ``sum S = t``); w* is accumulated every round, forced or not.
* ``ratio``: ``argmin_{l: w*_l > 0} N_l / w*_l``, recomputed in full every round: the certificate leaf
  with the least ``N_l d_l`` (see :mod:`incremental` for why that is the same rule and for the ties).
* ``ratio_incremental``: the same decisions from :class:`incremental.IncrementalRatio`, O(D log b).
* ``uniform``: the least-pulled leaf, smallest index first: round robin (counts differ by at most 1).
* ``oracle``: D-tracking toward the fixed ``w*(mu_true)``.
* ``lucb``: LUCB-MCTS (Kaufmann and Koolen 2017) adapted to the threshold, with its own stopping rule and
  no forced exploration (its confidence bounds already force it): per-leaf KL (Bernoulli) or Gaussian
  bounds ``[L_l, U_l]`` at the rate ``ln(K (1 + ln N_l) / delta)``, propagated by max/min. Stop when
  ``L_root > theta`` (answer ">=") or ``U_root < theta`` ("<"). Else pull the representative leaves of
  the root's U-path (argmax U at MAX nodes, argmin L at MIN nodes) and L-path (argmax L at MAX nodes,
  argmin U at MIN nodes); once if they coincide. Ties go to the smallest leaf index.

Weights at ``T*(mu_hat) = inf`` (a certificate leaf with ``mu_hat_l == theta``, ``d_l = 0``):
:func:`certificate_weights` puts weight ``1/m`` on each of the ``m`` certificate leaves with ``d_l = 0`` and
0 elsewhere, the limit of ``w*_l = T*(l) / T*(root)`` as those ``d_l -> 0`` at the same rate (where
:func:`theory.characteristic_time` returns zero weights). So tracking rules sample such a leaf at once,
which is also what the ratio rule does (:mod:`incremental`); one more Bernoulli pull always moves it off
theta. With finite ``T*`` the weights agree with :func:`theory.characteristic_time`.

Cost accounting (``RunResult.ops``, after the initial pulls): node visits of the per-round computation. A
full DP visits ``n_nodes`` nodes (side, T*, GLR ``Z`` and the certificate minimum in one bottom-up pass);
reading w* off the certificate visits its nodes top-down; an argmax over leaves visits ``K``; every pull
updates the forced-exploration tournament tree over the leaves (``log2 K`` cells). The incremental rule
counts, per node on the pulled leaf's path, the node plus each tournament-tree cell recomputed.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial

import numpy as np

from neurips26.common.validation import check_choice, check_int, check_number

from .incremental import IncrementalRatio, MinTree, leaf_divergence, leaf_state, pairwise_sum
from .theory import KINDS, beta_threshold, null_threshold
from .tree import Tree

__all__ = [
    "RULES",
    "CertificateDP",
    "RunResult",
    "certificate_dp",
    "certificate_weights",
    "optimal_weights",
    "run",
]

_INF = math.inf


@dataclass(frozen=True, eq=False)
class RunResult:
    """One run. ``tau`` counts pulls, the K initial ones included; ``answer`` is ``V >= theta`` or None
    when censored at ``t_max``; ``ops`` and ``round_seconds`` cover the ``rounds`` after the initial pulls
    (a round is one sampling decision plus the stopping check), ``seconds`` the whole run."""

    tau: int
    answer: bool | None
    censored: bool
    counts: np.ndarray
    ops: int
    seconds: float
    forced: int
    rounds: int = 0
    round_seconds: float = 0.0
    pulls: np.ndarray | None = None  # (tau,) leaf of every pull, when run with record=True

    @property
    def ops_per_round(self) -> float:
        return self.ops / max(self.rounds, 1)

    @property
    def rounds_per_second(self) -> float:
        return self.rounds / self.round_seconds if self.round_seconds > 0 else math.nan


# ----------------------------------------------------------------------------------------------------
# the full DP (theory's docstring, steps 4-5: T*, GLR Z and the ratio rule's certificate minimum, bottom-up)


class _Shape:
    """Plain-list view of a tree for the Python loops below."""

    def __init__(self, tree: Tree):
        self.children = tree.children
        self.sigma = [lab == "MAX" for lab in tree.labels]
        self.leaf_node = tree.leaves.tolist()
        self.leaf_of = tree.leaf_of_node.tolist()
        self.min_leaf = tree.min_leaf.tolist()
        self.internal = [n for n in tree.order.tolist() if tree.children[n]]
        self.n_nodes = tree.n_nodes
        self.n_leaves = tree.n_leaves


@dataclass(frozen=True, eq=False)
class CertificateDP:
    """Per-node lists from :func:`certificate_dp`: ``side`` (value >= theta), ``t_star``, GLR ``z``,
    certificate minimum ``e = (N d, N, leaf)``, ``best`` child of exists-nodes (-1 at forall-nodes and
    leaves). ``choice`` is the ratio rule's leaf."""

    side: list
    t_star: list
    z: list
    e: list
    best: list

    @property
    def choice(self) -> int:
        return self.e[0][2]


def _dp(shape: _Shape, side: list, t_star: list, z: list, e: list) -> CertificateDP:
    """Fill the internal nodes of the per-node lists, whose leaf entries are set. The sums use
    :func:`incremental.pairwise_sum` so that :class:`incremental.IncrementalRatio` agrees to the bit."""
    best = [-1] * shape.n_nodes
    children, sigma, min_leaf = shape.children, shape.sigma, shape.min_leaf
    for node in shape.internal:
        kids, sig = children[node], sigma[node]
        support = [c for c in kids if side[c] == sig]
        if support:  # exists-node: certify through the cheapest same-side child; Z adds them all
            b = min(support, key=lambda c: (t_star[c], min_leaf[c]))
            best[node] = b
            side[node], t_star[node], e[node] = sig, t_star[b], e[b]
            z[node] = pairwise_sum([z[c] if side[c] == sig else 0.0 for c in kids])
        else:  # forall-node: all children are on its side; T* adds them, Z and E take the weakest
            side[node] = not sig
            t_star[node] = pairwise_sum([t_star[c] for c in kids])
            z[node] = min(z[c] for c in kids)
            e[node] = min(e[c] for c in kids)
    return CertificateDP(side=side, t_star=t_star, z=z, e=e, best=best)


def _leaf_lists(shape: _Shape, counts, sums, theta: float, kind: str):
    n = shape.n_nodes
    side, t_star, z, e = [False] * n, [0.0] * n, [0.0] * n, [None] * n
    for leaf, node in enumerate(shape.leaf_node):
        side[node], _, t_star[node], z[node], e[node] = leaf_state(
            int(counts[leaf]), float(sums[leaf]), leaf, theta, kind
        )
    return side, t_star, z, e


def certificate_dp(tree: Tree, counts, sums, theta: float, kind: str) -> CertificateDP:
    """The full recomputation from counts ``N`` (all >= 1) and reward sums (``mu_hat = sums / N``)."""
    shape = _Shape(tree)
    return _dp(shape, *_leaf_lists(shape, counts, sums, float(theta), kind))


def _weights(shape: _Shape, dp: CertificateDP) -> tuple[np.ndarray, int]:
    """w* read off the certificate top-down, and the number of nodes visited."""
    cert, stack, visited = [], [0], 0
    while stack:
        node = stack.pop()
        visited += 1
        kids = shape.children[node]
        if not kids:
            cert.append(node)
        elif dp.best[node] >= 0:
            stack.append(dp.best[node])
        else:
            stack.extend(kids)
    w = np.zeros(shape.n_leaves)
    leaf_of = shape.leaf_of
    root_t = dp.t_star[0]
    if math.isfinite(root_t):
        for node in cert:
            w[leaf_of[node]] = dp.t_star[node] / root_t
    else:
        flat = [node for node in cert if dp.t_star[node] == _INF]
        for node in flat:
            w[leaf_of[node]] = 1.0 / len(flat)
    return w, visited


def certificate_weights(tree: Tree, dp: CertificateDP) -> np.ndarray:
    """(K,) w*: ``T*(l) / T*(root)`` on the certificate, or uniform on its ``d = 0`` leaves if T* = inf."""
    return _weights(_Shape(tree), dp)[0]


def optimal_weights(tree: Tree, mu, theta: float, kind: str) -> tuple[float, np.ndarray]:
    """``(T*(mu), w*(mu))`` of the true means by the same DP (the oracle rule's target)."""
    mu = np.asarray(mu, dtype=float)
    dp = certificate_dp(tree, np.ones(tree.n_leaves, dtype=np.int64), mu, theta, kind)
    return dp.t_star[0], certificate_weights(tree, dp)


# ----------------------------------------------------------------------------------------------------
# engines: the state a Track-and-Stop loop reads (GLR, choice, weights, least-pulled leaf)


class _FullEngine:
    """Leaf statistics updated per pull; the DP recomputed over the whole tree once per round."""

    def __init__(self, tree: Tree, theta: float, kind: str, counts, sums):
        self.shape = _Shape(tree)
        self.theta, self.kind = theta, kind
        self.counts = [int(c) for c in counts]
        self.sums = [float(s) for s in sums]
        self.leaf = _leaf_lists(self.shape, self.counts, self.sums, theta, kind)
        self.count_tree = MinTree([(c, leaf) for leaf, c in enumerate(self.counts)], (1 << 62, 1 << 62))
        self.dp: CertificateDP | None = None

    def update(self, leaf: int, reward: float) -> int:
        self.counts[leaf] += 1
        self.sums[leaf] += reward
        node = self.shape.leaf_node[leaf]
        side, t_star, z, e = self.leaf
        side[node], _, t_star[node], z[node], e[node] = leaf_state(
            self.counts[leaf], self.sums[leaf], leaf, self.theta, self.kind
        )
        return 1 + self.count_tree.set(leaf, (self.counts[leaf], leaf))

    def evaluate(self) -> int:
        self.dp = _dp(self.shape, *self.leaf)  # fills the internal entries in place; leaves are ours
        return self.shape.n_nodes

    def weights(self) -> tuple[np.ndarray, int]:
        return _weights(self.shape, self.dp)

    @property
    def root_z(self) -> float:
        return self.dp.z[0]

    @property
    def root_side(self) -> bool:
        return self.dp.side[0]

    @property
    def choice(self) -> int:
        return self.dp.choice

    @property
    def least_pulled(self) -> tuple[int, int]:
        return self.count_tree.cells[1]


class _IncrementalEngine(IncrementalRatio):
    def evaluate(self) -> int:
        return 0  # Z(root) and the choice are already up to date after update()


# choosers: (engine, t, counts) -> (leaf, ops); a factory makes one per run (C-tracking has state)


def _d_tracking_chooser(_tree, _mu_true, _theta, _kind):
    def choose(engine, t, counts):
        w, ops = engine.weights()
        return int(np.argmax(t * w - counts)), ops + counts.shape[0]

    return choose


def _c_tracking_chooser(tree, _mu_true, _theta, _kind):
    cumulative = np.ones(tree.n_leaves)  # the initial pulls: one unit of weight per leaf

    def accumulate(engine, counts):  # called every round, forced or not
        w, ops = engine.weights()
        np.add(cumulative, w, out=cumulative)
        return ops

    def choose(engine, t, counts):
        return int(np.argmax(cumulative - counts)), counts.shape[0]

    choose.every_round = accumulate
    return choose


def _ratio_chooser(_tree, _mu_true, _theta, _kind):
    return lambda engine, t, counts: (engine.choice, 0)


def _uniform_chooser(_tree, _mu_true, _theta, _kind):
    return lambda engine, t, counts: (engine.least_pulled[1], 0)


def _oracle_chooser(tree, mu_true, theta, kind):
    if mu_true is None:
        raise ValueError("the oracle rule needs mu_true")
    mu_true = np.asarray(mu_true, dtype=float)
    if mu_true.shape != (tree.n_leaves,) or not np.isfinite(mu_true).all():
        raise ValueError(f"mu_true must be a finite array of shape ({tree.n_leaves},), got {mu_true.shape}")
    w = optimal_weights(tree, mu_true, theta, kind)[1]

    def choose(engine, t, counts):
        return int(np.argmax(t * w - counts)), counts.shape[0]

    return choose


class _Beta:
    """beta(t, delta) from :func:`theory.beta_threshold`, tabulated in growing blocks."""

    def __init__(self, delta: float, n_leaves: int, conservative: bool):
        self.args = (delta, n_leaves, conservative)
        self.table = np.empty(0)
        beta_threshold(1, delta, n_leaves, conservative)  # validates delta

    def __call__(self, t: int) -> float:
        if t >= self.table.shape[0]:
            size = max(2 * self.table.shape[0], t + 1, 1024)
            self.table = beta_threshold(np.arange(1, size + 1), *self.args)
        return float(self.table[t - 1])


class _NullBeta(_Beta):
    """The threshold without its confidence term (:func:`theory.null_threshold`), tabulated like :class:`_Beta`."""

    def __init__(self, n_leaves: int, conservative: bool):
        self.args = (n_leaves, conservative)
        self.table = np.empty(0)

    def __call__(self, t: int) -> float:
        if t >= self.table.shape[0]:
            size = max(2 * self.table.shape[0], t + 1, 1024)
            self.table = null_threshold(np.arange(1, size + 1), *self.args)
        return float(self.table[t - 1])


def _pull(tape: np.ndarray, counts: np.ndarray, sums: np.ndarray, leaf: int, pulls: list | None) -> float:
    j = counts[leaf]
    if j >= tape.shape[1]:
        raise ValueError(f"reward tape too short: leaf {leaf} needs pull {j + 1} but the tape has {tape.shape[1]}")
    reward = float(tape[leaf, j])
    counts[leaf] = j + 1
    sums[leaf] += reward
    if pulls is not None:
        pulls.append(leaf)
    return reward


def _track_and_stop(
    engine_cls, chooser_factory, tree, theta, kind, tape, delta, t_max, *, mu_true, conservative, record, stopping
) -> RunResult:
    start = time.perf_counter()
    k = tree.n_leaves
    beta = _Beta(delta, k, conservative)
    choose = chooser_factory(tree, mu_true, theta, kind)
    every_round = getattr(choose, "every_round", None)
    counts, sums = np.zeros(k, dtype=np.int64), np.zeros(k)
    pulls = [] if record else None
    for leaf in range(k):
        _pull(tape, counts, sums, leaf, pulls)
    engine = engine_cls(tree, theta, kind, counts, sums)
    t, ops, rounds, forced, answer = k, 0, 0, 0, None
    round_start = time.perf_counter()
    while True:
        ops += engine.evaluate()
        if stopping and engine.root_z > beta(t):
            answer = bool(engine.root_side)
            break
        if t >= t_max:
            break
        if every_round is not None:
            ops += every_round(engine, counts)
        n_min, leaf = engine.least_pulled
        if n_min < math.sqrt(t) - k / 2:
            forced += 1
        else:
            leaf, rule_ops = choose(engine, t, counts)
            ops += rule_ops
        ops += engine.update(leaf, _pull(tape, counts, sums, leaf, pulls))
        t += 1
        rounds += 1
    end = time.perf_counter()
    return RunResult(
        tau=t,
        answer=answer,
        censored=answer is None,
        counts=counts,
        ops=ops,
        seconds=end - start,
        forced=forced,
        rounds=rounds,
        round_seconds=end - round_start,
        pulls=None if pulls is None else np.asarray(pulls, dtype=np.int64),
    )


# ----------------------------------------------------------------------------------------------------
# LUCB-MCTS adapted to the threshold


def _confidence_bounds(mean: float, count: int, rate: float, kind: str) -> tuple[float, float]:
    """``[L, U]`` = the means q with ``count d(mean, q) <= rate`` (KL by bisection, Gaussian closed form)."""
    if kind == "gaussian":
        half = math.sqrt(2.0 * rate / count)
        return mean - half, mean + half
    level = rate / count

    def edge(lo: float, hi: float, inside_is_lo: bool) -> float:
        for _ in range(42):  # 2^-42 < 1e-12 on [0, 1]
            mid = 0.5 * (lo + hi)
            if (leaf_divergence(mean, mid, kind) <= level) == inside_is_lo:
                lo = mid
            else:
                hi = mid
        return lo if inside_is_lo else hi

    return edge(0.0, mean, False), edge(mean, 1.0, True)


def _lucb(tree, theta, kind, tape, delta, t_max, *, mu_true, conservative, record, stopping) -> RunResult:
    start = time.perf_counter()
    check_number("delta", delta, 0.0, 0.5, low_open=True, high_open=True)
    shape = _Shape(tree)
    k, n = shape.n_leaves, shape.n_nodes
    counts, sums = np.zeros(k, dtype=np.int64), np.zeros(k)
    pulls = [] if record else None
    for leaf in range(k):
        _pull(tape, counts, sums, leaf, pulls)
    lower, upper = [0.0] * n, [0.0] * n

    def refresh(leaf: int) -> None:
        node, c = shape.leaf_node[leaf], int(counts[leaf])
        rate = math.log(k * (1.0 + math.log(c)) / delta)
        lower[node], upper[node] = _confidence_bounds(float(sums[leaf]) / c, c, rate, kind)

    for leaf in range(k):
        refresh(leaf)
    children, sigma, min_leaf = shape.children, shape.sigma, shape.min_leaf

    def path_leaf(follow_upper: bool) -> tuple[int, int]:
        node, visited = 0, 1
        while children[node]:
            kids = children[node]
            # U-path: argmax U at MAX, argmin L at MIN; L-path: argmax L at MAX, argmin U at MIN
            use_upper = follow_upper if sigma[node] else not follow_upper
            vals = upper if use_upper else lower
            sign = -1.0 if sigma[node] else 1.0
            node = min(kids, key=lambda c: (sign * vals[c], min_leaf[c]))
            visited += 1
        return tree.leaf_of_node[node].item(), visited

    t, ops, rounds, answer = k, 0, 0, None
    round_start = time.perf_counter()
    while True:
        for node in shape.internal:
            pick = max if sigma[node] else min
            lower[node] = pick(lower[c] for c in children[node])
            upper[node] = pick(upper[c] for c in children[node])
        ops += n
        if stopping and (lower[0] > theta or upper[0] < theta):
            answer = bool(lower[0] > theta)
            break
        if t >= t_max:
            break
        (u_leaf, u_ops), (l_leaf, l_ops) = path_leaf(True), path_leaf(False)
        ops += u_ops + l_ops
        for leaf in dict.fromkeys((u_leaf, l_leaf)):
            if t < t_max:
                _pull(tape, counts, sums, leaf, pulls)
                refresh(leaf)
                ops += 1
                t += 1
        rounds += 1
    end = time.perf_counter()
    return RunResult(
        tau=t,
        answer=answer,
        censored=answer is None,
        counts=counts,
        ops=ops,
        seconds=end - start,
        forced=0,
        rounds=rounds,
        round_seconds=end - round_start,
        pulls=None if pulls is None else np.asarray(pulls, dtype=np.int64),
    )


RULES: dict[str, Callable[..., RunResult]] = {
    "d_tracking": partial(_track_and_stop, _FullEngine, _d_tracking_chooser),
    "c_tracking": partial(_track_and_stop, _FullEngine, _c_tracking_chooser),
    "ratio": partial(_track_and_stop, _FullEngine, _ratio_chooser),
    "ratio_incremental": partial(_track_and_stop, _IncrementalEngine, _ratio_chooser),
    "uniform": partial(_track_and_stop, _FullEngine, _uniform_chooser),
    "lucb": _lucb,
    "oracle": partial(_track_and_stop, _FullEngine, _oracle_chooser),
}


def check_problem_arguments(tree: Tree, kind: str, theta) -> float:
    """Validate a run's tree, reward kind and threshold (shared by `run` and `batch.run_batch`); returns theta."""
    if not isinstance(tree, Tree):
        raise ValueError(f"tree must be a Tree, got {type(tree).__name__}")
    check_choice("kind", kind, KINDS)
    theta = float(theta)
    if not math.isfinite(theta) or (kind == "bernoulli" and not 0.0 < theta < 1.0):
        raise ValueError(f"theta must be finite (in (0, 1) for Bernoulli rewards), got {theta}")
    return theta


def run(
    tree: Tree,
    theta: float,
    kind: str,
    tape,
    delta: float,
    rule: str,
    t_max: int,
    mu_true=None,
    *,
    conservative: bool = False,
    record: bool = False,
    stopping: bool = True,
) -> RunResult:
    """One run of ``rule`` on ``tree`` against the reward ``tape`` (K, length): the j-th pull of leaf l
    returns ``tape[l, j]``. ``mu_true`` is needed by the oracle only. ``conservative`` uses
    ``beta = ln(K (1 + ln t) / delta)`` in the GLR rules (LUCB has its own rate); ``record`` keeps every pull in
    ``RunResult.pulls``; ``stopping=False`` never stops before ``t_max`` (for measuring the per-round cost)."""
    if rule not in RULES:
        raise ValueError(f"unknown rule {rule!r}; expected one of {sorted(RULES)}")
    theta = check_problem_arguments(tree, kind, theta)
    tape = np.asarray(tape, dtype=float)
    if tape.ndim != 2 or tape.shape[0] != tree.n_leaves or tape.shape[1] < 1:
        raise ValueError(f"tape must have shape (K={tree.n_leaves}, length >= 1), got {tape.shape}")
    check_int("t_max", t_max, tree.n_leaves)
    return RULES[rule](
        tree,
        theta,
        kind,
        tape,
        delta,
        int(t_max),
        mu_true=mu_true,
        conservative=conservative,
        record=record,
        stopping=stopping,
    )
