"""Shapley's handling of redundancy: attributions with and without an exact copy of one feature."""

from neurips26.common.io import write_parquet
from neurips26.common.runtime import job_provenance, start_job
from neurips26.fairness_audit.storage import load_audit_data
from neurips26.fairness_audit.validation import redundancy_check

cfg = snakemake.params.config
red = cfg["redundancy"]
log = start_job(snakemake, seed=cfg["seed"])
data, _ = load_audit_data(snakemake.input.data, snakemake.input.meta)
players = list(data.players)
table = redundancy_check([data.block(p) for p in players], data.a, data.y, players.index(red["player"]),
                         cfg["measures"], red["estimator"], cfg["seed"])
for r in table.itertuples():
    log.info("%-10s phi %.4f -> %.4f + %.4f (rel. err %.3f)", r.measure, r.phi_orig, r.phi_i, r.phi_copy, r.rel_err)
write_parquet(table.assign(dataset=red["dataset"], player=red["player"], estimator=red["estimator"]),
              snakemake.output[0], job_provenance(snakemake, cfg["seed"]))
