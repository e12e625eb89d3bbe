"""Instance-optimisation baseline: a scaffold-constrained graph GA on each baseline test scaffold, with a per-scaffold
oracle budget, started from the pretrained policy's samples (which count against the budget)."""

import pandas as pd

from neurips26.amortix import experiment, graph_ga
from neurips26.amortix.artifacts import baseline_scaffolds, load_oracle
from neurips26.common.io import write_parquet
from neurips26.common.runtime import job_provenance, start_job

params = snakemake.params
log = start_job(snakemake, seed=params.seed)
names = baseline_scaffolds(pd.read_parquet(snakemake.input.split), params.scaffolds)
config = experiment.env_config(params.env, params.max_heavy)
samples = pd.read_parquet(snakemake.input.samples)
oracle = load_oracle(snakemake.input.oracle)
table = graph_ga.run_on_scaffolds(
    samples, names, oracle, params.graph_ga, config.decoration_vocab, config.max_atoms, params.seed, log
)
write_parquet(table, snakemake.output[0], job_provenance(snakemake, params.seed))
