"""The axiom table: every measure on purpose-built SCM instances, each making one independence premise true."""

from neurips26.common.io import write_parquet
from neurips26.common.runtime import job_provenance, start_job
from neurips26.fairness_audit.axioms import axiom_table

params = snakemake.params
ax, seed = params.axioms, params.seed
log = start_job(snakemake, seed=seed)
table = axiom_table(params.measures, ax["estimator"], ax["n"], seed, ax["tol"])
for r in table.drop_duplicates(["measure", "property"]).itertuples():
    log.info("%-10s %-6s %s", r.measure, r.property, r.outcome)
write_parquet(table, snakemake.output[0], job_provenance(snakemake, seed))
