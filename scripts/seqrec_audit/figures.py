"""Paper 10's figures: the NDCG@10 table as a heatmap, TGH's relative gain against each shortcut diagnostic, and
the trained models' validation NDCG@10 per epoch."""

import pandas as pd

from neurips26.common.figures import save_figure
from neurips26.common.runtime import start_job
from neurips26.seqrec_audit import plots

inp, out = snakemake.input, snakemake.output
log = start_job(snakemake)
PROVENANCE = ["git_commit", "config_hash"]
wide = pd.read_parquet(inp.ndcg).drop(columns=PROVENANCE)
save_figure(plots.ndcg_heatmap(wide), out.ndcg_table)
save_figure(plots.gain_vs_diagnostics(pd.read_parquet(inp.gains).drop(columns=PROVENANCE)), out.gain_vs_diagnostics)
training = pd.concat([pd.read_parquet(p) for p in inp.training], ignore_index=True)
save_figure(plots.training_curves(training, wide), out.training_curves)
log.info("figures written: %s", list(out.keys()))
