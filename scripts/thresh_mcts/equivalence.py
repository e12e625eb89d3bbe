"""M6: the incremental ratio rule (O(log K) per round) and the full recomputation pull exactly the same leaves
on shared reward tapes, over random trees (depth 2-3, branching 2-4, both reward kinds) and seeds."""

from neurips26.common.io import write_parquet
from neurips26.common.runtime import job_provenance, start_job
from neurips26.thresh_mcts.checks import equivalence

params = snakemake.params
log = start_job(snakemake, seed=params.seed)
cfg = params.equivalence
frame = equivalence(cfg["instances"], cfg["seeds"], params.t_max, params.delta, params.seed, log)
log.info(
    "%d of %d runs identical (%d pulls compared)", int(frame["identical"].sum()), len(frame), int(frame["rounds"].sum())
)
write_parquet(frame, snakemake.output[0], job_provenance(snakemake, params.seed))
