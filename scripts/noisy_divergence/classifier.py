"""Noise- vs learning-rate-induced failure from the activation diagnostics of the deep shape: features per run (at a
divergence's onset, or at the end of a run that did not diverge), then a logistic regression evaluated leave one seed
out (balanced accuracy, bootstrap over seeds) on the diverged runs (``onset``) and, as its null, on the runs that did
not diverge (``null``), each skipped with its reason when the runs are too few."""

import pandas as pd

from neurips26.common.io import write_parquet
from neurips26.common.runtime import job_provenance, start_job
from neurips26.noisy_divergence.classifier import loso
from neurips26.noisy_divergence.summary import classifier_table

inp, params = snakemake.input, snakemake.params
log = start_job(snakemake)
features = classifier_table(
    pd.read_parquet(inp.runs),
    pd.read_parquet(inp.curves),
    pd.read_parquet(inp.diag),
    params.base_lr,
    params.deep_shape,
)
features["prediction"] = float("nan")
rows = []
for task in ("onset", "null"):
    rows_of_task = features["task"] == task
    summary, predictions = loso(
        features[rows_of_task], "label", params.classifier["min_per_class"], params.classifier["C"]
    )
    features.loc[predictions.index, "prediction"] = predictions
    log.info(
        "%s classifier: %s %s balanced accuracy %s",
        task,
        summary["status"],
        summary["reason"],
        summary["balanced_accuracy"],
    )
    rows.append({"task": task, **summary})
prov = job_provenance(snakemake)
write_parquet(features, snakemake.output.features, prov)
write_parquet(pd.DataFrame(rows), snakemake.output.classifier, prov)
