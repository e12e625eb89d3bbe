"""Paper 10's tables: all metrics in long form, the NDCG@10 table across datasets and methods (with TGH's relative
gain over the best other method), seed spread, gains beside the diagnostics, TGH's cost beside the trained
models', the preprocessing counts per dataset, and NDCG@10 and diagnostics per run (the datasets and the
replicates of synthetic regimes with other data seeds) for the claims."""

import pandas as pd

from neurips26.common.io import write_parquet
from neurips26.common.runtime import job_provenance, start_job
from neurips26.seqrec_audit import summary

inp, out, params = snakemake.input, snakemake.output, snakemake.params
log = start_job(snakemake)
training_free = pd.concat([pd.read_parquet(p) for p in inp.training_free], ignore_index=True)
metrics = pd.concat([training_free, *(pd.read_parquet(p) for p in inp.trained)], ignore_index=True)
training = pd.concat([pd.read_parquet(p) for p in inp.training], ignore_index=True)
diagnostics = pd.concat([pd.read_parquet(p) for p in inp.diagnostics], ignore_index=True)
counts = pd.concat([pd.read_parquet(p) for p in inp.counts], ignore_index=True)
replicate_metrics = [pd.read_parquet(p) for p in (*inp.replicate_training_free, *inp.replicate_trained)]
replicate_diagnostics = [pd.read_parquet(p) for p in inp.replicate_diagnostics]
wide = summary.ndcg_wide(metrics, params.datasets)
runs = training.groupby(["dataset", "model", "seed"], as_index=False, sort=False)[
    ["train_seconds", "inference_seconds", "users"]
].first()
prov = job_provenance(snakemake)
write_parquet(metrics, out.metrics, prov)
write_parquet(wide, out.ndcg, prov)
write_parquet(summary.seed_spread(metrics), out.seeds, prov)
write_parquet(summary.gains_with_diagnostics(wide, diagnostics), out.gains, prov)
cost = summary.cost_table(training_free, runs).set_index("dataset").reindex(params.datasets).reset_index()
write_parquet(cost, out.cost, prov)
all_metrics = pd.concat([metrics, *replicate_metrics], ignore_index=True)
write_parquet(summary.ndcg_runs(all_metrics, params.seed), out.runs, prov)
all_diagnostics = pd.concat([diagnostics, *replicate_diagnostics], ignore_index=True)
write_parquet(summary.diagnostics_runs(all_diagnostics, params.seed), out.run_diagnostics, prov)
data_table = counts.pivot_table(index="dataset", columns="count", values="value", aggfunc="first")
write_parquet(data_table.reindex(params.datasets).reset_index().rename_axis(columns=None), out.data, prov)
for row in wide.itertuples():
    log.info(
        "%s: best other %s, best TGH %s, relative gain %+.3f",
        row.dataset,
        row.best_other,
        row.best_tgh,
        row.tgh_relative_gain,
    )
