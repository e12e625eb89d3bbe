"""Paper 13's checks of what the construction guarantees: SZO at kappa = 0 is weight perturbation with the same
draws, MeZO equals two-sided SPSA along the same Gaussian directions, forward gradients are unbiased."""

import numpy as np
import pandas as pd

from neurips26.common.io import write_parquet
from neurips26.common.runtime import job_provenance, start_job
from neurips26.spectral_zo.checks import construction_checks

log = start_job(snakemake, 0)
data = dict(np.load(snakemake.input.data))
table = pd.DataFrame(construction_checks(data, snakemake.params.block, snakemake.params.hidden))
log.info("\n%s", table.to_string())
write_parquet(table, snakemake.output[0], job_provenance(snakemake))
