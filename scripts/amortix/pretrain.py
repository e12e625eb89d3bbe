"""Pretraining by behaviour cloning: teacher-forced scaffold completions of the training split's molecules; the
checkpoint with the lowest NLL on the validation split's demonstrations is kept."""

import json

import pandas as pd
import torch

from neurips26.amortix import environment as env
from neurips26.amortix import experiment
from neurips26.amortix.policy import new_policy, policy_state
from neurips26.amortix.rollout import demonstration_records
from neurips26.amortix.training import behaviour_cloning
from neurips26.common import loop
from neurips26.common.checkpoint import fingerprint
from neurips26.common.io import atomic_path, write_parquet
from neurips26.common.runtime import job_provenance, start_job

params = snakemake.params
log = start_job(snakemake, seed=params.seed)
config = experiment.env_config(params.env, params.max_heavy)
elements = experiment.element_index(config)
demos = pd.read_parquet(snakemake.input.demonstrations).merge(pd.read_parquet(snakemake.input.split), on="scaffold")
scaffolds = {s: env.make_scaffold(s, config) for s in demos["scaffold"].unique()}
records = {
    split: [
        r
        for s, a in zip(part["scaffold"], part["actions"])
        for r in demonstration_records(scaffolds[s], [tuple(x) for x in json.loads(a)], config, elements)
    ]
    for split, part in demos.groupby("split")
}
log.info("decisions to imitate: %s", {k: len(v) for k, v in records.items()})
device = loop.job_device()  # a GPU at paper scale (profiles/slurm)
policy = new_policy(params.policy, len(config.scaffold_vocab), len(config.decoration_vocab)).to(device)
spec = params.pretrain
loop_settings = loop.LoopSettings(
    checkpoint=loop.checkpoint_path(snakemake.output.policy),
    fingerprint=fingerprint(dict(snakemake.params), list(snakemake.input)),
    name="pretrain",
)
rows = behaviour_cloning(
    policy,
    records["train"],
    records.get("val", records["train"]),
    steps=spec["steps"],
    batch_size=spec["batch"],
    lr=spec["lr"],
    n_vocab=len(config.decoration_vocab),
    seed=params.seed,
    eval_every=spec["eval_every"],
    loop_settings=loop_settings,
)
with atomic_path(snakemake.output.policy) as tmp:
    torch.save(policy_state(policy), tmp)
write_parquet(pd.DataFrame(rows), snakemake.output.log_table, job_provenance(snakemake, params.seed))
loop.finish(loop_settings)
