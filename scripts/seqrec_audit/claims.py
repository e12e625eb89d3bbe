"""Paper 10's claims from the metrics table and the per-dataset diagnostics."""

import pandas as pd

from neurips26.common.claims import claims_table
from neurips26.common.io import write_parquet
from neurips26.common.runtime import job_provenance, start_job
from neurips26.seqrec_audit import claims

inp = snakemake.input
log = start_job(snakemake)
checks = claims.check_claims(pd.read_parquet(inp.metrics), pd.read_parquet(inp.gains))
for c in checks:
    log.info("%s [%s] %s: %.4g %s %g -> %s", c.claim_id, c.kind, c.metric, c.value, c.comparison, c.threshold, c.holds)
write_parquet(claims_table(checks), snakemake.output[0], job_provenance(snakemake))
