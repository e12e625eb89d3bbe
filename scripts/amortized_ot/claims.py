"""Paper 18's claims: measured by the library, decided against config/claims/amortized_ot.yaml."""

import pandas as pd

from neurips26.amortized_ot.claims import measure_claims
from neurips26.common.claims import decide, load_definitions, log_verdicts
from neurips26.common.io import write_parquet
from neurips26.common.runtime import job_provenance, start_job

log = start_job(snakemake)
params = snakemake.params
metrics = pd.concat([pd.read_parquet(path) for path in snakemake.input.metrics], ignore_index=True)
measured = measure_claims(
    metrics,
    params.main_projections,
    dict(params.res_by_task),
    list(params.test_res),
    list(params.projections),
    params.seed,
)
table = decide(load_definitions(snakemake.input.definitions), measured)
log_verdicts(table, log)
write_parquet(table, snakemake.output[0], job_provenance(snakemake))
