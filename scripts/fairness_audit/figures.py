"""Paper 06's figures: measure vs true bias per notion, Shapley bars per data set, the axiom table and the
feature-selection curves."""

import pandas as pd

from neurips26.common.figures import save_figure
from neurips26.common.runtime import start_job
from neurips26.fairness_audit import plots
from neurips26.fairness_audit.measures import MEASURES

inp, out, params = snakemake.input, snakemake.output, snakemake.params
log = start_job(snakemake)
by_notion = {n: [m for m in params.measures if MEASURES[m].notion == n] for n in ("SP", "EO")}
shapley = pd.read_parquet(inp.shapley)
shapley = shapley[shapley["estimator"] == "ce"]
shown = ["B_SP", "B_EO", *params.selection_measures.values()]
save_figure(
    plots.measure_vs_true_bias(pd.read_parquet(inp.coalitions), pd.read_parquet(inp.true_bias), by_notion),
    out.measure_vs_true_bias,
)
save_figure(
    plots.shapley_bars(
        shapley, list(dict.fromkeys(shapley["dataset"])), [m for m in dict.fromkeys(shown) if m in params.measures]
    ),
    out.shapley_bars,
)
save_figure(plots.axiom_figure(pd.read_parquet(inp.axioms)), out.axioms)
save_figure(
    plots.selection_curves(pd.read_parquet(inp.selection), pd.read_parquet(inp.random_removal)), out.selection_curves
)
log.info("figures written: %s", list(out.keys()))
