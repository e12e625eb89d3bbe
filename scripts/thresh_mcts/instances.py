"""Paper 12's problem instances (fixed trees I1..I3, random trees R*) from the config, plus user trees, as a Parquet
table."""

import json

from neurips26.common.io import write_parquet
from neurips26.common.runtime import job_provenance, start_job
from neurips26.thresh_mcts import instances

params = snakemake.params
log = start_job(snakemake, seed=params.seed)
cfg = params.instances
user = json.loads(open(snakemake.input.user[0]).read()) if snakemake.input.user else None
made = instances.make_instances(
    fixed=cfg["fixed"],
    random_specs=cfg["random"],
    kinds=cfg["kinds"],
    gaussian_fixed=cfg["gaussian_fixed"],
    seed=params.seed,
    t_star_max=cfg["t_star_max"],
    user=user,
)
for inst in made:
    log.info(
        "%s: %s, K = %d, theta %.3f, V %.3f, T* %.1f",
        inst["id"],
        inst["kind"],
        inst["n_leaves"],
        inst["theta"],
        inst["value"],
        inst["t_star"],
    )
write_parquet(instances.instances_frame(made), snakemake.output[0], job_provenance(snakemake, params.seed))
