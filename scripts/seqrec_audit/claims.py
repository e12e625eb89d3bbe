"""Paper 10's claims: measured by the library, decided against config/claims/seqrec_audit.yaml."""

import pandas as pd

from neurips26.common.claims import decide, load_definitions, log_verdicts
from neurips26.common.io import write_parquet
from neurips26.common.runtime import job_provenance, start_job
from neurips26.seqrec_audit.claims import measure_claims

inp = snakemake.input
log = start_job(snakemake)
measured = measure_claims(
    pd.read_parquet(inp.runs),
    pd.read_parquet(inp.run_diagnostics),
    pd.read_parquet(inp.gains),
    pd.read_parquet(inp.bound),
)
table = decide(load_definitions(inp.definitions), measured)
log_verdicts(table, log)
write_parquet(table, snakemake.output[0], job_provenance(snakemake))
