r"""Ratio-based tracking with O(D log b) work per round: the paper's abstract claims the ratio rule brings the
per-round cost "from linear to logarithmic in the number of arms"; this is our implementation of that claim.

The ratio rule pulls ``argmin_{l: w*_l(mu_hat) > 0} N_l / w*_l(mu_hat)``. Because
``w*_l = T*(l) / T*(root)`` and ``T*(l) = 1 / d_l`` on the certificate (``d_l = d(mu_hat_l, theta)``),
``N_l / w*_l = T*(root) * N_l d_l``: the rule pulls the certificate leaf with the least evidence
``N_l d_l``. Everything a node needs is a function of its subtree, so a pull changes only the nodes on
the path from the pulled leaf to the root. Each internal node ``n`` keeps

* ``count``: how many children sit on its *support side* ``sigma(n)`` (">=" for MAX, "<" for MIN).
  ``side(n) = sigma(n)`` iff ``count > 0`` (a MAX node is ">=" iff some child is); the node is then an
  exists-node, otherwise a forall-node (and all its children are on its side);
* five tournament trees (array heaps of ``2P`` cells, ``P`` the next power of two >= b) over its children:
  ``t_min``   min of ``(off-side?, T*(c), min leaf index of c, position)``: the best exists-child;
  ``t_sum``   sum of ``T*(c)``                 (``T*`` of a forall-node);
  ``z_sum``   sum of ``Z(c)`` over support-side children, 0 for the others (``Z`` of an exists-node);
  ``z_min``   min of ``Z(c)``                   (``Z`` of a forall-node);
  ``e_min``   min of ``E(c)``                   (``E`` of a forall-node);
* its own ``side``, ``T*``, GLR ``Z`` and certificate minimum ``E = (N_l d_l, N_l, l)``, the smallest
  over its certificate leaves (an exists-node's ``E`` is its best child's).

A pull updates the leaf and then, for each ancestor, one position in each of its five trees
(``log2 P`` cells each) and the node's state from the trees' tops: ``O(D log b)`` = ``O(log K)`` for a
balanced tree, the GLR statistic ``Z(root)`` included. The forced-exploration ``argmin_l N_l`` is one more
tournament tree over the leaves (``O(log K)``).

Exactness. The full-recomputation rule (``algorithms.certificate_dp``) must pick the same leaf every
round, ties and side changes included. Mins and comparisons are exact; sums are not associative, so both
implementations add children in the same fixed pairwise order (:func:`pairwise_sum`, the order of a
tournament tree padded with zeros), which makes every ``T*`` and ``Z`` agree to the last bit. Both use the
scalar :func:`leaf_divergence` on the same running sums.

Conventions. Ties among exists-children are broken by the smallest leaf index in the child's subtree (as
:func:`theory.characteristic_time` does). Ties in ``N_l d_l`` are broken by fewer pulls, then the smallest
leaf index. A leaf with ``mu_hat_l == theta`` has ``d_l = 0``, ``T*(l) = inf`` and zero evidence: when it is
on the certificate it is pulled first (least pulled first among several). ``T*(root) = inf`` then and
``N/w*`` is undefined; this choice is its limit (the weight of ``algorithms.certificate_weights`` goes to
the leaves whose ``d -> 0``), and one more Bernoulli pull always moves such a leaf off theta.
"""

from __future__ import annotations

import math

import numpy as np

from .tree import Tree

__all__ = ["IncrementalRatio", "MinTree", "SumTree", "leaf_divergence", "leaf_state", "pairwise_sum"]

_EPS = 1e-12  # the clipping of theory.divergence
_INF = math.inf
_OFF_SIDE = (2, _INF, 1 << 62, 1 << 62)  # padding of t_min: larger than any real key
_NO_LEAF = (_INF, 1 << 62, 1 << 62)  # padding of e_min


