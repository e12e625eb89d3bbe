"""Trajectories of one optimizer on every black box of one family (all splits), one run per seed: the long table
(bb_id, family, dim, optimizer, seed, trial, x, y, valid) and the generation throughput. A black box that
returns NaN/inf is recorded (valid = False), not fatal."""

import time

import pandas as pd

from neurips26.bbo_pile.blackboxes import make_blackbox, specs_from_catalog
from neurips26.bbo_pile.optimizers import run_optimizer, trajectories_table
from neurips26.common.io import write_parquet
from neurips26.common.runtime import job_provenance, start_job

params, wc, out = snakemake.params, snakemake.wildcards, snakemake.output
log = start_job(snakemake, seed=params.seed)
boxes = pd.read_parquet(snakemake.input.blackboxes)
specs = [s for s in specs_from_catalog(boxes) if s.family == wc.family]
rows, start, evaluations, seconds_in_f = [], time.perf_counter(), 0, 0.0
for k, spec in enumerate(specs, start=1):
    box = make_blackbox(spec)
    for seed in params.seeds:
        trajectory = run_optimizer(wc.optimizer, box, spec.lo, spec.hi, params.budget, params.seed * 1000 + seed)
        rows.append(
            {
                "bb_id": spec.bb_id,
                "family": spec.family,
                "optimizer": wc.optimizer,
                "seed": seed,
                "trajectory": trajectory,
            }
        )
        evaluations += trajectory.n_trials
    if k % 25 == 0 or k == len(specs):
        log.info(
            "%s on %s: %d of %d boxes, %.0f evaluations/s",
            wc.optimizer,
            wc.family,
            k,
            len(specs),
            evaluations / (time.perf_counter() - start),
        )
seconds = time.perf_counter() - start
table = trajectories_table(rows)
invalid = int((~table["valid"]).sum())
log.info("%d trajectories, %d trials (%d with a non-finite value) in %.1f s", len(rows), len(table), invalid, seconds)
prov = job_provenance(snakemake, params.seed)
write_parquet(table, out.trajectories, prov)
write_parquet(
    pd.DataFrame(
        [
            {
                "family": wc.family,
                "optimizer": wc.optimizer,
                "trajectories": len(rows),
                "evaluations": evaluations,
                "invalid": invalid,
                "seconds": seconds,
                "evaluations_per_s": evaluations / seconds,
            }
        ]
    ),
    out.throughput,
    prov,
)
