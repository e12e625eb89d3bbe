"""Figure: flow-matching samples trained with each minibatch coupling plan, with W2 to the target."""

import pandas as pd

from neurips26.amortized_ot.experiment import group_names, unpack
from neurips26.amortized_ot.plots import cfm_figure, save_figure
from neurips26.common.io import load_npz
from neurips26.common.runtime import start_job

log = start_job(snakemake)
arrays = load_npz(snakemake.input.samples)
metrics = pd.read_parquet(snakemake.input.metrics)
base = metrics[(metrics["metric"] == "w2") & (metrics["seed"] == snakemake.params.seed)]  # the samples' seed
w2 = base.set_index("method")["value"].to_dict()
samples = {plan: unpack(arrays, plan) for plan in group_names(arrays)}
save_figure(cfm_figure(samples, w2), snakemake.output[0])
log.info("plans %s", sorted(samples))
