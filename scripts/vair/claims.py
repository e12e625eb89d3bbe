"""Paper 08's claims: measured by the library from the report tables, the probes and patching of the small model,
its members' training pools and the items of every dataset with steps, decided against config/claims/vair.yaml."""

from pathlib import Path

import pandas as pd

from neurips26.common.claims import decide, load_definitions, log_verdicts
from neurips26.common.io import write_parquet
from neurips26.common.runtime import job_provenance, start_job
from neurips26.vair.claims import Evidence, measure_claims

inp = snakemake.input
log = start_job(snakemake)
evidence = Evidence(
    accuracy=pd.read_parquet(inp.accuracy),
    gap=pd.read_parquet(inp.gap),
    unparseable=pd.read_parquet(inp.unparseable),
    probes=pd.read_parquet(inp.probes),
    patching=pd.read_parquet(inp.patching),
    members=pd.read_parquet(inp.members),
    items={Path(p).parent.name: pd.read_parquet(p) for p in inp.step_items},  # data/{dataset}/items.parquet
)
table = decide(load_definitions(inp.definitions), measure_claims(evidence))
log_verdicts(table, log)
write_parquet(table, snakemake.output[0], job_provenance(snakemake))
