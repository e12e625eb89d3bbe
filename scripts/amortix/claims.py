"""Paper 19's claims from the tables and the fine-tuned policies' outputs."""

from pathlib import Path

import pandas as pd

from neurips26.amortix import claims
from neurips26.common.claims import claims_table
from neurips26.common.io import write_parquet
from neurips26.common.runtime import job_provenance, start_job

inp = snakemake.input
log = start_job(snakemake)
outputs = pd.concat([pd.read_parquet(p).assign(method=Path(p).stem) for p in inp.samples if Path(p).stem != "pretrained"],
                    ignore_index=True)
checks = claims.check_claims(pd.read_parquet(inp.decoration), pd.read_parquet(inp.best_of_k),
                             pd.read_parquet(inp.pmo), pd.read_parquet(inp.training), outputs)
for c in checks:
    log.info("%s [%s] %s: %.4g %s %g -> %s", c.claim_id, c.kind, c.metric, c.value, c.comparison, c.threshold, c.holds)
write_parquet(claims_table(checks), snakemake.output[0], job_provenance(snakemake))
