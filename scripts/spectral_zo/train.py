"""Train the methods of one group ({dataset}/{group}, train.groups) of paper 13 at the matched forward-pass budget,
on the job's device (loop.job_device(): the GPU that profiles/slurm gives the rule at paper scale, else the CPU):
each method's learning rate picked from the shared grid on the validation split (tuning seed), then each seed on the
train split, scored on the test split. A run whose loss turns non-finite stops at that step: the log and the table
say which, and its last checkpoint is kept (loop.finish is called for finished runs only)."""

import numpy as np
import pandas as pd

from neurips26.common import loop
from neurips26.common.checkpoint import fingerprint
from neurips26.common.io import write_parquet
from neurips26.common.runtime import job_provenance, start_job
from neurips26.spectral_zo import experiment
from neurips26.spectral_zo.estimators import set_probe_bound

p, w = snakemake.params, snakemake.wildcards
log = start_job(snakemake, 0)
device = loop.job_device()
set_probe_bound(p.probe_bytes)  # one batched pass's probes within a share of the job's memory request
arrays = dict(np.load(snakemake.input.data))
network = experiment.network_for(p.dataset, arrays["x_train"][0].size)
base = loop.checkpoint_path(snakemake.output.curves)
stamp = fingerprint(dict(p), [snakemake.input.data])
rows, tuning = [], []
for method, spec in p.methods.items():
    tried, lr = experiment.tune(spec, network, arrays, p.train, log.info, device=device)
    tuning += [{**row, "method": method} for row in tried]
    log.info("%s on %s: lr %g chosen on the validation split (device %s)", method, w.dataset, lr, device)
    for seed in p.train["seeds"]:
        checkpoint = base.with_name(f"{base.name}.{method}.s{seed}")
        settings = loop.LoopSettings(checkpoint=checkpoint, fingerprint=stamp, every_steps=None,
                                     name=f"spectral_zo {w.dataset} {method} seed {seed}")  # fmt: skip
        result = experiment.train_seed(spec, network, arrays, p.train, lr, seed, settings, device=device)
        for row in result.rows:
            rows.append({**row, "method": method, "seed": seed, "lr": lr, "diverged_step": result.diverged_step,
                         "passes_per_step": result.passes_per_step, "budget": p.train["budget"]})  # fmt: skip
        if result.diverged:
            log.warning("%s seed %d diverged at step %d (%s); checkpoint kept at %s", method, seed,
                        result.diverged_step, result.diverged, settings.checkpoint)  # fmt: skip
        else:
            loop.finish(settings)
        log.info("%s seed %d: test accuracy %.4f after %d steps", method, seed, result.rows[-1]["test_accuracy"],
                 result.steps)  # fmt: skip
prov = job_provenance(snakemake)
meta = {"dataset": w.dataset, "group": w.group}
write_parquet(pd.DataFrame(tuning).assign(**meta), snakemake.output.tuning, prov)
write_parquet(pd.DataFrame(rows).assign(**meta), snakemake.output.curves, prov)
