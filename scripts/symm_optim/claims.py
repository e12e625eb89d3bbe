"""Paper 07's claims from the symmetry checks, the best-LR table and the step times."""

import pandas as pd

from neurips26.common.claims import claims_table
from neurips26.common.io import write_parquet
from neurips26.common.runtime import job_provenance, start_job
from neurips26.symm_optim import claims

inp, cfg = snakemake.input, snakemake.params.config
log = start_job(snakemake)
checks = claims.check_claims(pd.read_parquet(inp.equivariance), pd.read_parquet(inp.identities),
                             pd.read_parquet(inp.best), pd.read_parquet(inp.step_time), cfg["baseline"],
                             cfg["router_baseline"])
for c in checks:
    log.info("%s [%s] %s: %.4g %s %g -> %s", c.claim_id, c.kind, c.metric, c.value, c.comparison, c.threshold, c.holds)
write_parquet(claims_table(checks), snakemake.output[0], job_provenance(snakemake))
