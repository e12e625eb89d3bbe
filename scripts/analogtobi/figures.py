"""Paper 02's figures: the ablation's rates, example generated circuits drawn as bipartite graphs (the main
configuration's where it wrote valid ones, else another bipartite configuration's, named in each title), the
training curves."""

import pandas as pd

from neurips26.analogtobi import plots, serialize
from neurips26.common.figures import save_figure
from neurips26.common.runtime import start_job

inp, out = snakemake.input, snakemake.output
log = start_job(snakemake)
save_figure(plots.ablation(pd.read_parquet(inp.summary), pd.read_parquet(inp.ablation)), out.ablation)
main = snakemake.params.main
samples = pd.concat([pd.read_parquet(p) for p in inp.samples], ignore_index=True)
metrics = pd.concat([pd.read_parquet(p) for p in inp.metrics], ignore_index=True)
shown = plots.pick_examples(samples, metrics, main["config"], main["decoding"])
save_figure(plots.examples([(title, serialize.circuit_of(tokens)) for title, tokens in shown]), out.examples)
save_figure(plots.training_curves(pd.read_parquet(inp.training)), out.training_curves)
log.info("figures written: %s (%d example circuits)", list(out.keys()), len(shown))
