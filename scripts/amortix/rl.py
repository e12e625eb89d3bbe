"""RL fine-tuning of the pretrained policy on training scaffolds with one advantage variant (drgrpo, grpo,
global, none); validation by greedy decoding of validation scaffolds picks the checkpoint."""

import pandas as pd
import torch

from neurips26.amortix import environment as env
from neurips26.amortix import experiment, objectives
from neurips26.amortix.artifacts import load_oracle, split_scaffolds
from neurips26.amortix.policy import load_policy_state, policy_from_state, policy_state
from neurips26.amortix.training import RLSettings, reinforce
from neurips26.common import loop
from neurips26.common.checkpoint import fingerprint
from neurips26.common.io import atomic_path, write_parquet
from neurips26.common.runtime import job_provenance, start_job

params, wc = snakemake.params, snakemake.wildcards
seed = params.seed + int(wc.seed)
log = start_job(snakemake, seed=seed)
config = experiment.env_config(params.env, params.max_heavy)
spec = params.rl
split = pd.read_parquet(snakemake.input.split)
scorer = objectives.Scorer(load_oracle(snakemake.input.oracle))
train = [env.make_scaffold(s, config) for s in split_scaffolds(split, "train")]
val = [env.make_scaffold(s, config) for s in split_scaffolds(split, "val", spec["val_scaffolds"])]
policy = policy_from_state(load_policy_state(snakemake.input.policy), loop.job_device())
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
    name=f"rl {wc.variant}_s{wc.seed}",
)
rows = reinforce(
    policy,
    train,
    val,
    scorer,
    wc.variant,
    settings,
    config,
    experiment.element_index(config),
    seed,
    loop_settings=loop_settings,
)
log.info(
    "%s seed %s: %d training oracle calls, best validation score at step %d",
    wc.variant,
    wc.seed,
    rows[-1]["oracle_calls"],
    rows[-1]["best_step"],
)
with atomic_path(snakemake.output.policy) as tmp:
    torch.save(policy_state(policy), tmp)
write_parquet(pd.DataFrame(rows).assign(seed=int(wc.seed)), snakemake.output.log_table, job_provenance(snakemake, seed))
loop.finish(loop_settings)
