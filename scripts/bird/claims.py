"""Paper 04's claims: measured by the library from the phase tables, the samples' memorization and the calibration
against networks, decided against config/claims/bird.yaml."""

import pandas as pd

from neurips26.bird import claims, summary
from neurips26.common.claims import decide, load_definitions, log_verdicts
from neurips26.common.io import write_parquet
from neurips26.common.runtime import job_provenance, start_job

inp, params = snakemake.input, snakemake.params
log = start_job(snakemake)
calibration = pd.concat([pd.read_parquet(p) for p in inp.calibration], ignore_index=True)
kcal = summary.kcal_table(calibration, params.nats, params.calibration_fraction)
memorization = pd.concat([pd.read_parquet(p) for p in inp.memorization], ignore_index=True)
measured = claims.measure_claims(
    pd.read_parquet(inp.phase),
    pd.read_parquet(inp.boundary),
    pd.read_parquet(inp.kmem),
    memorization,
    kcal,
    summary.best_entropy_fraction(calibration, kcal),
    batch=params.batch,
    early_steps=params.early_steps,
    nats=params.nats,
    fraction_of_log_n=params.fraction_of_log_n,
    local=claims.local_best(calibration),
)
table = decide(load_definitions(inp.definitions), measured)
log_verdicts(table, log)
prov = job_provenance(snakemake)
write_parquet(table, snakemake.output.claims, prov)
write_parquet(kcal, snakemake.output.kcal, prov)
