"""Paper 16's claims: measured by the library from the phenomena's tables and the simulations, decided against
config/claims/multistage_training.yaml."""

import pandas as pd

from neurips26.common.claims import decide, load_definitions, log_verdicts
from neurips26.common.io import write_parquet
from neurips26.common.runtime import job_provenance, start_job
from neurips26.multistage_training.claims import measure_claims
from neurips26.multistage_training.experiment import PHENOMENA

inp = snakemake.input
log = start_job(snakemake)
tables = {name: pd.read_parquet(inp[name]) for name in (*PHENOMENA, "simulation")}
table = decide(load_definitions(inp.definitions), measure_claims(tables, snakemake.params.comparisons))
log_verdicts(table, log)
write_parquet(table, snakemake.output[0], job_provenance(snakemake))
