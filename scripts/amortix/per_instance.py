"""Instance-optimisation baseline: per-instance RL (Dr. GRPO on one scaffold at a time, from the pretrained policy)
with a per-scaffold oracle budget; repeated molecules are not scored twice."""

import pickle
import time
from pathlib import Path

import pandas as pd
import torch

from neurips26.amortix import environment as env
from neurips26.amortix import experiment, objectives
from neurips26.amortix.artifacts import baseline_scaffolds
from neurips26.amortix.policy import available_device, policy_from_state
from neurips26.amortix.training import optimise_instance
from neurips26.common.io import write_parquet
from neurips26.common.runtime import job_provenance, start_job

params = snakemake.params
log = start_job(snakemake, seed=params.seed)
cfg = params.config
names = baseline_scaffolds(pd.read_parquet(snakemake.input.split), cfg)
spec, config = cfg["baselines"]["per_instance"], experiment.env_config(cfg)
saved = torch.load(snakemake.input.policy, weights_only=False)
oracle = pickle.loads(Path(snakemake.input.oracle).read_bytes())
frames = []
for index, scaffold in enumerate(names):
    scorer = objectives.Scorer(oracle, budget=spec["budget"], cache=True)
    start = time.perf_counter()
    rows = optimise_instance(policy_from_state(saved, available_device()), env.make_scaffold(scaffold, config), scorer,
                             spec["group_size"], spec["budget"], spec["lr"], config,
                             experiment.element_index(config), seed=params.seed + index)
    seconds = time.perf_counter() - start
    calls = pd.DataFrame(rows, columns=["call", "smiles", "score", "round"])
    frames.append(calls.assign(scaffold=scaffold, calls_per_second=len(calls) / seconds))
    log.info("%s: %d calls in %.1f s, best %.3f", scaffold, len(calls), seconds, calls["score"].max())
write_parquet(pd.concat(frames, ignore_index=True), snakemake.output[0], job_provenance(snakemake, params.seed))
