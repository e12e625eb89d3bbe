r"""Many independent runs of one sampling rule advanced together with numpy (notes 12.5).

:func:`run_batch` plays ``R`` runs of :func:`algorithms.run` at once: run ``r`` reads its rewards
from ``tapes[r]`` (the j-th pull of leaf l returns ``tapes[r, l, j]``), and every run makes
*exactly* the decisions of the scalar reference on its own tape: the same leaves, the same stopping
time ``tau``, the same answer, the same censoring, the same final counts. Stopped runs leave the
batch (the state arrays are compacted) and keep their own ``tau``. ``delta`` may differ between runs
(one batch for several confidence levels).

Layout. The Track-and-Stop state is a stack of ``(W, n)`` planes over *slots* x runs still going
(runs last, so every numpy operation runs along long contiguous rows): leaf ``l`` is slot ``l``, the
internal nodes follow level by level (deepest first, so each level is a contiguous slice), and two
sentinel slots close the planes (``ZERO`` pads the children lists; ``INF`` is LUCB's +inf padding).
Each level of :attr:`tree.Tree.levels` is padded to ``P`` children per node (the next power of two
of its largest branching), so one gather ``f[:, pad]`` gives a ``(planes, P, m, n)`` block and the
reductions over children are element-wise operations across its ``P`` leading slices. A round costs
``O(depth)`` numpy calls whatever ``n``, so the batch pays off with many runs (LUCB keeps runs in
rows; its cost is the confidence-bound bisection anyway).

Exactness (the scalar rule is the specification):

* sums over children (``T*`` of a forall-node, ``Z`` of an exists-node) are added in the tournament
  order of :func:`incremental.pairwise_sum`: adjacent pairs, then pairs of pairs. Padding a node
  with more zeros than its own power of two only adds ``+ 0.0`` at the top, which changes no bit;
* the leaf divergence is the formula of :func:`incremental.leaf_divergence` operation by operation,
  with its ``log`` and ``** 2`` mapped over the vector from Python (``math.log``,
  ``float.__pow__``): numpy's SIMD ``np.log`` / ``np.square`` differ from libm in the last bit on
  some inputs. Everything else (means, ``N d``, ``1/d``, ``t w - N``, the weights) is one IEEE
  operation per element, identical in numpy;
* ties: the best exists-child is the least ``(T*, min leaf index)`` (the first minimum in min-leaf
  order), the certificate minimum the least ``(N d, N, leaf)`` (``N * 2^20 + leaf`` packed exactly
  in a float64), every argmax/argmin over leaves takes the smallest index; selections are masks and
  ``x * 1.0``, ``x + 0.0``, ``x / 1.0`` or ``fmin`` over ``nan``, which change no bit;
* ``beta(t, delta)`` comes from the same tables (:class:`algorithms._Beta`), LUCB's confidence
  bounds from the same function (:func:`algorithms._confidence_bounds`), cached per ``(mean,
  count)``.

All Track-and-Stop rules share ``t`` (every run pulls once per round), so ``beta``, the
forced-exploration threshold and the D-tracking target ``t w*`` are scalars per round. LUCB pulls
one or two leaves per round, so its ``t`` is per run.

Tail. Run lengths are heavy-tailed, and a numpy round costs about as much for one run as for a
hundred. When the runs still going are so few that the scalar loop would be cheaper (``n_active *
c_scalar < c_round``, both timed on this machine), each of them is finished by a scalar continuation
from its current state: the reference's own engines (:class:`algorithms._FullEngine`; the
incremental one, which makes the same decisions, for the ratio rule) and the same loop body.
``tail=0`` keeps every round in numpy; ``tail=n`` hands off at ``n`` runs left.
"""

from __future__ import annotations

import copy
import math
import numbers
import time
from dataclasses import dataclass
from itertools import repeat

import numpy as np

from .algorithms import (
    _Beta,
    _confidence_bounds,
    _FullEngine,
    _IncrementalEngine,
    _Shape,
    check_problem_arguments,
    optimal_weights,
)
from .incremental import _EPS
from .tree import Tree

__all__ = ["BATCH_RULES", "BatchResult", "run_batch"]

