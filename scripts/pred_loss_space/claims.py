"""Check paper 01's claims against the metrics of the 3x3 matrices."""

import pandas as pd

from neurips26.common.claims import claims_table
from neurips26.common.io import read_provenance, write_parquet
from neurips26.common.runtime import start_job
from neurips26.pred_loss_space.claims import check_claims

log = start_job(snakemake)
metrics = pd.read_parquet(snakemake.input[0])
table = claims_table(check_claims(metrics, snakemake.params.noise["t_eps"]))
for row in table.itertuples():
    log.info("%s [%s] %s: %.4g %s %.4g -> %s", row.claim_id, row.kind, row.metric, row.value, row.comparison,
             row.threshold, row.holds)
write_parquet(table, snakemake.output[0], read_provenance(snakemake.input[0]))
