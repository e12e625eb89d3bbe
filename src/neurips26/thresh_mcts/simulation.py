"""Runs of the sampling rules on instances, as tables: the stopping experiment (every rule, instance and delta,
many runs on seeded reward tapes) and the per-round cost sweep (no stopping, growing trees, timed).

Reward tapes are common random numbers: run ``r`` of the instance in row ``i`` of the instance table reads the
tape seeded by :func:`tape_seed` ``(seed, i, r)``, whatever the rule and delta (common random numbers), so every
rule answers on the same rewards.
"""

from __future__ import annotations

import logging
import time

import numpy as np
import pandas as pd

from . import algorithms
from .batch import run_batch
from .instances import instance_problem, random_instance, reward_draws, reward_tape

TAPE_BYTES = 2**28  # reward tapes of at most 256 MB at a time: runs are simulated in chunks that fit


def tape_seed(seed: int, instance_index: int, run: int) -> int:
    """The seed of run `run`'s reward tape on the instance in row `instance_index` (the same for every rule and
    delta)."""
    return seed * 10**6 + instance_index * 10**4 + run


def tape_dtype(kind: str) -> np.dtype:
    """The tapes' storage type: 0/1 Bernoulli rewards fit a byte (8x more runs per chunk than float64)."""
    return np.dtype(np.uint8 if kind == "bernoulli" else np.float64)


def runs_per_chunk(n_leaves: int, t_max: int, runs: int, kind: str, budget: int | None = None) -> int:
    """How many runs' tapes (K x t_max rewards each) fit in `budget` bytes (default :data:`TAPE_BYTES`) at once (at
    least one)."""
    budget = TAPE_BYTES if budget is None else budget
    return max(1, min(runs, budget // (tape_dtype(kind).itemsize * n_leaves * t_max)))


def run_tapes(mu, kind: str, t_max: int, seed: int, instance_index: int, runs: range) -> np.ndarray:
    """``(len(runs), K, t_max)`` reward tapes of the given runs, in the storage type of :func:`tape_dtype`: the
    rewards of :func:`instances.reward_tape`, written run by run into one array (no float64 stack of all runs)."""
    mu = np.asarray(mu, dtype=float)
    out = np.empty((len(runs), mu.size, t_max), dtype=tape_dtype(kind))
    for i, r in enumerate(runs):
        out[i] = reward_draws(mu, kind, t_max, seed=tape_seed(seed, instance_index, r))
    return out


def simulate_rule(
    instances: pd.DataFrame,
    rule: str,
    deltas,
    runs: int,
    t_max: int,
    seed: int,
    conservative: bool = False,
    log: logging.Logger | None = None,
) -> pd.DataFrame:
    """`runs` runs of `rule` on every instance (rows of :func:`instances.instances_frame`) and delta, advanced
    together by :func:`batch.run_batch` (every delta in one batch, on the same tapes): one row per run with its
    stopping time ``tau``, whether it was censored at `t_max`, whether it stopped with the right answer
    (``V >= theta``), and M1's null: ``null_tau`` and ``null_correct``, the same run stopped where the GLR first
    exceeds the threshold without its confidence term (Track-and-Stop rules; -1 and False for LUCB)."""
    deltas = [float(d) for d in deltas]
    frames = []
    for index, record in enumerate(instances.to_dict("records")):
        shape, mu, theta, kind = instance_problem(record)
        truth = bool(record["value"] >= theta)
        # the tapes of a chunk are read once per delta: the budget holds len(deltas) copies
        chunk = runs_per_chunk(shape.n_leaves, t_max, runs, kind, TAPE_BYTES // len(deltas))
        start = time.perf_counter()
        parts = {d: [] for d in deltas}
        for first in range(0, runs, chunk):
            block = range(first, min(first + chunk, runs))
            tapes = run_tapes(mu, kind, t_max, seed, index, block)
            per_run_delta = np.repeat(deltas, len(block))
            result = run_batch(
                shape,
                theta,
                kind,
                np.concatenate([tapes] * len(deltas)) if len(deltas) > 1 else tapes,
                per_run_delta if len(deltas) > 1 else deltas[0],
                rule,
                t_max,
                mu_true=mu,
                conservative=conservative,
            )
            for j, delta in enumerate(deltas):
                take = slice(j * len(block), (j + 1) * len(block))
                parts[delta].append(
                    pd.DataFrame(
                        {
                            "rule": rule,
                            "instance": record["id"],
                            "delta": delta,
                            "run": np.asarray(block),
                            "tau": result.tau[take],
                            "censored": result.censored[take],
                            "correct": (result.answer[take] == truth) & ~result.censored[take],
                            "null_tau": result.null_tau[take],
                            "null_correct": (result.null_answer[take] == truth) & (result.null_tau[take] >= 0),
                        }
                    )
                )
        seconds = time.perf_counter() - start
        for delta in deltas:
            frame = pd.concat(parts[delta], ignore_index=True)
            frames.append(frame)
            if log is not None:
                stopped = ~frame["censored"]
                log.info(
                    "%s delta %g: mean tau %.0f, errors %d, censored %d, null errors %d (%.1f s for every delta)",
                    record["id"],
                    delta,
                    frame["tau"][stopped].mean() if stopped.any() else np.nan,
                    int((~frame["correct"] & stopped).sum()),
                    int((~stopped).sum()),
                    int((~frame["null_correct"] & (frame["null_tau"] >= 0)).sum()),
                    seconds,
                )
    return pd.concat(frames, ignore_index=True)


def per_round_cost(
    depths,
    branching: int,
    rounds: int,
    repeats: int,
    rules,
    seed: int,
    log: logging.Logger | None = None,
) -> pd.DataFrame:
    """The per-round cost against the number of leaves K (claim M5): on complete trees of each depth (random
    Bernoulli means, gap 0.05), every rule runs `rounds` rounds after the initial pulls without stopping; node
    operations are counted and wall time measured. The rules are timed side by side, interleaved, `repeats`
    times each, so that the timing noise is measured. One row per (rule, repeat, depth)."""
    rows = []
    for depth in depths:
        inst = random_instance(
            f"cost_d{depth}",
            depth=depth,
            branching=branching,
            gap=0.05,
            seed=seed + depth,
            kind="bernoulli",
            t_star_max=np.inf,
        )
        shape, mu, theta, kind = instance_problem(inst)
        t_max = shape.n_leaves + rounds
        # every leaf is pulled once before the rounds, so none is pulled more than rounds + 1 times: a tape of
        # t_max pulls per leaf would hold K x (K + rounds) rewards (26 GB at depth 10, K = 59,049)
        tape = reward_tape(mu, kind, rounds + 1, seed=seed + depth)
        for repeat, rule in ((r, rule) for r in range(repeats) for rule in rules):
            result = algorithms.run(shape, theta, kind, tape, 0.1, rule, t_max, mu_true=mu, stopping=False)
            rows.append(
                {
                    "rule": rule,
                    "repeat": repeat,
                    "depth": depth,
                    "n_leaves": shape.n_leaves,
                    "rounds": result.rounds,
                    "ops_per_round": result.ops_per_round,
                    "microseconds_per_round": 1e6 * result.round_seconds / result.rounds,
                    "rounds_per_second": result.rounds_per_second,
                }
            )
            if log is not None:
                log.info(
                    "K = %d, %s: %.1f ops and %.1f us per round",
                    shape.n_leaves,
                    rule,
                    rows[-1]["ops_per_round"],
                    rows[-1]["microseconds_per_round"],
                )
    return pd.DataFrame(rows)
