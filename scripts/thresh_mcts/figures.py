"""Figures of paper 12: sample complexity per rule and instance, error rate against delta, per-round cost
against K, and stopping times relative to T* ln(1/delta)."""

import pandas as pd

from neurips26.common.runtime import start_job
from neurips26.thresh_mcts import plots

inp, out = snakemake.input, snakemake.output
log = start_job(snakemake)
summary, slopes, cost = (pd.read_parquet(p) for p in (inp.summary, inp.slopes, inp.cost))
plots.save_figure(plots.sample_complexity(summary), out.sample_complexity)
plots.save_figure(plots.error_rates(summary), out.error_rates)
plots.save_figure(plots.per_round_cost(cost, slopes), out.per_round_cost)
plots.save_figure(plots.normalised_times(summary), out.normalised_times)
log.info("wrote 4 figures")
