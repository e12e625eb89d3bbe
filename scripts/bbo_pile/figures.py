"""Paper 05's figures: scaling of the validation loss with compute and the fitted law, regret curves per method,
the imitation matrix and the dataset statistics."""

import pandas as pd

from neurips26.bbo_pile import plots
from neurips26.bbo_pile.regret import evaluation_run
from neurips26.bbo_pile.summary import read_tables, seed_rows
from neurips26.common.figures import save_figure
from neurips26.common.runtime import start_job

inp, out, params = snakemake.input, snakemake.output, snakemake.params
log = start_job(snakemake)
training = seed_rows(read_tables(inp.training), params.seed)  # the scaling runs: the scale's seed
save_figure(plots.scaling(training, pd.read_parquet(inp.runs), pd.read_parquet(inp.scaling).iloc[0]), out.scaling)
save_figure(plots.regret_curves(evaluation_run(pd.read_parquet(inp.regret))), out.regret_curves)
save_figure(plots.imitation_matrix(pd.read_parquet(inp.imitation)), out.imitation)
save_figure(plots.dataset(pd.read_parquet(inp.data)), out.dataset)
log.info("figures written: %s", list(out.keys()))
