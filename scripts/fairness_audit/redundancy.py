"""Shapley's handling of redundancy: attributions with and without an exact copy of one feature, on every seed's
data set of the redundancy scenario."""

import pandas as pd

from neurips26.common.io import write_parquet
from neurips26.common.runtime import job_provenance, start_job
from neurips26.fairness_audit.artifacts import load_audit_data
from neurips26.fairness_audit.measure_validation import redundancy_check

params = snakemake.params
seed, player, estimator = params.seed, params.player, params.estimator
log = start_job(snakemake, seed=seed)
tables = []
for data_path, meta_path in zip(snakemake.input.data, snakemake.input.meta):
    data, _ = load_audit_data(data_path, meta_path)
    players = list(data.players)
    table = redundancy_check(
        [data.block(p) for p in players], data.a, data.y, players.index(player), params.measures, estimator, seed
    )
    for r in table.itertuples():
        log.info(
            "%s %-10s phi %.4f -> %.4f + %.4f (rel. err %.3f)",
            data.name,
            r.measure,
            r.phi_orig,
            r.phi_i,
            r.phi_copy,
            r.rel_err,
        )
    tables.append(table.assign(dataset=data.name, player=player, estimator=estimator))
write_parquet(pd.concat(tables, ignore_index=True), snakemake.output[0], job_provenance(snakemake, seed))
