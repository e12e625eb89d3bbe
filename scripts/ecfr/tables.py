"""Paper 11's run tables joined: the metrics of every run, the training traces and the data summaries."""

import pandas as pd

from neurips26.common.io import write_parquet
from neurips26.common.runtime import job_provenance, start_job

inp = snakemake.input
log = start_job(snakemake)
prov = job_provenance(snakemake)
for source, target in (("evaluations", "metrics"), ("traces", "traces"), ("data_summaries", "data")):
    table = pd.concat([pd.read_parquet(f) for f in inp[source]], ignore_index=True)
    write_parquet(table, snakemake.output[target], prov)
    log.info("%s: %d rows from %d files", target, len(table), len(inp[source]))
