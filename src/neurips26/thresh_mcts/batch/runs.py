"""The batch's entry point: :func:`run_batch` checks its arguments, runs the rule's batched loop
(:mod:`.track_and_stop` or :mod:`.lucb`) and gathers every run's result in a :class:`BatchResult`."""

from __future__ import annotations

import math
import time
from dataclasses import dataclass

import numpy as np

from neurips26.common.validation import check_int, check_number

from ..algorithms import _Beta, check_problem_arguments, optimal_weights
from ..tree import Tree
from .layout import Layout
from .lucb import run_lucb
from .track_and_stop import run_tas

BATCH_RULES = ("d_tracking", "c_tracking", "ratio", "uniform", "oracle", "lucb")
_NOT_BATCHED = {
    "ratio_incremental": "it makes the decisions of 'ratio' (tests/test_thresh_mcts_algorithms.py "
    "checks that pull by pull); batch 'ratio' instead",
}


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
    # M1's null (Track-and-Stop rules only): the same run stopped at the first round where the GLR exceeds the
    # threshold without its confidence term (theory.null_threshold); -1 / False where it never did (or for LUCB)
    null_tau: np.ndarray | None = None
    null_answer: np.ndarray | None = None

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
    t_max = int(check_int("t_max", t_max, k))
    if tail is not None:
        check_int("tail", tail, 0)
    r = tapes.shape[0]
    deltas, dix = _deltas(delta, r)
    for d in deltas:
        check_number("delta", d, 0.0, 0.5, low_open=True, high_open=True)
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
        "null_tau": np.full(r, -1, dtype=np.int64),
        "null_answer": np.zeros(r, dtype=bool),
    }
    if r:
        lay = Layout(tree)
        with np.errstate(divide="ignore", invalid="ignore"):
            if rule == "lucb":
                run_lucb(lay, theta, kind, tapes, [float(d) for d in deltas], dix, t_max, tail, out)
            else:
                run_tas(lay, theta, kind, tapes, rule, dix, betas, t_max, w_oracle, tail, out)
    return BatchResult(rule=rule, seconds=time.perf_counter() - start, **out)
