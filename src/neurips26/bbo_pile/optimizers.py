"""Optimizers that generate the trajectories, all minimising ``f`` on the box [lo, hi], and the generation of one
optimizer's trajectories on many black boxes (the long table and its throughput).

Every optimizer works in unit coordinates ``u`` in [0, 1]^d, with ``x = lo + u (hi - lo)`` clipped to [lo, hi].
So "0.1 range" below means 0.1 in u. A trial whose y is NaN or +-inf is recorded as given, with
``valid=False``. When an optimizer has to rank it, the trial counts as the worst value; the optimizer never
crashes on it. An exception raised by ``f`` is not caught: an error is not a measurement.

- RS: uniform random search, one vectorised call of ``f``.
- REA: regularized evolution, after syne-tune's ``RegularizedEvolution`` searcher. bbo-pile's ``baselines.py``
  sets ``population_size=20, sample_size=10``. The first ``population_size`` trials are uniform. After that
  the parent is the best of ``sample_size`` population members drawn with replacement. The child changes one
  coordinate, chosen uniformly, and redraws until the value differs from the parent's. The oldest member
  leaves once the population is full.
  Deliberate differences: syne-tune resamples the chosen hyperparameter uniformly from its range. Here it
  takes a Gaussian step N(0, 0.1 range), clipped (this reproduction's choice). With a budget under 40, the
  population shrinks to ``max(2, budget // 2)`` and the tournament to half of it. Otherwise REA would be random
  search for 20 of the quick scale's 24 trials.
- CMA: CMA-ES from the ``cma`` package. It starts at the domain centre with sigma0 = 0.3, popsize is cma's
  default 4 + floor(3 ln d), and ``bounds=[0, 1]`` uses cma's BoundTransform. Non-finite y is told to cma as a
  penalty worse than every finite value seen. The random numbers come from a seeded numpy Generator through
  cma's ``randn`` option, so global numpy state is neither used nor changed. The last generation is cut to
  the remaining budget. If cma stops early (flat fitness, tolx), it restarts from a uniform random point.
- LS: hill climbing from a uniform start. Each proposal is a Gaussian step N(0, step^2 I) with step = 0.2 at
  first. It is accepted on strict improvement. After 5 failures in a row the step halves. When the step is
  below 1e-3 the search restarts at a new uniform point with step 0.2.
- TPE: optuna's TPESampler (optuna defaults, multivariate in optuna 5, seeded), with logging and warnings
  silenced while it runs. A non-finite y is told as a FAIL trial, which TPE ignores. It is slow (about
  2.5 ms per trial at T=24 and 3.4 ms at T=100, against 0.05 ms for REA): paper scale only. Note that bbo-pile's
  "TPE" is syne-tune's KDE searcher
  (``searcher="kde"``, ``min_bandwidth=0.1``), not optuna.

bbo-pile's ``run_benchmark.py`` for the GO family starts every method with 5 random ``points_to_evaluate``.
Here no optimizer gets forced initial points; the trajectory is the optimizer's own from trial 0.
"""

from __future__ import annotations

import logging
import time
import warnings
from collections import deque
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from neurips26.common.validation import check_int

from .blackboxes import make_blackbox
from .catalog import BlackBoxSpec
from .tokenizer import MAX_INVALID_FRACTION, too_many_invalid

__all__ = [
    "OPTIMIZERS",
    "OPTIMIZER_OPTIONS",
    "TRAJECTORY_COLUMNS",
    "Trajectory",
    "generate_trajectories",
    "run_optimizer",
    "trajectories_table",
]

OPTIMIZERS = ("RS", "REA", "CMA", "LS", "TPE")
TRAJECTORY_COLUMNS = ("bb_id", "family", "dim", "optimizer", "seed", "trial", "x", "y", "valid")

