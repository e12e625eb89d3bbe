"""Paper 13's figures: alignment against probes and against dimension, accuracy curves with seed bands."""

import pandas as pd

from neurips26.common.figures import save_figure
from neurips26.common.runtime import start_job
from neurips26.spectral_zo import plots

inp, out = snakemake.input, snakemake.output
log = start_job(snakemake)
save_figure(plots.alignment_vs_probes(pd.read_parquet(inp.alignment)), out.alignment_probes)
save_figure(plots.alignment_vs_dimension(pd.read_parquet(inp.dimension)), out.alignment_dimension)
save_figure(plots.accuracy_curves(pd.read_parquet(inp.curves)), out.accuracy)
log.info("figures written: %s", list(out.keys()))
