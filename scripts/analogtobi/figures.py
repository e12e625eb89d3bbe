"""Paper 02's figures: the ablation's rates, example circuits of the main configuration drawn as bipartite graphs,
the training curves."""

import pandas as pd

from neurips26.analogtobi import plots, serialize
from neurips26.common.figures import save_figure
from neurips26.common.runtime import start_job

inp, out = snakemake.input, snakemake.output
log = start_job(snakemake)
save_figure(plots.ablation(pd.read_parquet(inp.summary), pd.read_parquet(inp.ablation)), out.ablation)
main = snakemake.params.main
shown = []
for samples_path, metrics_path in zip(inp.samples, inp.metrics):
    samples, metrics = pd.read_parquet(samples_path), pd.read_parquet(metrics_path)
    keep = (metrics["decoding"] == main["decoding"]) & metrics["valid"]
    for s, m in zip(samples[keep.to_numpy()].itertuples(), metrics[keep].itertuples()):
        if len(shown) < 6 and s.type not in [t for t, *_ in shown]:
            label = "novel" if m.novel else "in the training set"
            shown.append((s.type, f"{s.type} (seed {s.seed}; {label}; {m.spice})", s.tokens.split()))
save_figure(plots.examples([(title, serialize.circuit_of(tokens)) for _, title, tokens in shown]), out.examples)
save_figure(plots.training_curves(pd.read_parquet(inp.training)), out.training_curves)
log.info("figures written: %s (%d example circuits)", list(out.keys()), len(shown))
