"""The axiom table: every measure on purpose-built SCM instances, each making one independence premise true."""

from neurips26.common.io import write_parquet
from neurips26.common.runtime import job_provenance, start_job
from neurips26.fairness_audit.axioms import axiom_table

cfg = snakemake.params.config
ax = cfg["axioms"]
log = start_job(snakemake, seed=cfg["seed"])
table = axiom_table(cfg["measures"], ax["estimator"], ax["n"], cfg["seed"], ax["tol"])
for r in table.drop_duplicates(["measure", "property"]).itertuples():
    log.info("%-10s %-6s %s", r.measure, r.property, r.outcome)
write_parquet(table, snakemake.output[0], job_provenance(snakemake, cfg["seed"]))
