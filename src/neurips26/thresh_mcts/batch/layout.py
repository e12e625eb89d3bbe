r"""Batched tree state: where every node of every run lives in the numpy planes, and the reductions over
children that give the scalar reference's bits.

Layout. The Track-and-Stop state is a stack of ``(W, n)`` planes over *slots* x runs still going
(runs last, so every numpy operation runs along long contiguous rows): leaf ``l`` is slot ``l``, the
internal nodes follow level by level (deepest first, so each level is a contiguous slice), and two
sentinel slots close the planes (``ZERO`` pads the children lists; ``INF`` is LUCB's +inf padding).
Each level of :attr:`tree.Tree.levels` is padded to ``P`` children per node (the next power of two
of its largest branching), so one gather ``f[:, pad]`` gives a ``(planes, P, m, n)`` block and the
reductions over children are element-wise operations across its ``P`` leading slices.

Reductions (exact, see :mod:`neurips26.thresh_mcts.batch`): :func:`pairwise` adds in the tournament
order of :func:`incremental.pairwise_sum`, :func:`first_true` picks the first child in min-leaf
order, :func:`divergences` is :func:`incremental.leaf_divergence` to the bit.
"""

from __future__ import annotations

import math
from itertools import repeat

import numpy as np

from ..incremental import _EPS
from ..tree import Tree

BIG = np.iinfo(np.int64).max // 4


class Level:
    __slots__ = (
        "lo",
        "hi",
        "pad0",
        "padi",
        "ml",
        "valid",
        "is_max",
        "all_max",
        "all_min",
        "pad",
        "padinf",
        "sig",
        "is_max_col",
        "sorted",
        "perm",
        "inverse",
        "node_index",
    )

    def __init__(self, lo, hi, pad0, padi, is_max, ml):
        self.lo, self.hi = lo, hi  # slots lo..hi-1 of this level's nodes
        # node-major (m, P), for LUCB: child slots padded with ZERO / INF, their min leaf (or BIG)
        self.pad0, self.padi, self.ml = pad0, padi, ml
        self.valid = ml < BIG
        self.is_max = is_max  # (m,) bool
        self.all_max, self.all_min = bool(is_max.all()), not bool(is_max.any())
        # child-major (P, m), for the Track-and-Stop DP over (P, m, n) blocks
        self.pad = np.ascontiguousarray(pad0.T)
        self.padinf = np.where(self.valid.T, 0.0, np.inf)[:, :, None]
        # (m, 1): 1.0 for MAX (support side ">="), 0.0 for MIN
        self.sig = is_max.astype(float)[:, None]
        self.is_max_col = is_max[:, None]
        # children in increasing min-leaf order (the tie-break order)? else the permutation to it
        self.sorted = bool(((np.diff(ml, axis=1) > 0) | ~self.valid[:, 1:]).all())
        order = np.argsort(ml, axis=1, kind="stable")  # (m, P), padding last
        # sorted position p of node i is original position perm[p, i]
        self.perm = np.ascontiguousarray(order.T)
        self.inverse = np.ascontiguousarray(np.argsort(order, axis=1).T)
        self.node_index = np.arange(ml.shape[0])[None, :]


class Layout:
    def __init__(self, tree: Tree):
        k, n = tree.n_leaves, tree.n_nodes
        self.tree, self.k, self.n = tree, k, n
        self.zero, self.inf = n, n + 1
        self.width = n + 2
        slot = np.full(n, -1, dtype=np.int64)
        slot[tree.leaves] = np.arange(k)
        nxt = k
        for lvl in tree.levels:
            slot[lvl.nodes] = np.arange(nxt, nxt + lvl.nodes.shape[0])
            nxt += lvl.nodes.shape[0]
        self.root = int(slot[0])
        min_leaf = tree.min_leaf
        self.levels = []
        for lvl in tree.levels:
            m = lvl.nodes.shape[0]
            sizes = np.diff(np.append(lvl.offsets, lvl.children.shape[0]))
            p = 1 << max(int(sizes.max()) - 1, 0).bit_length()
            pad0 = np.full((m, p), self.zero, dtype=np.int64)
            padi = np.full((m, p), self.inf, dtype=np.int64)
            ml = np.full((m, p), BIG, dtype=np.int64)
            for i in range(m):
                kids = lvl.children[lvl.offsets[i] : lvl.offsets[i] + sizes[i]]
                pad0[i, : sizes[i]] = slot[kids]
                padi[i, : sizes[i]] = slot[kids]
                ml[i, : sizes[i]] = min_leaf[kids]
            lo = int(slot[lvl.nodes[0]])
            self.levels.append(Level(lo, lo + m, pad0, padi, lvl.is_max.copy(), ml))


def pairwise(x: np.ndarray) -> np.ndarray:
    """Sum over the first axis (a power of two long) in tournament order: adjacent pairs first."""
    while x.shape[0] > 1:
        x = x[0::2] + x[1::2]
    return x[0]


def divergences(means: np.ndarray, theta: float, kind: str) -> np.ndarray:
    """``leaf_divergence(m, theta, kind)`` for every ``m``, to the bit: the same IEEE operations in
    the same order, with the two functions where numpy and Python differ in the last bit on some
    inputs (``log`` and ``** 2``) mapped from Python (``math.log``, ``float.__pow__``: libm)."""
    if kind == "gaussian":
        return 0.5 * np.array(list(map(pow, (means - theta).tolist(), repeat(2, means.shape[0]))))
    x = np.minimum(np.maximum(means, _EPS), 1.0 - _EPS)
    y = min(max(theta, _EPS), 1.0 - _EPS)
    n = x.shape[0]
    logs = np.array(list(map(math.log, np.concatenate((x / y, (1.0 - x) / (1.0 - y))).tolist())))
    out = x * logs[:n] + (1.0 - x) * logs[n:]
    return np.where(out > 0.0, out, 0.0)


def first_true(mask: np.ndarray, lv) -> np.ndarray:
    """(P, m, n) bool: the first True along the child axis in increasing min-leaf order."""
    if not lv.sorted:
        mask = mask[lv.perm, lv.node_index]
    out = np.empty_like(mask)
    out[0] = mask[0]
    if mask.shape[0] > 1:
        none_yet = ~mask[0]
        for p in range(1, mask.shape[0]):
            np.logical_and(mask[p], none_yet, out=out[p])
            if p + 1 < mask.shape[0]:
                none_yet &= ~mask[p]
    return out if lv.sorted else out[lv.inverse, lv.node_index]
