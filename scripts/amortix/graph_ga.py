"""Instance-optimisation baseline: a scaffold-constrained graph GA on each baseline test scaffold, with a per-scaffold
oracle budget, started from the pretrained policy's samples (which count against the budget)."""

import pickle
import time
from pathlib import Path

import pandas as pd

from neurips26.amortix import experiment, graph_ga
from neurips26.amortix.artifacts import baseline_scaffolds
from neurips26.common.io import write_parquet
from neurips26.common.runtime import job_provenance, start_job

params = snakemake.params
log = start_job(snakemake, seed=params.seed)
names = baseline_scaffolds(pd.read_parquet(snakemake.input.split), params.scaffolds)
spec, config = params.graph_ga, experiment.env_config(params.env, params.max_heavy)
samples = pd.read_parquet(snakemake.input.samples)
oracle = pickle.loads(Path(snakemake.input.oracle).read_bytes())
frames = []
for index, scaffold in enumerate(names):
    pool = samples[(samples["scaffold"] == scaffold) & (samples["mode"] == "sample") & samples["valid"]]
    start = time.perf_counter()
    calls = graph_ga.run_constrained_ga(
        scaffold,
        pool["smiles"].drop_duplicates().head(spec["population"]).tolist(),
        oracle,
        spec["budget"],
        population_size=spec["population"],
        offspring_size=spec["offspring"],
        vocab=config.decoration_vocab,
        max_heavy=config.max_atoms,
        seed=params.seed + index,
    )
    seconds = time.perf_counter() - start
    frames.append(calls.assign(scaffold=scaffold, calls_per_second=len(calls) / seconds))
    log.info(
        "%s: %d calls in %.1f s (%.0f per second), best %.3f (%s)",
        scaffold,
        len(calls),
        seconds,
        len(calls) / seconds,
        calls["score"].max(),
        calls.attrs.get("stop"),
    )
write_parquet(pd.concat(frames, ignore_index=True), snakemake.output[0], job_provenance(snakemake, params.seed))