BATCH_RULES = ("d_tracking", "c_tracking", "ratio", "uniform", "oracle", "lucb")
_NOT_BATCHED = {
    "ratio_incremental": "it makes the decisions of 'ratio' (tests/test_thresh_mcts_algorithms.py "
    "checks that pull by pull); batch 'ratio' instead",
}
_BIG = np.iinfo(np.int64).max // 4
_CALIBRATION_ROUNDS = 24


@dataclass(frozen=True, eq=False)
class BatchResult:
    """``R`` runs of one rule. ``tau`` counts pulls (the K initial ones included); ``answer`` is
    ``V >= theta`` and is False (meaningless) where ``censored``; ``rounds`` are the sampling rounds
    after the initial pulls (``tau - K`` for the Track-and-Stop rules; LUCB may pull two leaves a
    round); ``forced`` counts forced-exploration pulls; ``seconds`` is the wall time of the whole
    batch; ``scalar_runs`` how many runs the scalar continuation finished (module docstring)."""

    rule: str
    tau: np.ndarray  # (R,) int64
    answer: np.ndarray  # (R,) bool, False where censored
    censored: np.ndarray  # (R,) bool
    counts: np.ndarray  # (R, K) int64
    rounds: np.ndarray  # (R,) int64
    forced: np.ndarray  # (R,) int64
    seconds: float
    scalar_runs: int = 0

    @property
    def n_runs(self) -> int:
        return int(self.tau.shape[0])

    @property
    def total_rounds(self) -> int:
        return int(self.rounds.sum())

    @property
    def run_rounds_per_second(self) -> float:
        """Rounds summed over runs per second of wall time (the batch's throughput)."""
        return self.total_rounds / self.seconds if self.seconds > 0 else math.nan

    def answers(self) -> list:
        """Per run: True / False, or None when censored (the scalar ``RunResult.answer``)."""
        return [None if c else bool(a) for a, c in zip(self.answer.tolist(), self.censored.tolist())]


# --------------------------------------------------------------------------------------------------
# slot layout


class _Level:
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
        # node-major (m, P), for LUCB: child slots padded with ZERO / INF, their min leaf (or _BIG)
        self.pad0, self.padi, self.ml = pad0, padi, ml
        self.valid = ml < _BIG
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


class _Layout:
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
            ml = np.full((m, p), _BIG, dtype=np.int64)
            for i in range(m):
                kids = lvl.children[lvl.offsets[i] : lvl.offsets[i] + sizes[i]]
                pad0[i, : sizes[i]] = slot[kids]
                padi[i, : sizes[i]] = slot[kids]
                ml[i, : sizes[i]] = min_leaf[kids]
            lo = int(slot[lvl.nodes[0]])
            self.levels.append(_Level(lo, lo + m, pad0, padi, lvl.is_max.copy(), ml))


def _pairwise(x: np.ndarray) -> np.ndarray:
    """Sum over the first axis (a power of two long) in tournament order: adjacent pairs first."""
    while x.shape[0] > 1:
        x = x[0::2] + x[1::2]
    return x[0]


