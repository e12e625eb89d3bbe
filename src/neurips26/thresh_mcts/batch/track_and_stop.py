"""Batched Track-and-Stop: the D-Tracking, C-Tracking, ratio, uniform and oracle rules with the GLR stopping
rule, every run still going advanced one pull per round (selection, pull and the bottom-up DP of
``algorithms._dp`` over all runs at once), and the scalar continuation of the last runs.

All Track-and-Stop rules share ``t`` (every run pulls once per round), so ``beta``, the
forced-exploration threshold and the D-tracking target ``t w*`` are scalars per round.
"""

from __future__ import annotations

import copy
import math
import time

import numpy as np

from ..algorithms import _FullEngine, _IncrementalEngine, _NullBeta
from .handoff import CALIBRATION_ROUNDS, Handoff
from .layout import Layout, divergences, first_true, pairwise


def tas_scalar(
    lay, theta, kind, tape, beta, rule, t_max, t, counts, sums, cumulative, forced, w_oracle, null_beta=None, null=None
):
    """The loop of ``algorithms._track_and_stop`` from a mid-run state; returns
    ``(tau, answer, censored, counts, forced)``. ``null``, where given, is a dict ``{"tau": -1}`` of a run that has
    not crossed ``null_beta`` yet: the first round where the GLR exceeds it fills its ``tau`` and ``answer``."""
    k = lay.k
    counts, sums = counts.copy(), sums.copy()
    engine = (_IncrementalEngine if rule == "ratio" else _FullEngine)(lay.tree, theta, kind, counts, sums)
    length = tape.shape[1]
    while True:
        engine.evaluate()
        if null is not None and null["tau"] < 0 and engine.root_z > null_beta(t):
            null["tau"], null["answer"] = t, bool(engine.root_side)
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


class TaS:
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
        lay: Layout,
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
        self.null_beta = _NullBeta(k, betas[0].args[2])  # M1's null: the same runs stopped without ln(1/delta)
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
        d = divergences(means, self.theta, self.kind)
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
            f[1, lo:hi] = np.where(ex, pairwise(cz * same), (cz + lv.padinf).min(axis=0))
            if not need_t:
                continue
            ct = g[2]
            cand = ct / same  # T* (> 0) on the support side, inf off it, nan at the padding
            t_ex = np.fmin.reduce(cand, axis=0)
            f[2, lo:hi] = np.where(ex, t_ex, pairwise(ct))
            # the best exists-child, least (T*, min leaf): the first minimum in min-leaf order
            chosen = first_true((cand == t_ex) & same, lv)
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
        """Every column, continued by :func:`tas_scalar`."""
        for i in range(self.rid.shape[0]):
            r = int(self.rid[i])
            # a copy: the table sizes the scalar would have, not the batch's
            beta = copy.copy(self.betas[int(self.dix[i])])
            cum = None if self.cum is None else self.cum[:, i].copy()
            null = {"tau": int(out["null_tau"][r])}
            tau, answer, censored, counts, forced = tas_scalar(
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
                self.null_beta,
                null,
            )
            if out["null_tau"][r] < 0 <= null["tau"]:
                out["null_tau"][r], out["null_answer"][r] = null["tau"], null["answer"]
            out["tau"][r], out["answer"][r], out["censored"][r] = tau, answer, censored
            out["counts"][r], out["forced"][r] = counts, forced
        out["scalar_runs"] += self.rid.shape[0]

    def calibrate(self, t: int) -> float:
        """Seconds per round of the scalar continuation, timed on a copy of the first column."""
        beta = copy.copy(self.betas[int(self.dix[0])])
        cum = None if self.cum is None else self.cum[:, 0].copy()
        start = time.perf_counter()
        tau = tas_scalar(
            self.lay,
            self.theta,
            self.kind,
            self.tapes[int(self.rid[0])],
            beta,
            self.rule,
            t + CALIBRATION_ROUNDS,
            t,
            self.counts[:, 0],
            self.sums[:, 0],
            cum,
            int(self.forced[0]),
            self.w_oracle,
        )[0]
        return (time.perf_counter() - start) / (tau - t + 1)


def run_tas(lay, theta, kind, tapes, rule, dix, betas, t_max, w_oracle, tail, out):
    k = lay.k
    st = TaS(lay, theta, kind, tapes, rule, dix, betas, t_max, w_oracle)
    t = k
    handoff = Handoff(tail, lambda: st.calibrate(t))  # late binding: the current t
    root = lay.root
    while st.rid.shape[0]:
        if handoff.now(st.rid.shape[0]):
            st.finish_scalar(t, out)
            break
        start = time.perf_counter()
        saved = st.evaluate()
        z = st.f[1, root]
        crossed = (z > st.null_beta(t)) & (out["null_tau"][st.rid] < 0)
        if crossed.any():
            ids = st.rid[crossed]
            out["null_tau"][ids] = t
            out["null_answer"][ids] = st.f[0, root, crossed] == 1.0
        stop = z > st.beta(t)
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
