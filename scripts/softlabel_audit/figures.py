"""Paper 15's figures for the primary dataset: reliability diagrams of the difficult test items per condition (first
seed), data maps per condition (first seed), and the accuracy/ECE/KL bars with their seed spread."""

import pandas as pd

from neurips26.common.runtime import start_job
from neurips26.softlabel_audit.artifacts import read_items, read_runs
from neurips26.softlabel_audit.cartography import cartography
from neurips26.softlabel_audit.evaluation import test_subsets
from neurips26.softlabel_audit.metrics import reliability_bins
from neurips26.softlabel_audit.plots import cartography_maps, metric_bars, reliability_diagrams
from neurips26.softlabel_audit.summary import SIMULATED_NOTE

inp, out = snakemake.input, snakemake.output
log = start_job(snakemake)
items = read_items(inp.item_set)
runs = read_runs(inp.runs)
note = SIMULATED_NOTE if items.simulated else "CIFAR-10H human annotators"
first = min(m.seed for m in runs.members)
chosen = [i for i, m in enumerate(runs.members) if m.seed == first]
difficult = test_subsets(items, snakemake.params.difficult_quantile)["difficult"]
gold = items.original[items.indices("test")]
bins = {runs.members[i].condition: reliability_bins(runs.test_probs[i], gold, subset=difficult) for i in chosen}
reliability_diagrams(bins, out.reliability, f"{note}; difficult test items, seed {first}")
train = items.indices("train")
maps = {runs.members[i].condition: cartography(runs.gold_prob[i], runs.correct[i]) for i in chosen}
cartography_maps(maps, items.human_entropy[train], out.cartography, note=f"{note}; seed {first}")
metric_bars(pd.read_parquet(inp.metrics), out.metrics, note)
log.info("figures written")
