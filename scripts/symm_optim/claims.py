"""Paper 07's claims: measured by the library from the symmetry checks, the runs, the best-LR table and the step
times, decided against config/claims/symm_optim.yaml."""

import pandas as pd

from neurips26.common.claims import decide, load_definitions, log_verdicts
from neurips26.common.io import write_parquet
from neurips26.common.runtime import job_provenance, start_job
from neurips26.symm_optim.claims import measure_claims

inp, params = snakemake.input, snakemake.params
log = start_job(snakemake)
measured = measure_claims(
    *(pd.read_parquet(p) for p in (inp.equivariance, inp.identities, inp.runs, inp.best, inp.step_time)),
    baseline=params.baseline,
    router_baseline=params.router_baseline,
)
table = decide(load_definitions(inp.definitions), measured)
log_verdicts(table, log)
write_parquet(table, snakemake.output[0], job_provenance(snakemake))
