"""PMO-lite on one RDKit oracle: from the start structure, with one oracle budget each, (a) sampling the
pretrained policy (random), (b) amortized RL fine-tuning with Dr. GRPO, (c) the constrained graph GA; every
method's oracle calls in order (unique molecules only, as in mol_opt), for the top-k AUC."""

import time

import pandas as pd
import torch

from neurips26.amortix import environment as env
from neurips26.amortix import experiment, graph_ga, objectives
from neurips26.amortix.policy import available_device, policy_from_state
from neurips26.amortix.training import optimise_instance
from neurips26.common.io import write_parquet
from neurips26.common.runtime import job_provenance, start_job

params, wc = snakemake.params, snakemake.wildcards
log = start_job(snakemake, seed=params.seed)
cfg = params.config
config = experiment.env_config(cfg)
spec = cfg["pmo"]
saved = torch.load(snakemake.input.policy, weights_only=False)
oracle = objectives.make_oracle(wc.oracle)
start_scaffold = env.make_scaffold(spec["start"], config)
elements = experiment.element_index(config)
frames, initial = [], []
for method in ("random", "amortized", "graph_ga"):
    start = time.perf_counter()
    if method == "graph_ga":
        calls = graph_ga.run_constrained_ga(spec["start"], initial, oracle, spec["budget"],
                                            population_size=spec["group_size"], offspring_size=spec["group_size"],
                                            vocab=config.decoration_vocab, max_heavy=config.max_atoms,
                                            seed=params.seed)
    else:
        scorer = objectives.Scorer(oracle, budget=spec["budget"], cache=True)
        rows = optimise_instance(policy_from_state(saved, available_device()), start_scaffold, scorer, spec["group_size"],
                                 spec["budget"], spec["lr"], config, elements, seed=params.seed,
                                 learn=method == "amortized")
        calls = pd.DataFrame(rows, columns=["call", "smiles", "score", "round"])
        if method == "random":
            initial = calls["smiles"].head(spec["group_size"]).tolist()  # the GA starts from the policy's samples
    seconds = time.perf_counter() - start
    frames.append(calls[["call", "smiles", "score"]].assign(method=method, oracle=wc.oracle, seconds=seconds))
    log.info("%s on %s: %d calls in %.1f s, best %.3f, top-%d mean %.3f", method, wc.oracle, len(calls), seconds,
             calls["score"].max(), spec["top_k"], calls["score"].nlargest(spec["top_k"]).mean())
write_parquet(pd.concat(frames, ignore_index=True), snakemake.output[0], job_provenance(snakemake, params.seed))
