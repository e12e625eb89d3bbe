"""The float64 symmetry checks (claims S1-S3): every update rule against every group, and the identities of the
diagonal lifting, the polar factor's singular values and Adam's sign limit."""

import pandas as pd
import torch

from neurips26.common.io import write_parquet
from neurips26.common.runtime import job_provenance, start_job
from neurips26.symm_optim import theory
from neurips26.symm_optim.optimizers import polar

seed = snakemake.params.seed
log = start_job(snakemake, seed=seed)
table = pd.DataFrame(theory.equivariance_table(seed=seed))
gen = torch.Generator().manual_seed(seed)
g = torch.randn(12, 5, generator=gen, dtype=torch.float64)
identities = pd.DataFrame([
    {"identity": "diagonal_lifting", "value": theory.diagonal_lifting_error(g)},
    {"identity": "polar_singular_values", "value": theory.polar_singular_value_error(polar, g)},
    {"identity": "adam_sign_limit", "value": theory.adam_sign_limit_error(g)},
])
log.info("expected symmetries: max rel. error %.2e; broken ones: min %.2e; identities %s",
         table.loc[table["expected"], "rel_err"].max(), table.loc[~table["expected"], "rel_err"].min(),
         dict(zip(identities["identity"], identities["value"])))
prov = job_provenance(snakemake, seed)
write_parquet(table, snakemake.output.equivariance, prov)
write_parquet(identities, snakemake.output.identities, prov)
