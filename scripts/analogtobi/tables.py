"""Gather the sample sets' metrics: the ablation table per (configuration, decoding, seed) and over seeds, the
per-type table of the main configuration, throughput (circuits per second with and without the grammar, ngspice
simulations per second) and the training curves."""

import pandas as pd

from neurips26.analogtobi.summary import ablation_rows, ablation_summary, per_type_table
from neurips26.common.io import write_parquet
from neurips26.common.runtime import job_provenance, start_job

inp, out = snakemake.input, snakemake.output
main = snakemake.params.main
log = start_job(snakemake)
metrics = pd.concat([pd.read_parquet(p) for p in inp.metrics], ignore_index=True)
reference = pd.read_parquet(inp.reference)
ablation = ablation_rows(metrics, reference)
summary = ablation_summary(ablation)
per_type = per_type_table(metrics, reference, main["config"], main["decoding"])
timings = [pd.read_parquet(p) for p in inp.timings]
sampling = pd.concat([t for t in timings if "circuits_per_s" in t], ignore_index=True)
spice = pd.concat([t for t in timings if "simulations_per_s" in t], ignore_index=True)
throughput = sampling.merge(spice, on=["config", "seed"], how="left")
training = pd.concat([pd.read_parquet(p) for p in inp.curves], ignore_index=True)
for r in summary.itertuples():
    log.info("%s %s: validity %.3f novelty %.3f memorisation %.3f electrical %.3f", r.config, r.decoding, r.validity,
             r.novelty, r.memorisation, r.electrical)  # fmt: skip
prov = job_provenance(snakemake)
write_parquet(ablation, out.ablation, prov)
write_parquet(summary, out.summary, prov)
write_parquet(per_type, out.per_type, prov)
write_parquet(throughput, out.throughput, prov)
write_parquet(training, out.training, prov)
