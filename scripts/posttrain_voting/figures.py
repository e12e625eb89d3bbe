"""Paper 14's figures: violation frequency against regularisation per rule and axiom, the staged against joint
discrepancy, and the NLHF monotonicity search against the computed bound."""

import pandas as pd

from neurips26.common.figures import save_figure
from neurips26.common.runtime import start_job
from neurips26.posttrain_voting import plots

inp, out = snakemake.input, snakemake.output
log = start_job(snakemake)
axioms = pd.concat([pd.read_parquet(path) for path in inp.axioms], ignore_index=True)
save_figure(plots.violations(axioms), out.violations)
save_figure(plots.staged(axioms), out.staged)
save_figure(plots.threshold(pd.read_parquet(inp.threshold)), out.threshold)
log.info("figures written: %s", list(out.keys()))