def leaf_divergence(mean: float, theta: float, kind: str) -> float:
    """Scalar ``d(mean, theta)`` in pure Python: the formula and clipping of ``theory.divergence``, several
    times faster per call; both implementations use it, so that they agree to the bit."""
    if kind == "gaussian":
        return 0.5 * (mean - theta) ** 2
    x = min(max(mean, _EPS), 1.0 - _EPS)
    y = min(max(theta, _EPS), 1.0 - _EPS)
    out = x * math.log(x / y) + (1.0 - x) * math.log((1.0 - x) / (1.0 - y))
    return out if out > 0.0 else 0.0


def leaf_state(count: int, total: float, leaf: int, theta: float, kind: str):
    """``(side, d, T*, Z, E)`` of a leaf pulled ``count`` times with reward sum ``total``."""
    mean = total / count
    d = leaf_divergence(mean, theta, kind)
    evidence = count * d
    return mean >= theta, d, (1.0 / d if d > 0.0 else _INF), evidence, (evidence, count, leaf)


def _pow2(n: int) -> int:
    return 1 << max(n - 1, 0).bit_length()


def pairwise_sum(values: list[float]) -> float:
    """Sum in the order of a tournament tree over ``len(values)`` slots padded with zeros to a power of
    two: adjacent pairs, then pairs of pairs. :class:`SumTree` adds in exactly this order."""
    level = list(values) + [0.0] * (_pow2(len(values)) - len(values))
    while len(level) > 1:
        level = [level[i] + level[i + 1] for i in range(0, len(level), 2)]
    return level[0]


class SumTree:
    """Sums of a fixed-length list with O(log n) point updates; ``cells[1]`` is the total."""

    __slots__ = ("size", "cells")

    def __init__(self, values: list[float]):
        self.size = size = _pow2(len(values))
        cells = [0.0] * (2 * size)
        cells[size : size + len(values)] = values
        for i in range(size - 1, 0, -1):
            cells[i] = cells[2 * i] + cells[2 * i + 1]
        self.cells = cells

    def set(self, pos: int, value: float) -> int:
        """Set one slot; returns the number of cells recomputed (the heap operations counted as ops)."""
        cells = self.cells
        i = self.size + pos
        cells[i] = value
        i >>= 1
        ops = 0
        while i:
            cells[i] = cells[2 * i] + cells[2 * i + 1]
            i >>= 1
            ops += 1
        return ops


class MinTree:
    """Minimum (first of equals) of a fixed-length list of comparable keys, O(log n) point updates."""

    __slots__ = ("size", "cells")

    def __init__(self, values: list, pad):
        self.size = size = _pow2(len(values))
        cells = [pad] * (2 * size)
        cells[size : size + len(values)] = values
        for i in range(size - 1, 0, -1):
            a, b = cells[2 * i], cells[2 * i + 1]
            cells[i] = b if b < a else a
        self.cells = cells

    def set(self, pos: int, value) -> int:
        cells = self.cells
        i = self.size + pos
        cells[i] = value
        i >>= 1
        ops = 0
        while i:
            a, b = cells[2 * i], cells[2 * i + 1]
            cells[i] = b if b < a else a
            i >>= 1
            ops += 1
        return ops


