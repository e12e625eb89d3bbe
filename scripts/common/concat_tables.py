"""Concatenate long-form Parquet tables into one (provenance kept per row and in the metadata)."""

import pandas as pd

from neurips26.common.io import read_provenance, write_parquet
from neurips26.common.runtime import start_job

log = start_job(snakemake)
frames = [pd.read_parquet(path) for path in snakemake.input.tables]
table = pd.concat(frames, ignore_index=True)
prov = read_provenance(snakemake.input.tables[0])
log.info("%d tables, %d rows", len(frames), len(table))
write_parquet(table, snakemake.output[0], prov)
