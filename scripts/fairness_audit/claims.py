"""Paper 06's claims: measured by the library, decided against config/claims/fairness_audit.yaml."""

import pandas as pd

from neurips26.common.claims import decide, load_definitions, log_verdicts
from neurips26.common.io import write_parquet
from neurips26.common.runtime import job_provenance, start_job
from neurips26.fairness_audit.claims import measure_claims

inp, params = snakemake.input, snakemake.params
log = start_job(snakemake)
DROP = ["git_commit", "config_hash"]
dpi, axioms, redundancy, pairs, selection, random_removal, datasets = (
    pd.read_parquet(p).drop(columns=DROP, errors="ignore")
    for p in (inp.dpi, inp.axioms, inp.redundancy, inp.pairs, inp.selection, inp.random_removal, inp.datasets)
)
measured = measure_claims(
    dpi,
    axioms,
    redundancy,
    pairs,
    selection,
    random_removal,
    dict(zip(datasets["dataset"], datasets["scenario"])),
    params.selection_measures,
    n_boot=params.n_boot,
    seed=params.seed,
)
table = decide(load_definitions(inp.definitions), measured)
log_verdicts(table, log)
write_parquet(table, snakemake.output[0], job_provenance(snakemake))
