"""Batched LUCB-MCTS: confidence bounds of every run's leaves (cached, many Bernoulli bisections side by
side), their max/min propagation, the two representative leaves pulled per round, the bound-based
stopping rule, and the scalar continuation of the last runs.

LUCB pulls one or two leaves per round, so its ``t`` is per run; runs sit in rows (its cost is the
confidence-bound bisection anyway).
"""

from __future__ import annotations

import math
import time

import numpy as np

from ..algorithms import _confidence_bounds, _Shape
from ..incremental import _EPS
from .handoff import CALIBRATION_ROUNDS, Handoff
from .layout import BIG, Layout


def kl_bounds(means: np.ndarray, levels: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Bernoulli ``algorithms._confidence_bounds`` for vectors of means and levels ``rate / count``:
    both edges' 42 bisection steps side by side, every midpoint and divergence as in the scalar
    (``leaf_divergence(mean, mid)`` with the logs mapped from ``math.log``), so the same bits."""
    m = means.shape[0]
    x = np.minimum(np.maximum(np.concatenate((means, means)), _EPS), 1.0 - _EPS)
    level = np.concatenate((levels, levels))
    inside_is_lo = np.arange(2 * m) >= m  # lower edge: edge(0, mean, False); upper: (mean, 1, True)
    lo = np.concatenate((np.zeros(m), means))
    hi = np.concatenate((means, np.ones(m)))
    for _ in range(42):
        mid = 0.5 * (lo + hi)
        y = np.minimum(np.maximum(mid, _EPS), 1.0 - _EPS)
        logs = np.array(list(map(math.log, np.concatenate((x / y, (1.0 - x) / (1.0 - y))).tolist())))
        d = x * logs[: 2 * m] + (1.0 - x) * logs[2 * m :]
        move_lo = (np.where(d > 0.0, d, 0.0) <= level) == inside_is_lo
        lo = np.where(move_lo, mid, lo)
        hi = np.where(move_lo, hi, mid)
    return hi[:m], lo[m:]


class Bounds:
    """LUCB's ``[L, U]`` from ``(mean, count)``, the values of ``algorithms._confidence_bounds``,
    cached; many Bernoulli misses at once go through :func:`kl_bounds`."""

    _VECTOR_MISSES = 16  # below this many, the scalar bisection is cheaper

    def __init__(self, k: int, kind: str, deltas: list):
        self.k, self.kind, self.deltas = k, kind, deltas
        self.rates: dict = {}
        self.cache: dict = {}

    def rate(self, c: int, di: int) -> float:
        key = (c, di)
        rate = self.rates.get(key)
        if rate is None:
            rate = self.rates[key] = math.log(self.k * (1.0 + math.log(c)) / self.deltas[di])
        return rate

    def __call__(self, mean: float, c: int, di: int) -> tuple[float, float]:
        if self.kind == "gaussian":  # mean -/+ a half-width that depends on the count only
            key = (c, di)
            half = self.cache.get(key)
            if half is None:
                half = self.cache[key] = _confidence_bounds(0.0, c, self.rate(c, di), "gaussian")[1]
            return mean - half, mean + half
        key = (mean, c, di)
        b = self.cache.get(key)
        if b is None:
            b = self.cache[key] = _confidence_bounds(mean, c, self.rate(c, di), self.kind)
        return b

    def many(self, means: np.ndarray, counts: np.ndarray, dix: np.ndarray):
        """Vectors of L and U (exactly the scalar values)."""
        cache = self.cache
        if self.kind == "gaussian":
            halves = []
            for c, di in zip(counts.tolist(), dix.tolist()):
                half = cache.get((c, di))
                if half is None:
                    rate = self.rate(c, di)
                    half = cache[(c, di)] = _confidence_bounds(0.0, c, rate, "gaussian")[1]
                halves.append(half)
            half = np.array(halves)
            return means - half, means + half
        keys = list(zip(means.tolist(), counts.tolist(), dix.tolist()))
        found = [cache.get(key) for key in keys]
        missing = [i for i, b in enumerate(found) if b is None]
        if len(missing) >= self._VECTOR_MISSES:
            levels = [self.rate(keys[i][1], keys[i][2]) / keys[i][1] for i in missing]
            lows, highs = kl_bounds(means[missing], np.array(levels))
            for i, low, high in zip(missing, lows.tolist(), highs.tolist()):
                found[i] = cache[keys[i]] = (low, high)
        else:
            for i in missing:
                found[i] = self(*keys[i])
        bounds = np.array(found)
        return bounds[:, 0], bounds[:, 1]


def lucb_scalar(shape: _Shape, theta, tape, bounds, di, t_max, t, rounds, counts, sums):
    """The loop of ``algorithms._lucb`` from a mid-run state; returns ``(tau, answer, censored,
    counts, rounds)``."""
    counts, sums = counts.copy(), sums.copy()
    n = shape.n_nodes
    lower, upper = [0.0] * n, [0.0] * n
    leaf_node = shape.leaf_node
    length = tape.shape[1]

    def refresh(leaf: int) -> None:
        c = int(counts[leaf])
        lower[leaf_node[leaf]], upper[leaf_node[leaf]] = bounds(float(sums[leaf]) / c, c, di)

    for leaf in range(shape.n_leaves):
        refresh(leaf)
    children, sigma, min_leaf, leaf_of = shape.children, shape.sigma, shape.min_leaf, shape.leaf_of

    def path_leaf(follow_upper: bool) -> int:
        node = 0
        while children[node]:
            use_upper = follow_upper if sigma[node] else not follow_upper
            vals = upper if use_upper else lower
            sign = -1.0 if sigma[node] else 1.0
            node = min(children[node], key=lambda c: (sign * vals[c], min_leaf[c]))
        return leaf_of[node]

    while True:
        for node in shape.internal:
            pick = max if sigma[node] else min
            lower[node] = pick(lower[c] for c in children[node])
            upper[node] = pick(upper[c] for c in children[node])
        if lower[0] > theta or upper[0] < theta:
            return t, bool(lower[0] > theta), False, counts, rounds
        if t >= t_max:
            return t, False, True, counts, rounds
        for leaf in dict.fromkeys((path_leaf(True), path_leaf(False))):
            if t < t_max:
                j = counts[leaf]
                if j >= length:
                    raise ValueError(f"reward tape too short: leaf {leaf} needs pull {j + 1} but the tape has {length}")
                counts[leaf] = j + 1
                sums[leaf] += float(tape[leaf, j])
                refresh(leaf)
                t += 1
        rounds += 1


class Lucb:
    def __init__(self, lay: Layout, theta: float, tapes: np.ndarray, bounds: Bounds, dix, t_max: int):
        self.lay, self.theta, self.tapes, self.bounds, self.t_max = lay, theta, tapes, bounds, t_max
        self.tape_flat = tapes.reshape(-1)
        r, k, w = tapes.shape[0], lay.k, lay.width
        self.rid = np.arange(r, dtype=np.int64)
        self.dix = dix
        self.counts = np.ones((r, k), dtype=np.int64)
        self.sums = tapes[:, :, 0].astype(np.float64) + 0.0
        self.tt = np.full(r, k, dtype=np.int64)
        self.rounds = np.zeros(r, dtype=np.int64)
        # bounds over slots; ZERO holds -inf (the identity of max), INF holds +inf (of min)
        self.lower = np.zeros((r, w))
        self.upper = np.zeros((r, w))
        for a in (self.lower, self.upper):
            a[:, lay.zero], a[:, lay.inf] = -np.inf, np.inf
        self._index()
        rows = np.repeat(np.arange(r), k)
        leaves = np.tile(np.arange(k), r)
        self._refresh(rows, leaves, np.ones(r * k, dtype=np.int64), self.sums.ravel())
        self.pads = [np.where(lv.is_max[:, None], lv.pad0, lv.padi) for lv in lay.levels]
        self.shape = _Shape(lay.tree)

    _ROW_ARRAYS = ("rid", "dix", "counts", "sums", "tt", "rounds", "lower", "upper")

    def _index(self) -> None:
        self.rows = np.arange(self.rid.shape[0], dtype=np.int64)
        self.tape_base = self.rid * (self.tapes.shape[1] * self.tapes.shape[2])

    def keep(self, mask) -> None:
        for name in self._ROW_ARRAYS:
            setattr(self, name, getattr(self, name)[mask])
        self._index()

    def _refresh(self, rows, leaves, counts, sums) -> None:
        lo, hi = self.bounds.many(sums / counts, counts, self.dix[rows])
        self.lower[rows, leaves] = lo
        self.upper[rows, leaves] = hi

    def pull(self, rows: np.ndarray, leaves: np.ndarray) -> None:
        j = self.counts[rows, leaves]
        length = self.tapes.shape[2]
        if j.max() >= length:
            bad = int(np.argmax(j >= length))
            raise ValueError(
                f"reward tape too short: run {int(self.rid[rows[bad]])} leaf {int(leaves[bad])} "
                f"needs pull {int(j[bad]) + 1} but the tape has {length}"
            )
        reward = self.tape_flat[self.tape_base[rows] + leaves * length + j].astype(np.float64)
        counts = j + 1
        self.counts[rows, leaves] = counts
        sums = self.sums[rows, leaves] + reward
        self.sums[rows, leaves] = sums
        self._refresh(rows, leaves, counts, sums)
        self.tt[rows] += 1

    def evaluate(self) -> None:
        lower, upper = self.lower, self.upper
        for lv, pad in zip(self.lay.levels, self.pads):
            for a in (lower, upper):
                c = a[:, pad]
                if lv.all_max:
                    a[:, lv.lo : lv.hi] = c.max(axis=-1)
                elif lv.all_min:
                    a[:, lv.lo : lv.hi] = c.min(axis=-1)
                else:
                    a[:, lv.lo : lv.hi] = np.where(lv.is_max, c.max(axis=-1), c.min(axis=-1))

    def representatives(self) -> tuple[np.ndarray, np.ndarray]:
        """Leaves at the end of the root's U-path and L-path (``algorithms._lucb.path_leaf``): a
        node's choice depends only on its label and its children, so each path's leaf is found
        bottom-up."""
        lay, lower, upper = self.lay, self.lower, self.upper
        rep_u = np.zeros((lower.shape[0], lay.width), dtype=np.int64)
        rep_u[:, : lay.k] = np.arange(lay.k)
        rep_l = rep_u.copy()
        for lv in lay.levels:
            lc, uc = lower[:, lv.padi], upper[:, lv.padi]
            mx = lv.is_max[:, None]
            # min (sign * value, min leaf): U-path -U at MAX, L at MIN; L-path -L at MAX, U at MIN
            for rep, key in ((rep_u, np.where(mx, -uc, lc)), (rep_l, np.where(mx, -lc, uc))):
                key = np.where(lv.valid, key, np.inf)
                ml = np.where(key == key.min(axis=-1)[..., None], lv.ml, BIG)
                chosen = lv.ml == ml.min(axis=-1)[..., None]
                rep[:, lv.lo : lv.hi] = np.where(chosen, rep[:, lv.padi], BIG).min(axis=-1)
        return rep_u[:, lay.root], rep_l[:, lay.root]

    def finish_scalar(self, out) -> None:
        for i in range(self.rid.shape[0]):
            r = int(self.rid[i])
            tau, answer, censored, counts, rounds = lucb_scalar(
                self.shape,
                self.theta,
                self.tapes[r],
                self.bounds,
                int(self.dix[i]),
                self.t_max,
                int(self.tt[i]),
                int(self.rounds[i]),
                self.counts[i],
                self.sums[i],
            )
            out["tau"][r], out["answer"][r], out["censored"][r] = tau, answer, censored
            out["counts"][r], out["rounds"][r] = counts, rounds
        out["scalar_runs"] += self.rid.shape[0]

    def calibrate(self) -> float:
        """Seconds per round of the scalar continuation, timed on a copy of the first row."""
        t, rounds = int(self.tt[0]), int(self.rounds[0])
        start = time.perf_counter()
        res = lucb_scalar(
            self.shape,
            self.theta,
            self.tapes[int(self.rid[0])],
            self.bounds,
            int(self.dix[0]),
            t + 2 * CALIBRATION_ROUNDS,
            t,
            rounds,
            self.counts[0],
            self.sums[0],
        )
        return (time.perf_counter() - start) / (res[4] - rounds + 1)


def run_lucb(lay, theta, kind, tapes, deltas, dix, t_max, tail, out):
    st = Lucb(lay, theta, tapes, Bounds(lay.k, kind, deltas), dix, t_max)
    handoff = Handoff(tail, st.calibrate)
    root = lay.root

    def finish(mask, censored: bool, answer=None):
        ids = st.rid[mask]
        out["tau"][ids] = st.tt[mask]
        out["counts"][ids] = st.counts[mask]
        out["rounds"][ids] = st.rounds[mask]
        if censored:
            out["censored"][ids] = True
        else:
            out["answer"][ids] = answer

    while st.rid.shape[0]:
        if handoff.now(st.rid.shape[0]):
            st.finish_scalar(out)
            break
        start = time.perf_counter()
        st.evaluate()
        lo, hi = st.lower[:, root], st.upper[:, root]
        stop = (lo > theta) | (hi < theta)
        cens = ~stop & (st.tt >= t_max)
        done = stop | cens
        if done.any():
            if stop.any():
                finish(stop, False, (lo > theta)[stop])
            if cens.any():
                finish(cens, True)
            st.keep(~done)
            if not st.rid.shape[0]:
                break
        u_leaf, l_leaf = st.representatives()
        st.pull(st.rows, u_leaf)  # t < t_max for every row still here
        second = (l_leaf != u_leaf) & (st.tt < t_max)
        if second.any():
            st.pull(st.rows[second], l_leaf[second])
        st.rounds += 1
        handoff.timed(time.perf_counter() - start)
