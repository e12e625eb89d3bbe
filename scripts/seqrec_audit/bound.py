"""C1's training-free bound: the scale's `bound` regime regenerated with each of its data seeds and ranked by the
training-free methods (no trained model); an empty table when the scale has no `bound` block."""

from neurips26.common.io import write_parquet
from neurips26.common.runtime import job_provenance, start_job
from neurips26.seqrec_audit.bound import bound_seeds, training_free_runs

params = snakemake.params
log = start_job(snakemake, seed=params.seed)
cfg = {
    "seed": params.seed,
    "synthetic": params.synthetic,
    "min_length": params.min_length,
    "methods": params.methods,
    "protocol": params.protocol,
    "tgh": params.tgh,
}
block = params.bound or {}
seeds = bound_seeds(block)
log.info("bound: %s on %d data seeds %s", block.get("regime"), len(seeds), seeds[:3] + (["..."] if seeds[3:] else []))
table = training_free_runs(cfg, block.get("regime", ""), seeds, log=log.info)
write_parquet(table, snakemake.output[0], job_provenance(snakemake, params.seed))
