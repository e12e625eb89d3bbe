"""RL fine-tuning of the pretrained policy on training scaffolds with one advantage variant (drgrpo, grpo,
global, none), for a group of seeds in one job (`rl.seeds_per_job`; one seed per job at paper scale); validation
by greedy decoding of validation scaffolds picks each seed's checkpoint. One policy file holds every seed's policy,
one log table every seed's rows (column `seed`)."""

import pandas as pd
import torch

from neurips26.amortix import environment as env
from neurips26.amortix import experiment, objectives
from neurips26.amortix.artifacts import load_oracle, split_scaffolds
from neurips26.amortix.policy import load_policy_state, policy_from_state, seed_policies_state
from neurips26.amortix.training import RLSettings, reinforce_seeds
from neurips26.common import loop
from neurips26.common.checkpoint import fingerprint
from neurips26.common.io import atomic_path, write_parquet
from neurips26.common.runtime import job_provenance, start_job

params, wc = snakemake.params, snakemake.wildcards
seeds = experiment.group_seeds(wc.seeds)
run_seeds = [params.seed + s for s in seeds]
log = start_job(snakemake, seed=run_seeds[0])
config = experiment.env_config(params.env, params.max_heavy)
spec = params.rl
split = pd.read_parquet(snakemake.input.split)
# one score cache for the job: a molecule's score does not depend on the batch it is scored in, and each seed counts
# its own oracle calls (training.episode_rewards), so the cache changes no result and saves the repeated molecules
scorer = objectives.Scorer(load_oracle(snakemake.input.oracle), cache=True)
train = [env.make_scaffold(s, config) for s in split_scaffolds(split, "train")]
val = [env.make_scaffold(s, config) for s in split_scaffolds(split, "val", spec["val_scaffolds"])]
pretrained = load_policy_state(snakemake.input.policy)
policies = [policy_from_state(pretrained, loop.job_device()) for _ in seeds]
settings = RLSettings(
    steps=spec["steps"],
    batch_scaffolds=spec["batch_scaffolds"],
    group_size=spec["group_size"],
    lr=spec["lr"],
    val_every=spec["val_every"],
)
loop_settings = loop.LoopSettings(
    checkpoint=loop.checkpoint_path(snakemake.output.policy),
    fingerprint=fingerprint(dict(snakemake.params), list(snakemake.input)),
    name=f"rl {wc.variant}_s{wc.seeds}",
)
logs = reinforce_seeds(
    policies,
    train,
    val,
    scorer,
    wc.variant,
    settings,
    config,
    experiment.element_index(config),
    run_seeds,
    loop_settings=loop_settings,
)
for seed, rows in zip(seeds, logs):
    log.info(
        "%s seed %s: %d training oracle calls, best validation score at step %d",
        wc.variant,
        seed,
        rows[-1]["oracle_calls"],
        rows[-1]["best_step"],
    )
log.info(
    "%d molecules scored for %d oracle calls (score cache)",
    scorer.calls,
    sum(r[-1]["oracle_calls"] + r[-1]["val_oracle_calls"] for r in logs),
)
with atomic_path(snakemake.output.policy) as tmp:
    torch.save(seed_policies_state(policies, seeds), tmp)
table = pd.concat([pd.DataFrame(rows).assign(seed=seed) for seed, rows in zip(seeds, logs)], ignore_index=True)
write_parquet(
    table, snakemake.output.log_table, job_provenance(snakemake, run_seeds[0] if len(seeds) == 1 else run_seeds)
)
loop.finish(loop_settings)