# Paper settings (unit coordinates)
REA_POPULATION, REA_SAMPLE, REA_MUTATION_SCALE = 20, 10, 0.1
CMA_SIGMA0 = 0.3
LS_STEP, LS_SHRINK, LS_PATIENCE, LS_MIN_STEP = 0.2, 0.5, 5, 1e-3


# ---------------------------------------------------------------------------------------------------------------------
# Trajectory


@dataclass(frozen=True)
class Trajectory:
    """One optimizer run: ``x`` (T, dim) float64 inside [lo, hi], ``y`` (T,) float64 as returned by ``f``
    (NaN/inf kept), ``valid`` (T,) bool, which must equal ``isfinite(y)`` (computed when omitted).
    The arrays are read-only."""

    x: np.ndarray
    y: np.ndarray
    valid: np.ndarray | None = None

    def __post_init__(self):
        x = np.array(self.x, dtype=np.float64)
        y = np.array(self.y, dtype=np.float64)
        if x.ndim != 2:
            raise ValueError(f"x must be (T, dim), got shape {x.shape}")
        if y.shape != (x.shape[0],):
            raise ValueError(f"y must be (T,) = ({x.shape[0]},), got shape {y.shape}")
        finite = np.isfinite(y)
        if self.valid is None:
            valid = finite
        else:
            valid = np.array(self.valid, dtype=bool)
            if valid.shape != y.shape:
                raise ValueError(f"valid must be (T,) = ({y.shape[0]},), got shape {valid.shape}")
            if not np.array_equal(valid, finite):
                bad = int(np.flatnonzero(valid != finite)[0])
                raise ValueError(f"valid[{bad}]={valid[bad]} disagrees with y[{bad}]={y[bad]}")
        if not np.isfinite(x).all():
            raise ValueError("x must be finite")
        for name, array in (("x", x), ("y", y), ("valid", valid)):
            array.setflags(write=False)
            object.__setattr__(self, name, array)

    @property
    def n_trials(self) -> int:
        return int(self.y.shape[0])

    @property
    def dim(self) -> int:
        return int(self.x.shape[1])

    @property
    def invalid_share(self) -> float:
        """Share of trials with non-finite y (0 for an empty trajectory)."""
        return float(1.0 - self.valid.mean()) if self.n_trials else 0.0

    @property
    def flagged(self) -> bool:
        """More than :data:`.tokenizer.MAX_INVALID_FRACTION` of the trials are invalid: the corpus rejects it
        (:func:`.tokenizer.too_many_invalid`)."""
        return too_many_invalid(int((~self.valid).sum()), self.n_trials, MAX_INVALID_FRACTION)

    def best_so_far(self) -> np.ndarray:
        """Running minimum of the valid y, NaN before the first valid trial."""
        running = np.minimum.accumulate(np.where(self.valid, self.y, np.inf))
        return np.where(np.isfinite(running), running, np.nan)


# ---------------------------------------------------------------------------------------------------------------------
# Shared machinery


def _score(y: np.ndarray) -> np.ndarray:
    """y for ranking: non-finite values (NaN, +inf, -inf) count as the worst."""
    y = np.asarray(y, dtype=float)
    return np.where(np.isfinite(y), y, np.inf)


class _Evaluator:
    """Maps unit points to [lo, hi], calls ``f`` and records every trial, up to ``budget``."""

    def __init__(self, f: Callable, lo: np.ndarray, hi: np.ndarray, budget: int):
        self.f, self.lo, self.hi, self.budget = f, lo, hi, budget
        self.xs: list[np.ndarray] = []
        self.ys: list[np.ndarray] = []
        self.used = 0

    @property
    def remaining(self) -> int:
        return self.budget - self.used

    def __call__(self, U: np.ndarray) -> np.ndarray:
        U = np.atleast_2d(np.asarray(U, dtype=float))
        if len(U) > self.remaining:
            raise RuntimeError(f"optimizer asked for {len(U)} trials with {self.remaining} left")  # a bug here
        X = np.clip(self.lo + np.clip(U, 0.0, 1.0) * (self.hi - self.lo), self.lo, self.hi)
        with np.errstate(all="ignore"):
            y = np.asarray(self.f(X), dtype=np.float64).reshape(-1)
        if y.shape != (len(X),):
            raise ValueError(f"f returned {y.size} values for {len(X)} points; expected shape ({len(X)},)")
        self.xs.append(X)
        self.ys.append(y)
        self.used += len(X)
        return y

    def trajectory(self) -> Trajectory:
        return Trajectory(np.concatenate(self.xs), np.concatenate(self.ys))


