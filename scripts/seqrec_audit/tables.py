"""Paper 10's tables: all metrics in long form, the NDCG@10 table across datasets and methods (with TGH's relative
gain over the best other method), seed spread, gains beside the diagnostics, TGH's cost beside the trained
models', the preprocessing counts per dataset, and NDCG@10 and diagnostics per run (the datasets and the
replicates of synthetic regimes with other data seeds) for the claims."""

import pandas as pd

from neurips26.common.io import write_parquet
from neurips26.common.runtime import job_provenance, start_job
from neurips26.seqrec_audit.summary import result_tables

inp, out, params = snakemake.input, snakemake.output, snakemake.params
log = start_job(snakemake)


def concat(paths):
    return pd.concat([pd.read_parquet(p) for p in paths], ignore_index=True)


tables = result_tables(
    concat(inp.training_free),
    [pd.read_parquet(p) for p in inp.trained],
    concat(inp.training),
    concat(inp.diagnostics),
    concat(inp.counts),
    [pd.read_parquet(p) for p in (*inp.replicate_training_free, *inp.replicate_trained)],
    [pd.read_parquet(p) for p in inp.replicate_diagnostics],
    params.datasets,
    params.seed,
)
prov = job_provenance(snakemake)
for name, frame in tables.items():
    write_parquet(frame, out[name], prov)
for row in tables["ndcg"].itertuples():
    log.info(
        "%s: best other %s, best TGH %s, relative gain %+.3f",
        row.dataset,
        row.best_other,
        row.best_tgh,
        row.tgh_relative_gain,
    )
