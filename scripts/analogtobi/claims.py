"""Paper 02's claims: measured by the library from the ablation table, the per-sample metrics, the held-out circuits
and the data, decided against config/claims/analogtobi.yaml."""

import pandas as pd

from neurips26.analogtobi.claims import measure_claims
from neurips26.common.claims import decide, load_definitions, log_verdicts
from neurips26.common.io import write_parquet
from neurips26.common.runtime import job_provenance, start_job

inp = snakemake.input
log = start_job(snakemake)
walks = {rep: pd.read_parquet(next(p for p in inp.walks if p.endswith(f"walks_{rep}.parquet")))
         for rep in ("bipart", "devpin")}  # fmt: skip
measured = measure_claims(
    pd.read_parquet(inp.ablation),
    pd.concat([pd.read_parquet(p) for p in inp.metrics], ignore_index=True),
    pd.read_parquet(inp.reference),
    pd.read_parquet(inp.circuits),
    walks,
    snakemake.params.main,
)
table = decide(load_definitions(inp.definitions), measured)
log_verdicts(table, log)
write_parquet(table, snakemake.output[0], job_provenance(snakemake))
