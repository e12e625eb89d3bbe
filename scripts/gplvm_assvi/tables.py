"""Paper 17's run tables joined: metrics of every run (and PCA), latents, uncertainty maps and training traces."""

import pandas as pd

from neurips26.common.io import write_parquet
from neurips26.common.runtime import job_provenance, start_job

inp = snakemake.input
log = start_job(snakemake)
prov = job_provenance(snakemake)
for name in ("metrics", "latents", "grids", "traces"):
    table = pd.concat([pd.read_parquet(f) for f in inp[name]], ignore_index=True)
    write_parquet(table, snakemake.output[name], prov)
    log.info("%s: %d rows from %d files", name, len(table), len(inp[name]))
