"""The shortcut diagnostics of one prepared dataset: branching (out-degree, transition perplexity, ring
coverage of the test targets), feature smoothness (FS, FeatAUC) and history dependence (HD)."""

import pandas as pd

from neurips26.common.io import write_parquet
from neurips26.common.runtime import job_provenance, start_job
from neurips26.seqrec_audit.artifacts import load_prepared
from neurips26.seqrec_audit.diagnostics import shortcut_diagnostics
from neurips26.seqrec_audit.graph import transition_counts

params, name = snakemake.params, snakemake.wildcards.dataset
log = start_job(snakemake, seed=params.seed)
ready = load_prepared(snakemake.input)
split = ready.split
counts = transition_counts(split.train, ready.n_items)
values = shortcut_diagnostics(
    counts, ready.features, split.train, split.test_history, split.test_target, params.exclude_history
)
log.info("%s: %s", name, ", ".join(f"{k} {v:.4g}" for k, v in values.items()))
write_parquet(pd.DataFrame([{"dataset": name, **values}]), snakemake.output[0], job_provenance(snakemake, params.seed))
