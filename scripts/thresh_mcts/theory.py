"""The characteristic time T* and optimal weights w* of every instance by the tree DP, the lower bounds
T* kl(delta, 1 - delta), and the DP checked against a brute-force linear program on small trees (M7)."""

import json

import numpy as np
import pandas as pd

from neurips26.common.io import write_parquet
from neurips26.common.runtime import job_provenance, start_job
from neurips26.thresh_mcts import evaluation, instances, theory, tree

params = snakemake.params
log = start_job(snakemake, seed=params.seed)
table = pd.read_parquet(snakemake.input.instances)
rows, checks = [], []
for record in table.to_dict("records"):
    shape, mu, theta, kind = instances.instance_problem(record)
    cert = theory.characteristic_time(shape, mu, theta, kind)
    rows += [
        {
            "instance": record["id"],
            "kind": kind,
            "n_leaves": shape.n_leaves,
            "t_star": cert.t_star,
            "weights": json.dumps(np.round(cert.weights, 12).tolist()),
            "delta": delta,
            "lower_bound": cert.t_star * evaluation.kl_bernoulli(delta, 1 - delta),
        }
        for delta in params.deltas
    ]
    if shape.n_leaves <= params.lp_check["max_leaves"]:
        checks.append(("instance", record["id"], shape, mu, theta, kind))
rng = np.random.default_rng(params.seed)
for i in range(40):  # random small trees with random labels and leaf means, both reward kinds
    depth, branching = int(rng.integers(1, 4)), int(rng.integers(2, 4))
    if branching**depth > params.lp_check["max_leaves"]:
        continue
    shape = tree.complete_tree(depth, branching, root_label=str(rng.choice(["MAX", "MIN"])))
    mu = rng.uniform(0.05, 0.95, shape.n_leaves)
    theta = float(np.clip(tree.value(shape, mu) + rng.choice([-1, 1]) * rng.uniform(0.02, 0.2), 0.01, 0.99))
    checks.append(("random", f"random{i}", shape, mu, theta, ["bernoulli", "gaussian"][i % 2]))
lp_rows = []
for source, name, shape, mu, theta, kind in checks:
    dp, lp = (
        theory.characteristic_time(shape, mu, theta, kind).t_star,
        theory.lp_characteristic_time(shape, mu, theta, kind),
    )
    lp_rows.append(
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
lp_check = pd.DataFrame(lp_rows)
log.info("DP vs LP on %d trees: max relative error %.2e", len(lp_check), lp_check["relative_error"].max())
prov = job_provenance(snakemake, params.seed)
write_parquet(pd.DataFrame(rows), snakemake.output.theory, prov)
write_parquet(lp_check, snakemake.output.lp_check, prov)