class _Handoff:
    """When to finish the remaining runs with the scalar continuation (module docstring): when
    ``n_active * c_scalar`` drops below the median time of the last 16 numpy rounds (checked every
    8 rounds). ``c_scalar`` is timed by ``calibrate`` on a copy of a live run: at the first check,
    and once more, from the state of that moment, before the first hand-off."""

    def __init__(self, tail, calibrate):
        self.fixed, self.calibrate = tail, calibrate
        self.scalar_round = None
        self.rechecked = False
        self.samples: list = []
        self.n_timed = 0

    def now(self, n_active: int) -> bool:
        if self.fixed is not None:
            return n_active <= self.fixed
        if self.n_timed < 16 or self.n_timed % 8:
            return False
        batch_round = sorted(self.samples)[len(self.samples) // 2]
        if self.scalar_round is None:
            self.scalar_round = self.calibrate()
        if n_active * self.scalar_round >= batch_round:
            return False
        if not self.rechecked:
            self.rechecked = True
            self.scalar_round = self.calibrate()
            return n_active * self.scalar_round < batch_round
        return True

    def timed(self, seconds: float) -> None:
        self.n_timed += 1
        self.samples.append(seconds)
        if len(self.samples) > 16:
            del self.samples[0]


def _deltas(delta, r: int):
    """``(unique deltas, index of each run's delta)`` from a scalar or an ``(R,)`` array."""
    if isinstance(delta, bool) or np.ndim(delta) == 0:
        return [delta], np.zeros(r, dtype=np.int64)  # checked by the caller
    try:
        arr = np.asarray(delta, dtype=float)
    except (TypeError, ValueError) as err:
        raise ValueError(f"delta must be a number or an (R,) array of numbers: {err}") from err
    if arr.shape != (r,):
        raise ValueError(f"delta must be a scalar or have shape (R={r},), got shape {arr.shape}")
    uniq, index = np.unique(arr, return_inverse=True)
    return [float(d) for d in uniq], index.astype(np.int64).reshape(r)


def _divergences(means: np.ndarray, theta: float, kind: str) -> np.ndarray:
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


# --------------------------------------------------------------------------------------------------
# Track-and-Stop rules


def _tas_scalar(lay, theta, kind, tape, beta, rule, t_max, t, counts, sums, cumulative, forced, w_oracle):
    """The loop of ``algorithms._track_and_stop`` from a mid-run state; returns
    ``(tau, answer, censored, counts, forced)``."""
    k = lay.k
    counts, sums = counts.copy(), sums.copy()
    engine = (_IncrementalEngine if rule == "ratio" else _FullEngine)(lay.tree, theta, kind, counts, sums)
    length = tape.shape[1]
    while True:
        engine.evaluate()
        if engine.root_z > beta(t):
            return t, bool(engine.root_side), False, counts, forced
        if t >= t_max:
            return t, False, True, counts, forced
        if cumulative is not None:
            np.add(cumulative, engine.weights()[0], out=cumulative)
        n_min, leaf = engine.least_pulled
        if n_min < math.sqrt(t) - k / 2:
            forced += 1
        elif rule == "d_tracking":
            leaf = int(np.argmax(t * engine.weights()[0] - counts))
        elif rule == "c_tracking":
            leaf = int(np.argmax(cumulative - counts))
        elif rule == "oracle":
            leaf = int(np.argmax(t * w_oracle - counts))
        elif rule == "ratio":
            leaf = engine.choice
        j = counts[leaf]
        if j >= length:
            raise ValueError(f"reward tape too short: leaf {leaf} needs pull {j + 1} but the tape has {length}")
        reward = float(tape[leaf, j])
        counts[leaf] = j + 1
        sums[leaf] += reward
        engine.update(leaf, reward)
        t += 1


# the certificate-minimum key packs (count << 20) + leaf into a float64 (exact below 2^53)
_LEAF_BITS = 20


class _TaS:
    """Per-run state of the Track-and-Stop rules (columns = runs still going, rows = slots).

    ``f`` stacks per-slot planes, each ``(W, n)``: side (1.0 for ">=", 2.0 at the sentinels: never a
    support side), GLR ``Z``, ``T*`` (when the rule needs it), and for the ratio rule the
    certificate minimum ``E = (N d, N, leaf)`` as two planes: ``N d`` and the key ``N * 2^20 +
    leaf``. One gather per level, ``f[:, pad]``, fetches every plane of every child as ``(planes, P,
    m, n)``: the child axis leads, so the reductions over children are element-wise operations on
    long contiguous rows. The padding is the ZERO slot (0 everywhere, side 2): sums skip it, minima
    add ``padinf`` (inf there).
    """

    def __init__(
        self,
        lay: _Layout,
        theta: float,
        kind: str,
        tapes: np.ndarray,
        rule: str,
        dix,
        betas,
        t_max: int,
        w_oracle,
    ):
        self.lay, self.theta, self.kind, self.rule = lay, theta, kind, rule
        self.tapes, self.betas, self.t_max, self.w_oracle = tapes, betas, t_max, w_oracle
        self.tape_flat = tapes.reshape(-1)
        r, k, w = tapes.shape[0], lay.k, lay.width
        if k >= 1 << _LEAF_BITS:
            raise ValueError(f"run_batch handles at most {(1 << _LEAF_BITS) - 1} leaves, got {k}")
        self.need_t = rule in ("d_tracking", "c_tracking", "ratio")
        self.want_cert = rule in ("d_tracking", "c_tracking")
        self.ratio = rule == "ratio"
        self.rid = np.arange(r, dtype=np.int64)
        self.dix = dix
        self.counts = np.ones((k, r), dtype=np.int64)
        # (K, n), C order (flat views write through); the scalar adds the first reward to 0.0
        self.sums = np.ascontiguousarray(tapes[:, :, 0].T, dtype=np.float64) + 0.0
        self.f = np.zeros((5 if self.ratio else 3 if self.need_t else 2, w, r))
        self.f[0, lay.zero :] = 2.0
        self.cum = np.ones((k, r)) if rule == "c_tracking" else None
        self.forced = np.zeros(r, dtype=np.int64)
        self._index()
        leaves = np.repeat(np.arange(k), r)
        self._set_leaves(leaves, leaves * r + np.tile(np.arange(r), k), self.counts.ravel(), self.sums.ravel())

    _COLUMN_ARRAYS = ("f", "counts", "sums", "cum")

    def _index(self) -> None:
        n = self.rid.shape[0]
        self.cols = np.arange(n, dtype=np.int64)
        self.tape_base = self.rid * (self.tapes.shape[1] * self.tapes.shape[2])
        self.in_cert = None
        if self.want_cert:
            self.in_cert = np.zeros((self.lay.width, n), dtype=bool)
            self.in_cert[self.lay.root] = True

    def keep(self, mask: np.ndarray) -> None:
        self.rid, self.dix, self.forced = self.rid[mask], self.dix[mask], self.forced[mask]
        for name in self._COLUMN_ARRAYS:
            a = getattr(self, name)
            if a is not None:
                setattr(self, name, np.ascontiguousarray(a[..., mask]))
        self._index()

    def _set_leaves(self, leaves, flat, counts, sums) -> None:
        """Leaf slots at ``flat`` (leaf * n + column) now have these counts and reward sums."""
        means = sums / counts
        d = _divergences(means, self.theta, self.kind)
        f = self.f
        f[0].ravel()[flat] = means >= self.theta
        z = counts * d
        f[1].ravel()[flat] = z
        if self.need_t:
            f[2].ravel()[flat] = 1.0 / d  # inf at d = 0 (warnings are off in run_batch)
        if self.ratio:
            f[3].ravel()[flat] = z
            f[4].ravel()[flat] = counts * float(1 << _LEAF_BITS) + leaves

    def pull(self, leaves: np.ndarray) -> None:
        """Every column pulls its leaf."""
        flat = leaves * self.cols.shape[0] + self.cols
        cnt = self.counts.ravel()
        j = cnt[flat]
        length = self.tapes.shape[2]
        if j.max() >= length:
            bad = int(np.argmax(j >= length))
            raise ValueError(
                f"reward tape too short: run {int(self.rid[bad])} leaf {int(leaves[bad])} needs "
                f"pull {int(j[bad]) + 1} but the tape has {length}"
            )
        reward = self.tape_flat[self.tape_base + leaves * length + j].astype(np.float64)
        counts = j + 1
        cnt[flat] = counts
        s = self.sums.ravel()
        sums = s[flat] + reward
        s[flat] = sums
        self._set_leaves(leaves, flat, counts, sums)

    def evaluate(self):
        """The full DP of ``algorithms._dp`` for every column: fills the internal slots of every
        plane; returns per level ``(exists (m, n), chosen (P, m, n))``, chosen marking the best
        exists-child."""
        f = self.f
        need_t, ratio = self.need_t, self.ratio
        saved = []
        for lv in self.lay.levels:
            lo, hi = lv.lo, lv.hi
            g = f[:, lv.pad]  # (planes, P, m, n)
            same = g[0] == lv.sig  # support-side children (never the padding)
            ex = same.any(axis=0)
            f[0, lo:hi] = ex == lv.is_max_col  # sigma if exists else not sigma
            cz = g[1]
            f[1, lo:hi] = np.where(ex, _pairwise(cz * same), (cz + lv.padinf).min(axis=0))
            if not need_t:
                continue
            ct = g[2]
            cand = ct / same  # T* (> 0) on the support side, inf off it, nan at the padding
            t_ex = np.fmin.reduce(cand, axis=0)
            f[2, lo:hi] = np.where(ex, t_ex, _pairwise(ct))
            # the best exists-child, least (T*, min leaf): the first minimum in min-leaf order
            chosen = _first_true((cand == t_ex) & same, lv)
            saved.append((ex, chosen))
            if ratio:
                cev, ckey = g[3], g[4]
                ev_pad = cev + lv.padinf  # inf at the padding
                ev_fa = ev_pad.min(axis=0)
                # among the least N d: fewest pulls, then the smallest leaf (inf / nan elsewhere)
                key_fa = np.fmin.reduce(ckey / (ev_pad == ev_fa), axis=0)
                f[3, lo:hi] = np.where(ex, (cev * chosen).sum(axis=0), ev_fa)
                f[4, lo:hi] = np.where(ex, (ckey * chosen).sum(axis=0), key_fa)
        return saved

    def choice(self) -> np.ndarray:
        """The ratio rule's leaf: the root's certificate minimum."""
        return self.f[4, self.lay.root].astype(np.int64) & ((1 << _LEAF_BITS) - 1)

    def weights(self, saved) -> np.ndarray:
        """w*(mu_hat) read off the certificate (``algorithms._weights``), (K, n)."""
        lay = self.lay
        k = lay.k
        in_cert = self.in_cert  # the root stays True; every other node is rewritten below
        for lv, (ex, chosen) in zip(reversed(lay.levels), reversed(saved)):
            # children of certificate nodes: all at forall-nodes, the chosen one at exists-nodes
            # (the padding writes garbage into the ZERO row, never read)
            in_cert[lv.pad] = in_cert[lv.lo : lv.hi] & (chosen | ~ex)
        cert = in_cert[:k]
        t = self.f[2]
        t_leaf = t[:k]
        root_t = t[lay.root]
        # t_leaf where cert else +0.0 (bitwise: inf is possible off the certificate), / T*(root)
        w = (t_leaf.view(np.int64) & -cert.view(np.int8).astype(np.int64)).view(np.float64) / root_t
        finite = np.isfinite(root_t)
        if not finite.all():
            flat = cert & (t_leaf == np.inf)
            w_inf = np.where(flat, 1.0 / flat.sum(axis=0), 0.0)
            w = np.where(finite, w, w_inf)
        return w

    def beta(self, t: int):
        if len(self.betas) == 1:
            return self.betas[0](t)
        return np.array([b(t) for b in self.betas])[self.dix]

    def finish_scalar(self, t: int, out) -> None:
        """Every column, continued by :func:`_tas_scalar`."""
        for i in range(self.rid.shape[0]):
            r = int(self.rid[i])
            # a copy: the table sizes the scalar would have, not the batch's
            beta = copy.copy(self.betas[int(self.dix[i])])
            cum = None if self.cum is None else self.cum[:, i].copy()
            tau, answer, censored, counts, forced = _tas_scalar(
                self.lay,
                self.theta,
                self.kind,
                self.tapes[r],
                beta,
                self.rule,
                self.t_max,
                t,
                self.counts[:, i],
                self.sums[:, i],
                cum,
                int(self.forced[i]),
                self.w_oracle,
            )
            out["tau"][r], out["answer"][r], out["censored"][r] = tau, answer, censored
            out["counts"][r], out["forced"][r] = counts, forced
        out["scalar_runs"] += self.rid.shape[0]

    def calibrate(self, t: int) -> float:
        """Seconds per round of the scalar continuation, timed on a copy of the first column."""
        beta = copy.copy(self.betas[int(self.dix[0])])
        cum = None if self.cum is None else self.cum[:, 0].copy()
        start = time.perf_counter()
        tau = _tas_scalar(
            self.lay,
            self.theta,
            self.kind,
            self.tapes[int(self.rid[0])],
            beta,
            self.rule,
            t + _CALIBRATION_ROUNDS,
            t,
            self.counts[:, 0],
            self.sums[:, 0],
            cum,
            int(self.forced[0]),
            self.w_oracle,
        )[0]
        return (time.perf_counter() - start) / (tau - t + 1)


def _first_true(mask: np.ndarray, lv) -> np.ndarray:
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


def _run_tas(lay, theta, kind, tapes, rule, dix, betas, t_max, w_oracle, tail, out):
    k = lay.k
    st = _TaS(lay, theta, kind, tapes, rule, dix, betas, t_max, w_oracle)
    t = k
    handoff = _Handoff(tail, lambda: st.calibrate(t))  # late binding: the current t
    root = lay.root
    while st.rid.shape[0]:
        if handoff.now(st.rid.shape[0]):
            st.finish_scalar(t, out)
            break
        start = time.perf_counter()
        saved = st.evaluate()
        stop = st.f[1, root] > st.beta(t)
        if stop.any():
            ids = st.rid[stop]
            out["tau"][ids] = t
            out["answer"][ids] = st.f[0, root, stop] == 1.0
            out["counts"][ids] = st.counts[:, stop].T
            out["forced"][ids] = st.forced[stop]
            keep = ~stop
            st.keep(keep)
            saved = [(ex[:, keep], chosen[..., keep]) for ex, chosen in saved]
            if not st.rid.shape[0]:
                break
        if t >= t_max:
            ids = st.rid
            out["tau"][ids] = t
            out["censored"][ids] = True
            out["counts"][ids] = st.counts.T
            out["forced"][ids] = st.forced
            break
        counts = st.counts
        least = counts.argmin(axis=0)
        forced = counts[least, st.cols] < math.sqrt(t) - k / 2
        if st.cum is not None:
            np.add(st.cum, st.weights(saved), out=st.cum)
        if rule == "uniform" or forced.all():
            leaf = least
        else:
            if rule == "d_tracking":
                choice = np.argmax(t * st.weights(saved) - counts, axis=0)
            elif rule == "c_tracking":
                choice = np.argmax(st.cum - counts, axis=0)
            elif rule == "oracle":
                choice = np.argmax(t * w_oracle[:, None] - counts, axis=0)
            else:  # ratio
                choice = st.choice()
            leaf = np.where(forced, least, choice)
        st.forced += forced
        st.pull(leaf)
        t += 1
        handoff.timed(time.perf_counter() - start)
    out["rounds"][:] = out["tau"] - k


# --------------------------------------------------------------------------------------------------
# LUCB-MCTS


def _kl_bounds(means: np.ndarray, levels: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
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


class _Bounds:
    """LUCB's ``[L, U]`` from ``(mean, count)``, the values of ``algorithms._confidence_bounds``,
    cached; many Bernoulli misses at once go through :func:`_kl_bounds`."""

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
            lows, highs = _kl_bounds(means[missing], np.array(levels))
            for i, low, high in zip(missing, lows.tolist(), highs.tolist()):
                found[i] = cache[keys[i]] = (low, high)
        else:
            for i in missing:
                found[i] = self(*keys[i])
        bounds = np.array(found)
        return bounds[:, 0], bounds[:, 1]


def _lucb_scalar(shape: _Shape, theta, tape, bounds, di, t_max, t, rounds, counts, sums):
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


class _Lucb:
    def __init__(self, lay: _Layout, theta: float, tapes: np.ndarray, bounds: _Bounds, dix, t_max: int):
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
                ml = np.where(key == key.min(axis=-1)[..., None], lv.ml, _BIG)
                chosen = lv.ml == ml.min(axis=-1)[..., None]
                rep[:, lv.lo : lv.hi] = np.where(chosen, rep[:, lv.padi], _BIG).min(axis=-1)
        return rep_u[:, lay.root], rep_l[:, lay.root]

    def finish_scalar(self, out) -> None:
        for i in range(self.rid.shape[0]):
            r = int(self.rid[i])
            tau, answer, censored, counts, rounds = _lucb_scalar(
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
        res = _lucb_scalar(
            self.shape,
            self.theta,
            self.tapes[int(self.rid[0])],
            self.bounds,
            int(self.dix[0]),
            t + 2 * _CALIBRATION_ROUNDS,
            t,
            rounds,
            self.counts[0],
            self.sums[0],
        )
        return (time.perf_counter() - start) / (res[4] - rounds + 1)


def _run_lucb(lay, theta, kind, tapes, deltas, dix, t_max, tail, out):
    st = _Lucb(lay, theta, tapes, _Bounds(lay.k, kind, deltas), dix, t_max)
    handoff = _Handoff(tail, st.calibrate)
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


# --------------------------------------------------------------------------------------------------


def run_batch(
    tree: Tree,
    theta: float,
    kind: str,
    tapes,
    delta,
    rule: str,
    t_max: int,
    mu_true=None,
    conservative: bool = False,
    *,
    tail: int | None = None,
) -> BatchResult:
    """``R`` independent runs of ``rule`` (one of :data:`BATCH_RULES`), run ``r`` on ``tapes[r]``,
    with the decisions of :func:`algorithms.run` on each tape (``stopping=True``).

    ``tapes``: ``(R, K, length)``, the j-th pull of leaf l in run r returns ``float(tapes[r, l,
    j])``; any numeric dtype is read as is (Bernoulli tapes as ``uint8`` or ``bool`` take an eighth
    of the memory of float64; float32 Gaussian tapes give the rewards the scalar gets from the same
    array). ``delta``: a scalar or one per run, ``(R,)``. ``mu_true`` is needed by the oracle only;
    ``conservative`` selects ``beta = ln(K (1 + ln t) / delta)`` for the GLR rules (LUCB has its own
    rate). ``tail``: None hands the last runs to the scalar continuation when that is cheaper
    (timed), an integer ``n`` when ``n`` runs are left, 0 never (see the module docstring); the
    results are the same in every case.
    """
    start = time.perf_counter()
    if rule in _NOT_BATCHED:
        raise NotImplementedError(f"rule {rule!r} is not batched: {_NOT_BATCHED[rule]}")
    if rule not in BATCH_RULES:
        raise ValueError(f"unknown rule {rule!r}; expected one of {list(BATCH_RULES)}")
    theta = check_problem_arguments(tree, kind, theta)
    tapes = np.asarray(tapes)
    if tapes.dtype.kind not in "biuf":
        raise ValueError(f"tapes must be numeric, got dtype {tapes.dtype}")
    tapes = np.ascontiguousarray(tapes)  # any numeric dtype: 0/1 tapes may be uint8 or bool
    k = tree.n_leaves
    if tapes.ndim != 3 or tapes.shape[1] != k or tapes.shape[2] < 1:
        raise ValueError(f"tapes must have shape (R, K={k}, length >= 1), got {tapes.shape}")
    if isinstance(t_max, bool) or int(t_max) != t_max or t_max < k:
        raise ValueError(f"t_max must be an integer >= K={k}, got {t_max!r}")
    t_max = int(t_max)
    if tail is not None and (isinstance(tail, bool) or int(tail) != tail or tail < 0):
        raise ValueError(f"tail must be None or an integer >= 0, got {tail!r}")
    r = tapes.shape[0]
    deltas, dix = _deltas(delta, r)
    for d in deltas:
        if isinstance(d, bool) or not isinstance(d, numbers.Real) or not 0.0 < float(d) < 0.5:
            raise ValueError(f"delta must lie in (0, 0.5), got {d!r}")
    betas = [_Beta(float(d), k, conservative) for d in deltas]
    w_oracle = None
    if rule == "oracle":
        if mu_true is None:
            raise ValueError("the oracle rule needs mu_true")
        mu_true = np.asarray(mu_true, dtype=float)
        if mu_true.shape != (k,) or not np.isfinite(mu_true).all():
            raise ValueError(f"mu_true must be a finite array of shape ({k},), got {mu_true.shape}")
        w_oracle = optimal_weights(tree, mu_true, theta, kind)[1]
    out = {
        "tau": np.zeros(r, dtype=np.int64),
        "answer": np.zeros(r, dtype=bool),
        "censored": np.zeros(r, dtype=bool),
        "counts": np.zeros((r, k), dtype=np.int64),
        "rounds": np.zeros(r, dtype=np.int64),
        "forced": np.zeros(r, dtype=np.int64),
        "scalar_runs": 0,
    }
    if r:
        lay = _Layout(tree)
        with np.errstate(divide="ignore", invalid="ignore"):
            if rule == "lucb":
                _run_lucb(lay, theta, kind, tapes, [float(d) for d in deltas], dix, t_max, tail, out)
            else:
                _run_tas(lay, theta, kind, tapes, rule, dix, betas, t_max, w_oracle, tail, out)
    return BatchResult(rule=rule, seconds=time.perf_counter() - start, **out)
