"""Paper 11's claims: measured by the library from the metric table of every run and the complexity table, decided
against config/claims/ecfr.yaml."""

import pandas as pd

from neurips26.common.claims import decide, load_definitions, log_verdicts
from neurips26.common.io import write_parquet
from neurips26.common.runtime import job_provenance, start_job
from neurips26.ecfr.claims import measure_claims

inp = snakemake.input
log = start_job(snakemake)
measured = measure_claims(
    pd.read_parquet(inp.metrics),
    pd.read_parquet(inp.complexity),
    pd.read_parquet(inp.traces),
    snakemake.params.comparisons,
    snakemake.params.sources,
)
table = decide(load_definitions(inp.definitions), measured)
log_verdicts(table, log)
write_parquet(table, snakemake.output[0], job_provenance(snakemake))
