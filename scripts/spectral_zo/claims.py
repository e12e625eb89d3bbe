"""Paper 13's claims and checks: measured by the library from the result tables, decided against
config/claims/spectral_zo.yaml."""

import pandas as pd

from neurips26.common.claims import decide, load_definitions, log_verdicts
from neurips26.common.io import write_parquet
from neurips26.common.runtime import job_provenance, start_job
from neurips26.spectral_zo.claims import measure_claims

inp = snakemake.input
log = start_job(snakemake)
tables = {name: pd.read_parquet(inp[name]) for name in
          ("alignment", "bias_variance", "dimension", "spectral", "curves", "tuning", "cost", "checks")}  # fmt: skip
table = decide(load_definitions(inp.definitions), measure_claims(tables, snakemake.params.comparisons))
log_verdicts(table, log)
write_parquet(table, snakemake.output[0], job_provenance(snakemake))
