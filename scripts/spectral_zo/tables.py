"""Paper 13's run tables joined: training curves and tuning of every method, the spectral sweep over a."""

import pandas as pd

from neurips26.common.io import write_parquet
from neurips26.common.runtime import job_provenance, start_job

inp = snakemake.input
log = start_job(snakemake)
prov = job_provenance(snakemake)
for source in ("curves", "tuning", "spectral"):
    table = pd.concat([pd.read_parquet(f) for f in inp[source]], ignore_index=True)
    write_parquet(table, snakemake.output[source], prov)
    log.info("%s: %d rows from %d files", source, len(table), len(inp[source]))
