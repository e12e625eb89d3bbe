"""Paper 19's claims: measured by the library, decided against config/claims/amortix.yaml."""

from pathlib import Path

import pandas as pd

from neurips26.amortix.claims import measure_claims
from neurips26.common.claims import decide, load_definitions, log_verdicts
from neurips26.common.io import write_parquet
from neurips26.common.runtime import job_provenance, start_job

inp = snakemake.input
log = start_job(snakemake)
outputs = pd.concat([pd.read_parquet(p).assign(method=Path(p).stem) for p in inp.samples], ignore_index=True)
measured = measure_claims(
    pd.read_parquet(inp.decoration),
    pd.read_parquet(inp.best_of_k),
    pd.read_parquet(inp.pmo),
    pd.read_parquet(inp.training),
    outputs,
)
table = decide(load_definitions(inp.definitions), measured)
log_verdicts(table, log)
write_parquet(table, snakemake.output[0], job_provenance(snakemake))
