"""Paper 19's figures: training reward curves per advantage variant, the decoration table as bars, best-of-K
curves against the single-shot policies, PMO-lite top-10 curves, and a grid of the best decorations per test
scaffold (RDKit drawing)."""

import json
from pathlib import Path

import pandas as pd

from neurips26.amortix import plots
from neurips26.common.figures import save_figure
from neurips26.common.io import atomic_path
from neurips26.common.runtime import start_job

inp, out = snakemake.input, snakemake.output
log = start_job(snakemake)
logs = pd.concat([pd.read_parquet(p) for p in inp.rl], ignore_index=True)
samples = {Path(p).stem: pd.read_parquet(p) for p in inp.samples}
save_figure(plots.training_curves(logs), out.training_curves)
save_figure(plots.decoration_bars(pd.read_parquet(inp.decoration)), out.decoration_table)
save_figure(plots.best_of_k(pd.read_parquet(inp.best_of_k)), out.best_of_k)
save_figure(
    plots.pmo_curves(pd.concat([pd.read_parquet(p) for p in inp.pmo], ignore_index=True), snakemake.params.top_k),
    out.pmo_curves,
)
with atomic_path(out.molecules) as tmp:
    plots.molecule_grid(samples, list(samples)).save(tmp, format="PNG")
log.info("figures written: %s", json.dumps(list(out.keys())))
