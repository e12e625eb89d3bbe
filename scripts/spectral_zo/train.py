"""Train one method ({dataset}/{method}) of paper 13 at the matched forward-pass budget: its learning rate picked
from the shared grid on the validation split (tuning seed), then each seed on the train split, scored on the test
split. A run whose loss turns non-finite stops at that step: the log and the table say which, and its last checkpoint
is kept (loop.finish is called for finished runs only)."""

import numpy as np
import pandas as pd

from neurips26.common import loop
from neurips26.common.checkpoint import fingerprint
from neurips26.common.io import write_parquet
from neurips26.common.runtime import job_provenance, start_job
from neurips26.spectral_zo import experiment

p, w = snakemake.params, snakemake.wildcards
log = start_job(snakemake, 0)
arrays = dict(np.load(snakemake.input.data))
network = experiment.network_for(p.dataset, arrays["x_train"][0].size)
tuning, lr = experiment.tune(p.method, network, arrays, p.train, log.info)
log.info("%s on %s: lr %g chosen on the validation split", w.method, w.dataset, lr)
base = loop.checkpoint_path(snakemake.output.curves)
stamp = fingerprint(dict(p), [snakemake.input.data])
rows = []
for seed in p.train["seeds"]:
    settings = loop.LoopSettings(checkpoint=base.with_name(f"{base.name}.s{seed}"), fingerprint=stamp,
                                 every_steps=None, name=f"spectral_zo {w.dataset} {w.method} seed {seed}")  # fmt: skip
    result = experiment.train_seed(p.method, network, arrays, p.train, lr, seed, settings)
    for row in result.rows:
        rows.append({**row, "seed": seed, "lr": lr, "diverged_step": result.diverged_step,
                     "passes_per_step": result.passes_per_step, "budget": p.train["budget"]})  # fmt: skip
    if result.diverged:
        log.warning("seed %d diverged at step %d (%s); checkpoint kept at %s", seed, result.diverged_step,
                    result.diverged, settings.checkpoint)  # fmt: skip
    else:
        loop.finish(settings)
    log.info("seed %d: test accuracy %.4f after %d steps", seed, result.rows[-1]["test_accuracy"], result.steps)
prov = job_provenance(snakemake)
meta = {"dataset": w.dataset, "method": w.method}
write_parquet(pd.DataFrame(tuning).assign(**meta), snakemake.output.tuning, prov)
write_parquet(pd.DataFrame(rows).assign(**meta), snakemake.output.curves, prov)
