"""Paper 11's figures: anomaly maps beside the ground truth (primary dataset, first seed), the class-mean metrics with
the seed spread, and parameters against multiply-adds."""

import numpy as np
import pandas as pd

from neurips26.common.figures import save_figure
from neurips26.common.runtime import start_job
from neurips26.ecfr import plots

inp, out = snakemake.input, snakemake.output
log = start_job(snakemake)
primary = snakemake.params.primary
examples = dict(np.load(inp.examples[list(snakemake.params.datasets).index(primary)]))
save_figure(plots.anomaly_maps(examples), out.anomaly_maps)
save_figure(plots.metric_bars(pd.read_parquet(inp.metrics), primary), out.metrics)
save_figure(plots.complexity(pd.read_parquet(inp.complexity)), out.complexity)
log.info("figures written: %s", list(out.keys()))
