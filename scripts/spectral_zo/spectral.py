"""Paper 13's spectral-decay sweep, one decay exponent a: per-layer cosines of the named methods on the synthetic
teacher-student task of input spectrum i^(-a), one data draw and network per seed."""

import pandas as pd

from neurips26.common.io import write_parquet
from neurips26.common.runtime import job_provenance, start_job
from neurips26.spectral_zo.experiment import spectral

p = snakemake.params
log = start_job(snakemake, 0)
alpha = float(snakemake.wildcards.alpha)
rows = [row for seed in p.block["seeds"] for row in spectral(p.methods, p.block, alpha, seed)]
log.info("a = %g: %d rows", alpha, len(rows))
write_parquet(pd.DataFrame(rows), snakemake.output[0], job_provenance(snakemake))
