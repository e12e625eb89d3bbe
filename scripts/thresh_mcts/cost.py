"""M5: per-round cost against the number of leaves K: node operations counted by each rule and wall time,
on complete trees of growing depth, for a fixed number of rounds without stopping; the rules are timed side by
side, `repeats` times each, so that the timing noise is measured."""

from neurips26.common.io import write_parquet
from neurips26.common.runtime import job_provenance, start_job
from neurips26.thresh_mcts.simulation import per_round_cost

params = snakemake.params
log = start_job(snakemake, seed=params.seed)
cfg = params.cost
cost = per_round_cost(cfg["depths"], cfg["branching"], cfg["rounds"], cfg["repeats"], cfg["rules"], params.seed, log)
write_parquet(cost, snakemake.output[0], job_provenance(snakemake, params.seed))
