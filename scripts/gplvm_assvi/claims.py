"""Paper 17's claims: measured by the library from the metric table of every run, decided against
config/claims/gplvm_assvi.yaml."""

import pandas as pd

from neurips26.common.claims import decide, load_definitions, log_verdicts
from neurips26.common.io import write_parquet
from neurips26.common.runtime import job_provenance, start_job
from neurips26.gplvm_assvi.claims import measure_claims

inp = snakemake.input
log = start_job(snakemake)
measured = measure_claims(pd.read_parquet(inp.metrics), snakemake.params.comparisons)
table = decide(load_definitions(inp.definitions), measured)
log_verdicts(table, log)
write_parquet(table, snakemake.output[0], job_provenance(snakemake))
