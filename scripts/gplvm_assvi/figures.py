"""Paper 17's figures: latent spaces, uncertainty maps (first seed) and the metric bars with the seed spread."""

import pandas as pd

from neurips26.common.figures import save_figure
from neurips26.common.runtime import start_job
from neurips26.gplvm_assvi import plots
from neurips26.gplvm_assvi.summary import metric_table

inp, out = snakemake.input, snakemake.output
log = start_job(snakemake)
latents, grids = pd.read_parquet(inp.latents), pd.read_parquet(inp.grids)
seed = snakemake.params.seeds[0]
save_figure(plots.latent_spaces(latents, grids, seed), out.latent_spaces)
save_figure(plots.uncertainty_maps(grids, latents, seed), out.uncertainty_maps)
save_figure(plots.metric_bars(metric_table(pd.read_parquet(inp.metrics))), out.metrics)
log.info("figures written: %s", list(out.keys()))