class IncrementalRatio:
    """State of the ratio rule and of the GLR statistic, updated along one leaf-to-root path per pull.

    Build it after every leaf has been pulled at least once; then call :meth:`update` after each pull.
    :attr:`choice` is the ratio rule's leaf, :attr:`root_z` / :attr:`root_side` the GLR statistic and
    the empirical answer, :attr:`least_pulled` the forced-exploration candidate ``(N_min, leaf)``.
    """

    def __init__(self, tree: Tree, theta: float, kind: str, counts, sums):
        self.theta, self.kind = float(theta), kind
        n = tree.n_nodes
        self.children = tree.children
        self.parent = tree.parent.tolist()
        self.leaf_node = tree.leaves.tolist()
        self.min_leaf = tree.min_leaf.tolist()
        self.sigma = [lab == "MAX" for lab in tree.labels]
        self.position = [0] * n
        for kids in tree.children:
            for pos, c in enumerate(kids):
                self.position[c] = pos
        self.counts = [int(c) for c in counts]
        self.sums = [float(s) for s in sums]
        if min(self.counts) < 1:
            raise ValueError("every leaf must have been pulled once before the incremental state is built")
        self.side = [False] * n
        self.t_star = [0.0] * n
        self.z = [0.0] * n
        self.e: list = [None] * n
        self.count = [0] * n
        self.trees: list = [None] * n
        for leaf, node in enumerate(self.leaf_node):
            self._set_leaf(leaf, node)
        for node in tree.order.tolist():
            kids = self.children[node]
            if not kids:
                continue
            sig = self.sigma[node]
            self.count[node] = sum(self.side[c] == sig for c in kids)
            self.trees[node] = (
                MinTree([self._t_key(node, c, p) for p, c in enumerate(kids)], _OFF_SIDE),
                SumTree([self.t_star[c] for c in kids]),
                SumTree([self.z[c] if self.side[c] == sig else 0.0 for c in kids]),
                MinTree([self.z[c] for c in kids], _INF),
                MinTree([self.e[c] for c in kids], _NO_LEAF),
            )
            self._refresh(node)
        self.count_tree = MinTree([(c, leaf) for leaf, c in enumerate(self.counts)], (1 << 62, 1 << 62))

    def _set_leaf(self, leaf: int, node: int) -> None:
        side, _, t_star, z, e = leaf_state(self.counts[leaf], self.sums[leaf], leaf, self.theta, self.kind)
        self.side[node], self.t_star[node], self.z[node], self.e[node] = side, t_star, z, e

    def _t_key(self, node: int, child: int, pos: int):
        return (0 if self.side[child] == self.sigma[node] else 1, self.t_star[child], self.min_leaf[child], pos)

    def _refresh(self, node: int) -> None:
        t_min, t_sum, z_sum, z_min, e_min = self.trees[node]
        if self.count[node]:  # exists-node on its support side
            best = self.children[node][t_min.cells[1][3]]
            self.side[node] = self.sigma[node]
            self.t_star[node] = self.t_star[best]
            self.z[node] = z_sum.cells[1]
            self.e[node] = self.e[best]
        else:  # forall-node: every child is on the other side
            self.side[node] = not self.sigma[node]
            self.t_star[node] = t_sum.cells[1]
            self.z[node] = z_min.cells[1]
            self.e[node] = e_min.cells[1]

    def update(self, leaf: int, reward: float) -> int:
        """Record one pull of ``leaf``; returns the node operations done: one per node on the path plus
        one per tournament-tree cell recomputed (five trees at each ancestor, the count tree once)."""
        self.counts[leaf] += 1
        self.sums[leaf] += reward
        node = self.leaf_node[leaf]
        old_side = self.side[node]
        self._set_leaf(leaf, node)
        ops = 1 + self.count_tree.set(leaf, (self.counts[leaf], leaf))
        while True:
            parent = self.parent[node]
            if parent < 0:
                return ops
            sig, pos, new_side = self.sigma[parent], self.position[node], self.side[node]
            self.count[parent] += (new_side == sig) - (old_side == sig)
            t_min, t_sum, z_sum, z_min, e_min = self.trees[parent]
            ops += 1 + t_min.set(pos, self._t_key(parent, node, pos))
            ops += t_sum.set(pos, self.t_star[node])
            ops += z_sum.set(pos, self.z[node] if new_side == sig else 0.0)
            ops += z_min.set(pos, self.z[node])
            ops += e_min.set(pos, self.e[node])
            old_side = self.side[parent]
            self._refresh(parent)
            node = parent

    @property
    def choice(self) -> int:
        """The ratio rule's leaf: the certificate leaf with the least ``(N d, N, leaf)``."""
        return self.e[0][2]

    @property
    def root_z(self) -> float:
        return self.z[0]

    @property
    def root_side(self) -> bool:
        return self.side[0]

    @property
    def least_pulled(self) -> tuple[int, int]:
        return self.count_tree.cells[1]

    def snapshot(self) -> dict[str, np.ndarray]:
        """Per-node state as arrays (for tests against the full recomputation)."""
        return {
            "side": np.array(self.side, dtype=bool),
            "t_star": np.array(self.t_star, dtype=float),
            "z": np.array(self.z, dtype=float),
            "choice": np.array([e[2] for e in self.e], dtype=np.int64),
        }
