"""MeZO's in-place step beside batched SPSA (paper 13): extra tensor memory and best wall time per width and K."""

import pandas as pd

from neurips26.common.io import write_parquet
from neurips26.common.runtime import job_provenance, start_job
from neurips26.spectral_zo.experiment import cost

log = start_job(snakemake, 0)
table = pd.DataFrame(cost(snakemake.params.block, snakemake.params.block["n_inputs"]))
log.info("\n%s", table.to_string())
write_parquet(table, snakemake.output[0], job_provenance(snakemake))
