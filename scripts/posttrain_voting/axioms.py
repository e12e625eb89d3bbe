"""Every configured axiom checked on every profile of one source ({source}), per seed, reference, rule and beta
(neurips26.posttrain_voting.experiment.axiom_table); seeds are a loop inside the one job. On CoVal the base_model
reference of each prompt comes from the base model's scores (neurips26.posttrain_voting.references)."""

import time

import pandas as pd

from neurips26.common.io import write_parquet
from neurips26.common.runtime import job_provenance, start_job
from neurips26.posttrain_voting.coval import load_profiles
from neurips26.posttrain_voting.experiment import axiom_table
from neurips26.posttrain_voting.references import base_model_references

sweep = snakemake.params.sweep
source = snakemake.wildcards.source
log = start_job(snakemake)
profiles = base_refs = None
if source != "synthetic":
    prompts = pd.read_parquet(snakemake.input.profiles).head(sweep["prompts"])
    profiles = load_profiles(prompts)
    if "base_model" in sweep["references"]["kinds"]:
        base_refs = base_model_references(pd.read_parquet(snakemake.input.base_model), prompts["prompt_id"])
tables = []
for seed in sweep["seeds"]:
    start = time.perf_counter()
    tables.append(axiom_table(sweep, source, seed, profiles, base_refs))
    log.info("%s seed %d: %d checks in %.1f s", source, seed, len(tables[-1]), time.perf_counter() - start)
table = pd.concat(tables, ignore_index=True)
log.info("violated: %d of %d checks", (~table["holds"]).sum(), len(table))
write_parquet(table, snakemake.output[0], job_provenance(snakemake))
