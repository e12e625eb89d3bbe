"""Paper 09's figures: divergence rates per cell, the attention-logit proxy per setting, diagnostic traces per failure
mode, and the loss curves of every seed."""

import pandas as pd

from neurips26.common.figures import save_figure
from neurips26.common.runtime import start_job
from neurips26.noisy_divergence import plots
from neurips26.noisy_divergence.summary import failure_mode_cells

inp, out = snakemake.input, snakemake.output
log = start_job(snakemake)
runs, curves, diag = pd.read_parquet(inp.runs), pd.read_parquet(inp.curves), pd.read_parquet(inp.diag)
cells = failure_mode_cells(runs, snakemake.params.comparisons)
save_figure(plots.divergence_rates(pd.read_parquet(inp.divergence)), out.divergence_rates)
save_figure(plots.max_logit_by_setting(runs), out.max_logit_by_setting)
save_figure(plots.diagnostic_traces(diag, curves, cells), out.diagnostic_traces)
save_figure(plots.loss_curves(curves, cells), out.loss_curves)
log.info("figures written: %s", list(out.keys()))
