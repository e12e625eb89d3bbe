"""Runs of one sampling rule on every instance and delta: R independent runs advance together (vectorised over
runs), each reading its own seeded reward tape; the GLR stopping rule answers whether V >= theta."""

import time

import numpy as np
import pandas as pd

from neurips26.common.io import write_parquet
from neurips26.common.runtime import job_provenance, start_job
from neurips26.thresh_mcts import batch, instances

TAPE_BYTES = 2**28  # reward tapes of at most 256 MB at a time: runs are simulated in chunks that fit

params, rule = snakemake.params, snakemake.wildcards.algo
log = start_job(snakemake, seed=params.seed)
table = pd.read_parquet(snakemake.input.instances)
frames = []
for index, record in enumerate(table.to_dict("records")):
    shape, mu, theta, kind = instances.instance_problem(record)
    truth = bool(record["value"] >= theta)
    for delta in params.deltas:
        start = time.perf_counter()
        taus, answers, censored = [], [], []
        dtype = np.uint8 if kind == "bernoulli" else np.float64  # 0/1 rewards fit a byte: 8x more runs per chunk
        chunk = max(1, min(params.runs, TAPE_BYTES // (np.dtype(dtype).itemsize * shape.n_leaves * params.t_max)))
        for first in range(0, params.runs, chunk):
            runs = range(first, min(first + chunk, params.runs))
            # the same tapes for every rule and delta: run r of instance i reads seed (seed, i, r)
            tapes = np.stack(
                [
                    instances.reward_tape(mu, kind, params.t_max, seed=params.seed * 10**6 + index * 10**4 + r)
                    for r in runs
                ]
            ).astype(dtype)
            result = batch.run_batch(
                shape, theta, kind, tapes, delta, rule, params.t_max, mu_true=mu, conservative=params.conservative
            )
            taus.append(result.tau)
            answers.append(result.answer)
            censored.append(result.censored)
        tau, answer, cens = np.concatenate(taus), np.concatenate(answers), np.concatenate(censored)
        seconds = time.perf_counter() - start
        frames.append(
            pd.DataFrame(
                {
                    "rule": rule,
                    "instance": record["id"],
                    "delta": delta,
                    "run": np.arange(len(tau)),
                    "tau": tau,
                    "censored": cens,
                    "correct": (answer == truth) & ~cens,
                }
            )
        )
        log.info(
            "%s delta %g: mean tau %.0f, errors %d, censored %d, %.1f s (%.0f pulls/s)",
            record["id"],
            delta,
            tau[~cens].mean() if (~cens).any() else np.nan,
            int(((answer != truth) & ~cens).sum()),
            int(cens.sum()),
            seconds,
            tau.sum() / seconds,
        )
write_parquet(pd.concat(frames, ignore_index=True), snakemake.output[0], job_provenance(snakemake, params.seed))
