"""Paper 08's figures: the production-evaluation gap per flaw type and backend beside the paper's range, probe
accuracy per layer, answer-patching flip rates per layer."""

import pandas as pd

from neurips26.common.figures import save_figure
from neurips26.common.runtime import start_job
from neurips26.vair import plots
from neurips26.vair.summary import PAPER_FLIP_RATES, PAPER_GAP_RANGE, PAPER_PROBE

inp, out = snakemake.input, snakemake.output
log = start_job(snakemake)
save_figure(plots.gap_bars(pd.read_parquet(inp.gap), PAPER_GAP_RANGE), out.gap)
save_figure(plots.probe_lines(pd.read_parquet(inp.probes), PAPER_PROBE), out.probes)
save_figure(plots.patching_lines(pd.read_parquet(inp.patching), PAPER_FLIP_RATES), out.patching)
log.info("figures written: %s", list(out.keys()))
