"""Single-shot inference on the test scaffolds (one greedy rollout each: zero oracle calls) and K sampled
completions each (for best-of-K); both scored afterwards for evaluation only. Molecules per second are timed."""

import pickle
import time
from pathlib import Path

import pandas as pd
import torch

from neurips26.amortix import environment as env
from neurips26.amortix import experiment
from neurips26.amortix.artifacts import score_candidates, split_scaffolds
from neurips26.amortix.evaluation import candidate_frame
from neurips26.amortix.policy import available_device, policy_from_state
from neurips26.amortix.rollout import rollout
from neurips26.common.io import write_parquet
from neurips26.common.runtime import job_provenance, start_job

params, wc = snakemake.params, snakemake.wildcards
log = start_job(snakemake, seed=params.seed)
cfg = params.config
config = experiment.env_config(cfg)
elements = experiment.element_index(config)
names = split_scaffolds(pd.read_parquet(snakemake.input.split), "test", cfg["evaluate"]["test_scaffolds"])
scaffolds = [env.make_scaffold(s, config) for s in names]
policy = policy_from_state(torch.load(snakemake.input.policy, weights_only=False), available_device())
oracle = pickle.loads(Path(snakemake.input.oracle).read_bytes())
k = max(cfg["evaluate"]["k_values"])
frames = []
for mode, repeats in (("greedy", 1), ("sample", k)):
    start = time.perf_counter()
    episodes = rollout(policy, scaffolds, repeats, config, elements, temperature=cfg["evaluate"]["temperature"],
                       greedy=mode == "greedy", generator=torch.Generator().manual_seed(params.seed))
    seconds = time.perf_counter() - start
    frame = candidate_frame(wc.policy, names, [e.outcome for e in episodes], repeats)
    frames.append(score_candidates(frame, oracle).assign(mode=mode, molecules_per_second=len(frame) / seconds))
    log.info("%s %s: %d molecules in %.2f s (%.0f per second), valid %.3f, retained %.3f, mean score %.3f",
             wc.policy, mode, len(frame), seconds, len(frame) / seconds, frame["valid"].mean(),
             frame["retained"].mean(), frames[-1]["score"].mean())
write_parquet(pd.concat(frames, ignore_index=True), snakemake.output[0], job_provenance(snakemake, params.seed))
