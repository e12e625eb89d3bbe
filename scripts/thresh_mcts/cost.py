"""M5: per-round cost against the number of leaves K: node operations counted by each rule and wall time,
on complete trees of growing depth, for a fixed number of rounds without stopping; the rules are timed side by
side, `repeats` times each, so that the timing noise is measured."""

import numpy as np
import pandas as pd

from neurips26.common.io import write_parquet
from neurips26.common.runtime import job_provenance, start_job
from neurips26.thresh_mcts import algorithms, instances

params = snakemake.params
log = start_job(snakemake, seed=params.seed)
cfg, rows = params.cost, []
for depth in cfg["depths"]:
    inst = instances.random_instance(
        f"cost_d{depth}",
        depth=depth,
        branching=cfg["branching"],
        gap=0.05,
        seed=params.seed + depth,
        kind="bernoulli",
        t_star_max=np.inf,
    )
    shape, mu, theta, kind = instances.instance_problem(inst)
    t_max = shape.n_leaves + cfg["rounds"]
    tape = instances.reward_tape(mu, kind, t_max, seed=params.seed + depth)
    for repeat, rule in ((r, rule) for r in range(cfg["repeats"]) for rule in cfg["rules"]):  # rules interleaved
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
        log.info(
            "K = %d, %s: %.1f ops and %.1f us per round",
            shape.n_leaves,
            rule,
            rows[-1]["ops_per_round"],
            rows[-1]["microseconds_per_round"],
        )
write_parquet(pd.DataFrame(rows), snakemake.output[0], job_provenance(snakemake, params.seed))
