"""Gather the runs: per-run outcomes, the best learning rate of each method (validation loss, paired deltas to the
baseline), the learning curves and the spectra."""

import pandas as pd

from neurips26.common.io import write_parquet
from neurips26.common.runtime import job_provenance, start_job
from neurips26.symm_optim.summary import best_learning_rates

inp, out, params = snakemake.input, snakemake.output, snakemake.params
log = start_job(snakemake)
runs = pd.concat([pd.read_parquet(p) for p in inp.summaries], ignore_index=True)
best = best_learning_rates(runs, {"dense": params.baseline, "moe": params.router_baseline})
for r in best.itertuples():
    log.info(
        "%s %s: best x%g, %.4f ± %.4f, delta %+.4f",
        r.arch,
        r.method,
        r.multiplier,
        r.val_loss_mean,
        r.val_loss_sd,
        r.delta_mean,
    )
curves = pd.concat([pd.read_parquet(p) for p in inp.steps], ignore_index=True)
spectra = pd.concat([pd.read_parquet(p) for p in inp.spectra], ignore_index=True)
prov = job_provenance(snakemake)
write_parquet(runs, out.runs, prov)
write_parquet(best, out.best, prov)
write_parquet(curves, out.curves, prov)
write_parquet(spectra, out.spectra, prov)
