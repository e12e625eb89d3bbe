"""Paper 06's claims (notes C1-C6) from the DPI check, the axiom table, the redundancy check, the validation tables
and the feature-selection experiment."""

import pandas as pd

from neurips26.common.claims import claims_table
from neurips26.common.io import write_parquet
from neurips26.common.runtime import job_provenance, start_job
from neurips26.fairness_audit.claims import check_claims

inp, cfg = snakemake.input, snakemake.params.config
log = start_job(snakemake)
datasets = pd.read_parquet(inp.datasets)
checks = check_claims(
    pd.read_parquet(inp.validation), pd.read_parquet(inp.dpi), pd.read_parquet(inp.axioms),
    pd.read_parquet(inp.redundancy), pd.read_parquet(inp.selection),
    dict(zip(datasets["dataset"], datasets["scenario"])),
    cfg["selection"]["measures"], validation_nonpredictive=pd.read_parquet(inp.validation_nonpredictive),
    random_removal=pd.read_parquet(inp.random_removal))
for c in checks:
    log.info("%s [%s] %s: %.4g %s %g -> %s", c.claim_id, c.kind, c.metric, c.value, c.comparison, c.threshold, c.holds)
write_parquet(claims_table(checks), snakemake.output[0], job_provenance(snakemake))
