"""One phenomenon's table of paper 16's model ({phenomenon}: complementarity, plateau, ceiling, allocation,
amplification, pretraining), from the mean-field solution (closed forms and ODEs)."""

import time

from neurips26.common.io import write_parquet
from neurips26.common.runtime import job_provenance, start_job
from neurips26.multistage_training.experiment import model_params, phenomenon_table

p = snakemake.params
name = snakemake.wildcards.phenomenon
log = start_job(snakemake)
params = model_params(p.model)
start = time.perf_counter()
table = phenomenon_table(name, params, p.block)
log.info("%s: %d rows in %.1f s", name, len(table), time.perf_counter() - start)
write_parquet(table, snakemake.output[0], job_provenance(snakemake))
