"""Every configured axiom checked on every profile of one source ({source}), per seed, reference, rule and beta
(neurips26.posttrain_voting.experiment.axiom_table); seeds are a loop inside the one job."""

import time

import pandas as pd

from neurips26.common.io import write_parquet
from neurips26.common.runtime import job_provenance, start_job
from neurips26.posttrain_voting.coval import load_profiles
from neurips26.posttrain_voting.experiment import axiom_table

sweep = snakemake.params.sweep
source = snakemake.wildcards.source
log = start_job(snakemake)
profiles = None
if source != "synthetic":
    profiles = load_profiles(pd.read_parquet(snakemake.input.profiles), sweep["prompts"])
tables = []
for seed in sweep["seeds"]:
    start = time.perf_counter()
    tables.append(axiom_table(sweep, source, seed, profiles))
    log.info("%s seed %d: %d checks in %.1f s", source, seed, len(tables[-1]), time.perf_counter() - start)
table = pd.concat(tables, ignore_index=True)
log.info("violated: %d of %d checks", (~table["holds"]).sum(), len(table))
write_parquet(table, snakemake.output[0], job_provenance(snakemake))
