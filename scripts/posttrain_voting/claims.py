"""Paper 14's claims: measured by the library from the axiom, adversarial, threshold and equivalence tables, decided
against config/claims/posttrain_voting.yaml."""

import pandas as pd

from neurips26.common.claims import decide, load_definitions, log_verdicts
from neurips26.common.io import write_parquet
from neurips26.common.runtime import job_provenance, start_job
from neurips26.posttrain_voting.claims import measure_claims

inp = snakemake.input
log = start_job(snakemake)
tables = {name: pd.read_parquet(inp[name]) for name in ("adversarial", "threshold", "equivalence")}
tables["axioms"] = pd.concat([pd.read_parquet(path) for path in inp.axioms], ignore_index=True)
table = decide(load_definitions(inp.definitions), measure_claims(tables))
log_verdicts(table, log)
write_parquet(table, snakemake.output[0], job_provenance(snakemake))
