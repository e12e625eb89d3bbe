"""The characteristic time T* and optimal weights w* of every instance by the tree DP, the lower bounds
T* kl(delta, 1 - delta), and the DP checked against a brute-force linear program on small trees (M7)."""

import pandas as pd

from neurips26.common.io import write_parquet
from neurips26.common.runtime import job_provenance, start_job
from neurips26.thresh_mcts import checks, instances

params = snakemake.params
log = start_job(snakemake, seed=params.seed)
table = pd.read_parquet(snakemake.input.instances)
theory = instances.theory_table(table, params.deltas)
lp_check = checks.lp_check(checks.lp_check_trees(table, params.lp_check["max_leaves"], params.seed))
log.info("DP vs LP on %d trees: max relative error %.2e", len(lp_check), lp_check["relative_error"].max())
prov = job_provenance(snakemake, params.seed)
write_parquet(theory, snakemake.output.theory, prov)
write_parquet(lp_check, snakemake.output.lp_check, prov)
