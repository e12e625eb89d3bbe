"""The implementation checks of paper 12, as tables: the tree DP for T* against a brute-force linear program of
the lower bound (M7; :func:`theory.lp_characteristic_time`), and the incremental ratio rule against its full
recomputation on shared reward tapes (M6; the paper's abstract: per-round cost "from linear to logarithmic"
with the same decisions).
"""

from __future__ import annotations

import logging

import numpy as np
import pandas as pd

from . import algorithms
from .instances import instance_problem, random_instance, reward_tape
from .theory import characteristic_time, lp_characteristic_time
from .tree import complete_tree, value


def lp_check_trees(instances: pd.DataFrame, max_leaves: int, seed: int, draws: int = 40) -> list[tuple]:
    """The trees the DP is checked on, as ``(source, name, tree, mu, theta, kind)``: every instance with at most
    `max_leaves` leaves, then random small complete trees (`draws` draws of depth 1-3 and branching 2-3, those
    with at most `max_leaves` leaves kept) with random root labels, means in [0.05, 0.95], theta 0.02-0.2 from
    the root value on a random side, alternating Bernoulli and Gaussian rewards."""
    trees = []
    for record in instances.to_dict("records"):
        shape, mu, theta, kind = instance_problem(record)
        if shape.n_leaves <= max_leaves:
            trees.append(("instance", record["id"], shape, mu, theta, kind))
    rng = np.random.default_rng(seed)
    for i in range(draws):
        depth, branching = int(rng.integers(1, 4)), int(rng.integers(2, 4))
        if branching**depth > max_leaves:
            continue
        shape = complete_tree(depth, branching, root_label=str(rng.choice(["MAX", "MIN"])))
        mu = rng.uniform(0.05, 0.95, shape.n_leaves)
        theta = float(np.clip(value(shape, mu) + rng.choice([-1, 1]) * rng.uniform(0.02, 0.2), 0.01, 0.99))
        trees.append(("random", f"random{i}", shape, mu, theta, ["bernoulli", "gaussian"][i % 2]))
    return trees


def lp_check(trees: list[tuple]) -> pd.DataFrame:
    """Per tree of :func:`lp_check_trees`: T* by the DP and by the LP, and their relative difference."""
    rows = []
    for source, name, shape, mu, theta, kind in trees:
        dp = characteristic_time(shape, mu, theta, kind).t_star
        lp = lp_characteristic_time(shape, mu, theta, kind)
        rows.append(
            {
                "source": source,
                "tree": name,
                "kind": kind,
                "n_leaves": shape.n_leaves,
                "t_star_dp": dp,
                "t_star_lp": lp,
                "relative_error": abs(dp - lp) / lp,
            }
        )
    return pd.DataFrame(rows)


def equivalence_instances(n: int, seed: int) -> list[dict]:
    """`n` random instances for the equivalence check: complete trees of depth 2-3 and branching 2-4, gap 0.05
    or 0.1, random root label, Bernoulli and Gaussian rewards in turn."""
    rng = np.random.default_rng(seed)
    out = []
    for i in range(n):
        out.append(
            random_instance(
                f"E{i}",
                depth=int(rng.integers(2, 4)),
                branching=int(rng.integers(2, 5)),
                gap=float(rng.choice([0.05, 0.1])),
                seed=int(rng.integers(2**31)),
                kind=("bernoulli", "gaussian")[i % 2],
                root_label=str(rng.choice(["MAX", "MIN"])),
            )
        )
    return out


def equivalence(
    n_instances: int, seeds: int, t_max: int, delta: float, seed: int, log: logging.Logger | None = None
) -> pd.DataFrame:
    """Whether the incremental ratio rule (O(log K) per round) and the full recomputation pull exactly the same
    leaves, run by run: `seeds` shared reward tapes on each of :func:`equivalence_instances`. One row per
    (instance, tape seed) with the number of pulls compared and ``identical``."""
    rows = []
    for i, inst in enumerate(equivalence_instances(n_instances, seed)):
        shape, mu, theta, kind = instance_problem(inst)
        for tape_seed in range(seeds):
            tape = reward_tape(mu, kind, t_max, seed=10**6 + 100 * i + tape_seed)
            full, fast = (
                algorithms.run(shape, theta, kind, tape, delta, rule, t_max, record=True)
                for rule in ("ratio", "ratio_incremental")
            )
            same = np.array_equal(full.pulls, fast.pulls)
            rows.append(
                {
                    "instance": inst["id"],
                    "kind": kind,
                    "n_leaves": shape.n_leaves,
                    "seed": tape_seed,
                    "rounds": len(full.pulls),
                    "identical": bool(same),
                }
            )
            if not same and log is not None:
                log.warning("%s seed %d: the incremental rule departs from the full one", inst["id"], tape_seed)
    return pd.DataFrame(rows)
