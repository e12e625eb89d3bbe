"""Rank every test user's next item with the training-free methods (popularity, Markov-1, item-kNN, TGH
variants) on one prepared dataset; Recall and NDCG at 1/5/10 and the time per 1,000 users."""

from neurips26.common.io import write_parquet
from neurips26.common.runtime import job_provenance, start_job
from neurips26.seqrec_audit import evaluation, experiment
from neurips26.seqrec_audit.artifacts import load_prepared

params, name = snakemake.params, snakemake.wildcards.dataset
cfg = {"methods": params.methods, "protocol": params.protocol, "tgh": params.tgh}
log = start_job(snakemake, seed=params.seed)
ready = load_prepared(snakemake.input)
protocol = cfg["protocol"]
table = evaluation.evaluate_training_free(
    ready,
    experiment.training_free_methods(cfg),
    protocol["exclude_history"],
    protocol["tie_break"],
    experiment.tgh_configs(cfg),
    log=log.info,
)
evaluation.sanity_ranges(table)
write_parquet(table.assign(dataset=name, seed=-1), snakemake.output[0], job_provenance(snakemake, params.seed))
