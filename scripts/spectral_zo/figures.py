"""Paper 13's figures (alignment against probes and against dimension, accuracy curves with seed bands) and the
training and tuning tables of every (dataset, group) training job joined (one job: the join is a read of a few small
tables)."""

import pandas as pd

from neurips26.common.figures import save_figure
from neurips26.common.io import write_parquet
from neurips26.common.runtime import job_provenance, start_job
from neurips26.spectral_zo import plots

inp, out = snakemake.input, snakemake.output
log = start_job(snakemake)
prov = job_provenance(snakemake)
joined = {}
for name in ("curves", "tuning"):
    joined[name] = pd.concat([pd.read_parquet(f) for f in inp[f"runs_{name}"]], ignore_index=True)
    write_parquet(joined[name], out[name], prov)
    log.info("%s: %d rows from %d jobs", name, len(joined[name]), len(inp[f"runs_{name}"]))
save_figure(plots.alignment_vs_probes(pd.read_parquet(inp.alignment)), out.alignment_probes)
save_figure(plots.alignment_vs_dimension(pd.read_parquet(inp.dimension)), out.alignment_dimension)
save_figure(plots.accuracy_curves(joined["curves"]), out.accuracy)
log.info("figures written: %s", list(out.keys()))
