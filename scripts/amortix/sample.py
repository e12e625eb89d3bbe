"""Single-shot inference on the test scaffolds (one greedy rollout each: zero oracle calls) and K sampled
completions each (for best-of-K); both scored afterwards for evaluation only. Molecules per second are timed."""

import pandas as pd

from neurips26.amortix import experiment
from neurips26.amortix.artifacts import load_oracle, split_scaffolds
from neurips26.amortix.policy import load_policy_state, load_seed_policy_state, policy_from_state
from neurips26.amortix.sampling import sample_policy
from neurips26.amortix.seeds import parse_policy
from neurips26.common import loop
from neurips26.common.io import write_parquet
from neurips26.common.runtime import job_provenance, start_job

params, wc = snakemake.params, snakemake.wildcards
log = start_job(snakemake, seed=params.seed)
config = experiment.env_config(params.env, params.max_heavy)
spec = params.evaluate
names = split_scaffolds(pd.read_parquet(snakemake.input.split), "test", spec["test_scaffolds"])
if wc.policy == "pretrained":
    state = load_policy_state(snakemake.input.policy)
else:  # a fine-tuned policy: its seed's entry in its RL job's file (one file per seed group)
    state = load_seed_policy_state(snakemake.input.policy, parse_policy(wc.policy)[1])
policy = policy_from_state(state, loop.job_device())
oracle = load_oracle(snakemake.input.oracle)
table = sample_policy(wc.policy, policy, names, config, oracle, max(spec["k_values"]), spec["temperature"], params.seed)
write_parquet(table, snakemake.output[0], job_provenance(snakemake, params.seed))
