"""Paper 01's claims: measured by the library, decided against config/claims/pred_loss_space.yaml."""

import pandas as pd

from neurips26.common.claims import decide, load_definitions, log_verdicts
from neurips26.common.io import write_parquet
from neurips26.common.runtime import job_provenance, start_job
from neurips26.pred_loss_space.claims import measure_claims

log = start_job(snakemake)
params = snakemake.params
measured = measure_claims(pd.read_parquet(snakemake.input.metrics), params.t_eps, params.t_min, params.ranks)
table = decide(load_definitions(snakemake.input.definitions), measured)
log_verdicts(table, log)
write_parquet(table, snakemake.output[0], job_provenance(snakemake))
