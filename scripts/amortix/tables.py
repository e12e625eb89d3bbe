"""The report's tables: scaffold decoration (score, success, validity, retention, uniqueness, novelty, oracle calls
at inference and in training), best-of-K with the break-even K, RL training, PMO-lite, throughput."""

from pathlib import Path

import pandas as pd

from neurips26.amortix import summary
from neurips26.amortix.artifacts import load_oracle, score_candidates
from neurips26.amortix.evaluation import best_per_scaffold
from neurips26.common.io import write_parquet
from neurips26.common.runtime import job_provenance, start_job

inp, params = snakemake.input, snakemake.params
log = start_job(snakemake)
samples = {Path(p).stem: pd.read_parquet(p) for p in inp.samples}
logs = pd.concat([pd.read_parquet(p) for p in inp.rl], ignore_index=True)
training = summary.training_table(logs)
rl_calls = {f"{r.variant}_s{r.seed}": r.oracle_calls for r in training.itertuples()}
oracle = load_oracle(snakemake.input.oracle)
instance, instance_success = {}, {}
for method, path in (("graph GA", inp.graph_ga), ("per-instance RL", inp.per_instance)):
    calls = pd.read_parquet(path)
    instance[method] = calls
    best = best_per_scaffold(summary.instance_candidates(calls, method))
    instance_success[method] = score_candidates(best.assign(valid=True, retained=True), oracle)
demos = pd.read_parquet(inp.demonstrations).merge(pd.read_parquet(inp.split), on="scaffold")
train_smiles = set(demos.loc[demos["split"] == "train", "smiles"])
decoration = summary.decoration_table(samples, rl_calls, instance, instance_success, params.k_values, train_smiles)
best_of_k = summary.best_of_k_table(samples, params.k_values)
pmo_calls = pd.concat([pd.read_parquet(p) for p in inp.pmo], ignore_index=True)
pmo = summary.pmo_table(pmo_calls, params.pmo["budget"], params.pmo["top_k"], params.pmo["freq"])
throughput = summary.throughput_table(samples, instance)
log.info("decoration table:\n%s", decoration.to_string())
log.info("PMO-lite:\n%s", pmo.to_string())
prov = job_provenance(snakemake)
for table, path in (
    (decoration, snakemake.output.decoration),
    (best_of_k, snakemake.output.best_of_k),
    (pmo, snakemake.output.pmo),
    (training, snakemake.output.training),
    (throughput, snakemake.output.throughput),
):
    write_parquet(table, path, prov)
