"""Paper 09's claims: measured by the library from the runs, the injection statistics, the classifier and the
throughput, decided against config/claims/noisy_divergence.yaml."""

import pandas as pd

from neurips26.common.claims import decide, load_definitions, log_verdicts
from neurips26.common.io import write_parquet
from neurips26.common.runtime import job_provenance, start_job
from neurips26.noisy_divergence.claims import measure_claims

inp = snakemake.input
log = start_job(snakemake)
stats = pd.concat([pd.read_parquet(p) for p in inp.stats], ignore_index=True) if inp.stats else pd.DataFrame()
measured = measure_claims(
    pd.read_parquet(inp.runs),
    stats,
    pd.read_parquet(inp.classifier),
    pd.read_parquet(inp.throughput),
    snakemake.params.comparisons,
)
table = decide(load_definitions(inp.definitions), measured)
log_verdicts(table, log)
write_parquet(table, snakemake.output[0], job_provenance(snakemake))
