"""The phase diagram: measured I against the Gaussian theory over (dataset, N, window, SNR), the critical SNRs,
and k_mem against the theory's k*."""

import pandas as pd

from neurips26.bird import summary
from neurips26.common.io import write_parquet
from neurips26.common.runtime import job_provenance, start_job

params = snakemake.params
log = start_job(snakemake)
theory = pd.concat([pd.read_parquet(p) for p in snakemake.input.theory], ignore_index=True)
info = pd.concat([pd.read_parquet(p) for p in snakemake.input.information], ignore_index=True)
phase = summary.phase_table(theory, info, params.fraction_of_log_n)
boundary = summary.boundary_table(phase, theory, params.nats)
kmem = summary.kmem_table(phase, params.fraction_of_log_n)
agreement = (phase["memorize_emp"] == phase["memorize_theory"]).groupby(phase["dataset"]).mean()
log.info("phase agreement with theory per dataset: %s", agreement.round(3).to_dict())
prov = job_provenance(snakemake)
write_parquet(phase, snakemake.output.phase, prov)
write_parquet(boundary, snakemake.output.boundary, prov)
write_parquet(kmem, snakemake.output.kmem, prov)
