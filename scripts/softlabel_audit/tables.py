"""Paper 15's tables of every dataset gathered: metrics and data summaries (one Parquet each)."""

import pandas as pd

from neurips26.common.io import read_provenance, write_parquet
from neurips26.common.runtime import start_job

inp = snakemake.input
log = start_job(snakemake)
for name in ("metrics", "data"):
    paths = list(inp[name])
    write_parquet(pd.concat([pd.read_parquet(p) for p in paths], ignore_index=True), snakemake.output[name],
                  read_provenance(paths[0]))  # fmt: skip
log.info("gathered %d datasets", len(inp.metrics))
