"""Paper 07's figures: validation-loss curves at the best LR, best-LR losses with seeds, LR sensitivity, spectra."""

import pandas as pd

from neurips26.common.figures import save_figure
from neurips26.common.runtime import start_job
from neurips26.symm_optim import plots

inp, out = snakemake.input, snakemake.output
log = start_job(snakemake)
runs, best = pd.read_parquet(inp.runs), pd.read_parquet(inp.best)
save_figure(plots.val_loss_curves(pd.read_parquet(inp.curves), best), out.val_loss_curves)
save_figure(plots.best_lr_bars(best, runs), out.best_lr)
save_figure(plots.lr_sensitivity(runs), out.lr_sensitivity)
save_figure(plots.spectra(pd.read_parquet(inp.spectra), best), out.spectra)
log.info("figures written: %s", list(out.keys()))
