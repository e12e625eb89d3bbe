"""Check paper 18's claims against the measured metrics."""

import pandas as pd

from neurips26.amortized_ot.claims import check_claims
from neurips26.common.claims import claims_table
from neurips26.common.io import read_provenance, write_parquet
from neurips26.common.runtime import start_job

log = start_job(snakemake)
metrics = pd.read_parquet(snakemake.input[0])
params = snakemake.params
claims = check_claims(metrics, params.main_projections, dict(params.res_by_task), params.test_res)
table = claims_table(claims)
for row in table.itertuples():
    log.info("%s [%s] %s: %.4g %s %.4g -> %s", row.claim_id, row.kind, row.metric, row.value, row.comparison, row.threshold, row.holds)
write_parquet(table, snakemake.output[0], read_provenance(snakemake.input[0]))
