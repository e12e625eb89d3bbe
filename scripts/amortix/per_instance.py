"""Instance-optimisation baseline: per-instance RL (Dr. GRPO on one scaffold at a time, from the pretrained policy)
with a per-scaffold oracle budget; repeated molecules are not scored twice."""

import pandas as pd

from neurips26.amortix import experiment
from neurips26.amortix.artifacts import baseline_scaffolds, load_oracle
from neurips26.amortix.instances import per_instance_rl
from neurips26.amortix.policy import load_policy_state
from neurips26.common import loop
from neurips26.common.checkpoint import fingerprint
from neurips26.common.io import write_parquet
from neurips26.common.runtime import job_provenance, start_job

params = snakemake.params
log = start_job(snakemake, seed=params.seed)
config = experiment.env_config(params.env, params.max_heavy)
names = baseline_scaffolds(pd.read_parquet(snakemake.input.split), params.scaffolds)
saved = load_policy_state(snakemake.input.policy)
oracle = load_oracle(snakemake.input.oracle)
loop_settings = loop.LoopSettings(
    checkpoint=loop.checkpoint_path(snakemake.output[0]),
    fingerprint=fingerprint(dict(snakemake.params), list(snakemake.input)),
    name="per-instance RL",
)
table = per_instance_rl(saved, names, oracle, params.per_instance, config, params.seed, loop_settings)
write_parquet(table, snakemake.output[0], job_provenance(snakemake, params.seed))
loop.finish(loop_settings)
