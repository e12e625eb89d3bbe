"""Paper 05's claims from the scaling fit, the imitation matrix, the normalised regret and decoding validity."""

import pandas as pd

from neurips26.bbo_pile import claims
from neurips26.common.claims import claims_table
from neurips26.common.io import write_parquet
from neurips26.common.runtime import job_provenance, start_job

inp = snakemake.input
log = start_job(snakemake)
checks = claims.check_claims(pd.read_parquet(inp.scaling), pd.read_parquet(inp.imitation),
                             pd.read_parquet(inp.regret), pd.read_parquet(inp.validity))
for c in checks:
    log.info("%s [%s] %s: %.4g %s %g -> %s", c.claim_id, c.kind, c.metric, c.value, c.comparison, c.threshold, c.holds)
write_parquet(claims_table(checks), snakemake.output[0], job_provenance(snakemake))
