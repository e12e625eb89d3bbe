"""Paper 15's claims: measured by the library, decided against config/claims/softlabel_audit.yaml."""

import pandas as pd

from neurips26.common.claims import decide, load_definitions, log_verdicts
from neurips26.common.io import write_parquet
from neurips26.common.runtime import job_provenance, start_job
from neurips26.softlabel_audit.claims import measure_claims

inp = snakemake.input
log = start_job(snakemake)
data = pd.concat([pd.read_parquet(path) for path in inp.data], ignore_index=True)
measured = measure_claims(pd.read_parquet(inp.metrics), data, snakemake.params.comparisons)
table = decide(load_definitions(inp.definitions), measured)
log_verdicts(table, log)
broken = table[(table["kind"] == "check") & (table["verdict"] != "holds")]
if len(broken):  # a check is what our code guarantees: a broken one stops the pipeline
    raise RuntimeError(f"checks that do not hold: {dict(zip(broken['claim_id'], broken['note']))}")
write_parquet(table, snakemake.output[0], job_provenance(snakemake))