# ---------------------------------------------------------------------------------------------------------------------
# Optimizers: (evaluator, dim, rng, seed, **options) -> None, filling the evaluator's budget


def _random_search(ev: _Evaluator, dim: int, rng: np.random.Generator, seed: int) -> None:
    ev(rng.random((ev.budget, dim)))


def _regularized_evolution(
    ev: _Evaluator,
    dim: int,
    rng: np.random.Generator,
    seed: int,
    population_size: int | None = None,
    sample_size: int | None = None,
    mutation_scale: float = REA_MUTATION_SCALE,
) -> None:
    if population_size is None:
        population_size = min(REA_POPULATION, max(2, ev.budget // 2))
    if sample_size is None:
        sample_size = max(1, round(population_size * REA_SAMPLE / REA_POPULATION))
    population: deque[tuple[np.ndarray, float]] = deque()
    while ev.remaining:
        if len(population) < population_size:
            child = rng.random(dim)
        else:
            drawn = rng.integers(0, len(population), size=sample_size)  # with replacement, as syne-tune
            parent = population[drawn[np.argmin([population[i][1] for i in drawn])]][0]
            child = parent.copy()
            j = rng.integers(dim)
            for _ in range(100):  # redraw until the value changes (only clipping can make it equal)
                child[j] = min(1.0, max(0.0, parent[j] + mutation_scale * rng.standard_normal()))
                if child[j] != parent[j]:
                    break
        population.append((child, float(_score(ev(child))[0])))
        if len(population) > population_size:
            population.popleft()


def _cma_es(
    ev: _Evaluator,
    dim: int,
    rng: np.random.Generator,
    seed: int,
    sigma0: float = CMA_SIGMA0,
    popsize: int | None = None,
) -> None:
    import cma

    options = {
        "bounds": [0.0, 1.0],
        "seed": np.nan,  # cma leaves numpy's global state alone; randomness comes from `randn`
        "randn": lambda lam, n: rng.standard_normal((lam, n)),
        "verbose": -9,
        "verb_log": 0,
        "verb_disp": 0,
    }
    if popsize is not None:
        options["popsize"] = popsize
    worst = -np.inf  # the largest finite y seen, for the penalty
    x0 = np.full(dim, 0.5)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        es = cma.CMAEvolutionStrategy(x0, sigma0, options)
        while ev.remaining:
            if es.stop():
                es = cma.CMAEvolutionStrategy(rng.random(dim), sigma0, options)
            candidates = np.asarray(es.ask())
            y = ev(candidates[: ev.remaining])
            if len(y) < len(candidates):
                break
            finite = np.isfinite(y)
            if finite.any():
                worst = max(worst, float(y[finite].max()))
            penalty = worst + max(1.0, abs(worst)) if np.isfinite(worst) else 1.0
            es.tell(list(candidates), np.where(finite, y, penalty).tolist())


def _local_search(
    ev: _Evaluator,
    dim: int,
    rng: np.random.Generator,
    seed: int,
    step: float = LS_STEP,
    shrink: float = LS_SHRINK,
    patience: int = LS_PATIENCE,
    min_step: float = LS_MIN_STEP,
) -> None:
    current, current_y, size, failures = None, np.inf, step, 0
    while ev.remaining:
        if current is None or size < min_step:  # (re)start
            current = rng.random(dim)
            current_y, size, failures = float(_score(ev(current))[0]), step, 0
            continue
        candidate = np.clip(current + size * rng.standard_normal(dim), 0.0, 1.0)
        y = float(_score(ev(candidate))[0])
        if y < current_y:
            current, current_y, failures = candidate, y, 0
        else:
            failures += 1
            if failures == patience:
                size, failures = size * shrink, 0


def _tpe(ev: _Evaluator, dim: int, rng: np.random.Generator, seed: int, n_startup_trials: int = 10) -> None:
    import optuna
    from optuna.trial import TrialState

    optuna_logger = logging.getLogger("optuna")
    level = optuna_logger.level
    optuna.logging.set_verbosity(optuna.logging.ERROR)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            sampler = optuna.samplers.TPESampler(seed=seed, n_startup_trials=n_startup_trials)
            study = optuna.create_study(direction="minimize", sampler=sampler)
            while ev.remaining:
                trial = study.ask()
                u = np.array([trial.suggest_float(f"u{j}", 0.0, 1.0) for j in range(dim)])
                y = float(ev(u)[0])
                if np.isfinite(y):
                    study.tell(trial, y)
                else:
                    study.tell(trial, state=TrialState.FAIL)
    finally:
        optuna_logger.setLevel(level)


_RUNNERS: dict[str, Callable[..., None]] = {
    "RS": _random_search,
    "REA": _regularized_evolution,
    "CMA": _cma_es,
    "LS": _local_search,
    "TPE": _tpe,
}
OPTIMIZER_OPTIONS: dict[str, tuple[str, ...]] = {
    "RS": (),
    "REA": ("population_size", "sample_size", "mutation_scale"),
    "CMA": ("sigma0", "popsize"),
    "LS": ("step", "shrink", "patience", "min_step"),
    "TPE": ("n_startup_trials",),
}


def _box(lo: Any, hi: Any) -> tuple[np.ndarray, np.ndarray]:
    lo, hi = np.asarray(lo, dtype=float), np.asarray(hi, dtype=float)
    if lo.ndim != 1 or lo.shape != hi.shape or lo.size == 0:
        raise ValueError(f"lo and hi must be flat and of equal, non-zero length; got {lo.shape}, {hi.shape}")
    for name, bound in (("lo", lo), ("hi", hi)):
        bad = np.flatnonzero(~np.isfinite(bound))
        if bad.size:
            raise ValueError(f"{name}[{bad[0]}] must be finite, got {bound[bad[0]]}")
    bad = np.flatnonzero(~(lo < hi))
    if bad.size:
        j = int(bad[0])
        raise ValueError(f"lo[{j}]={lo[j]} must be < hi[{j}]={hi[j]} (coordinate {j})")
    return lo, hi


def run_optimizer(name: str, f: Callable, lo: Any, hi: Any, budget: int, seed: int, **options: Any) -> Trajectory:
    """Run optimizer ``name`` (one of :data:`OPTIMIZERS`) for exactly ``budget`` evaluations of
    ``f(X (n, d)) -> y (n,)`` on [lo, hi]. The run is a deterministic function of ``seed``. ``options``
    override the paper settings listed in :data:`OPTIMIZER_OPTIONS`."""
    if name not in _RUNNERS:
        raise ValueError(f"unknown optimizer {name!r}; known: {', '.join(OPTIMIZERS)}")
    unknown = sorted(set(options) - set(OPTIMIZER_OPTIONS[name]))
    if unknown:
        raise ValueError(f"{name} has no option(s) {unknown}; allowed: {OPTIMIZER_OPTIONS[name]}")
    lo, hi = _box(lo, hi)
    check_int("budget", budget, 1)
    check_int("seed", seed, 0)
    ev = _Evaluator(f, lo, hi, int(budget))
    _RUNNERS[name](ev, lo.size, np.random.default_rng(int(seed)), int(seed), **options)
    if ev.remaining:  # a bug in an optimizer, not a user error
        raise RuntimeError(f"{name} stopped with {ev.remaining} of {budget} trials unused")
    return ev.trajectory()


# ---------------------------------------------------------------------------------------------------------------------
# Long table


def trajectories_table(rows: Iterable[Mapping[str, Any]]) -> pd.DataFrame:
    """The long schema :data:`TRAJECTORY_COLUMNS`, one row per trial, for Parquet.

    Each input row is a mapping with ``bb_id``, ``family``, ``optimizer``, ``seed`` and ``trajectory`` (a
    :class:`Trajectory`). ``dim`` comes from the trajectory, ``trial`` is 0-based, and ``x`` is a list of floats.
    """
    parts = []
    for k, row in enumerate(rows):
        missing = [key for key in ("bb_id", "family", "optimizer", "seed", "trajectory") if key not in row]
        if missing:
            raise ValueError(f"row {k} lacks {missing}")
        traj = row["trajectory"]
        if not isinstance(traj, Trajectory):
            raise ValueError(f"row {k}: trajectory must be a Trajectory, got {type(traj).__name__}")
        n = traj.n_trials
        parts.append(
            pd.DataFrame(
                {
                    "bb_id": np.full(n, str(row["bb_id"]), dtype=object),
                    "family": np.full(n, str(row["family"]), dtype=object),
                    "dim": np.full(n, traj.dim, dtype=np.int64),
                    "optimizer": np.full(n, str(row["optimizer"]), dtype=object),
                    "seed": np.full(n, int(row["seed"]), dtype=np.int64),
                    "trial": np.arange(n, dtype=np.int64),
                    "x": traj.x.tolist(),
                    "y": traj.y,
                    "valid": traj.valid,
                }
            )
        )
    if not parts:
        empty = {c: pd.Series(dtype=object) for c in TRAJECTORY_COLUMNS}
        empty.update({c: pd.Series(dtype=np.int64) for c in ("dim", "seed", "trial")})
        empty.update(y=pd.Series(dtype=np.float64), valid=pd.Series(dtype=bool))
        return pd.DataFrame(empty, columns=list(TRAJECTORY_COLUMNS))
    return pd.concat(parts, ignore_index=True)[list(TRAJECTORY_COLUMNS)]


def generate_trajectories(
    specs: Iterable[BlackBoxSpec],
    optimizer: str,
    seeds: Iterable[int],
    budget: int,
    seed: int,
    log: Callable[[str], None] | None = None,
) -> tuple[pd.DataFrame, dict]:
    """Optimizer ``optimizer`` on every black box of ``specs`` once per run seed k of ``seeds`` (seeded by
    ``1000 seed + k``): the long table (:func:`trajectories_table`) and the throughput (trajectories,
    evaluations, invalid trials, seconds, evaluations per second). ``log`` receives progress every 25 boxes."""
    specs, seeds = list(specs), list(seeds)
    rows, start, evaluations = [], time.perf_counter(), 0
    for k, spec in enumerate(specs, start=1):
        box = make_blackbox(spec)
        for run_seed in seeds:
            trajectory = run_optimizer(optimizer, box, spec.lo, spec.hi, budget, seed * 1000 + run_seed)
            rows.append(
                {
                    "bb_id": spec.bb_id,
                    "family": spec.family,
                    "optimizer": optimizer,
                    "seed": run_seed,
                    "trajectory": trajectory,
                }
            )
            evaluations += trajectory.n_trials
        if log is not None and (k % 25 == 0 or k == len(specs)):
            rate = evaluations / (time.perf_counter() - start)
            log(f"{optimizer}: {k} of {len(specs)} boxes, {rate:.0f} evaluations/s")
    seconds = time.perf_counter() - start
    table = trajectories_table(rows)
    throughput = {
        "trajectories": len(rows),
        "evaluations": evaluations,
        "invalid": int((~table["valid"]).sum()),
        "seconds": seconds,
        "evaluations_per_s": evaluations / seconds,
    }
    return table, throughput
