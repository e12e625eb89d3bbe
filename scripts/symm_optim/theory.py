"""The float64 symmetry checks (checks S1-S3): every update rule against every group, and the identities of the
diagonal lifting, the polar factor's singular values and Adam's sign limit."""

import pandas as pd

from neurips26.common.io import write_parquet
from neurips26.common.runtime import job_provenance, start_job
from neurips26.symm_optim import theory

seed = snakemake.params.seed
log = start_job(snakemake, seed=seed)
table = pd.DataFrame(theory.equivariance_table(seed=seed))
identities = pd.DataFrame(theory.identities_table(seed=seed))
log.info(
    "expected symmetries: max rel. error %.2e; broken ones: min %.2e; identities %s",
    table.loc[table["expected"], "rel_err"].max(),
    table.loc[~table["expected"], "rel_err"].min(),
    dict(zip(identities["identity"], identities["value"])),
)
prov = job_provenance(snakemake, seed)
write_parquet(table, snakemake.output.equivariance, prov)
write_parquet(identities, snakemake.output.identities, prov)
