"""Summaries of every rule's runs: error rates with Clopper-Pearson intervals and stopping times against T*."""

import pandas as pd

from neurips26.common.io import write_parquet
from neurips26.common.runtime import job_provenance, start_job
from neurips26.thresh_mcts import evaluation

log = start_job(snakemake)
runs = pd.concat([pd.read_parquet(p) for p in snakemake.input.runs], ignore_index=True)
theory = pd.read_parquet(snakemake.input.theory).drop_duplicates("instance")
summary = evaluation.summarise(runs, theory)
slopes = evaluation.cost_slopes(pd.read_parquet(snakemake.input.cost))
log.info(
    "%d (rule, instance, delta) cells; cost slopes %s",
    len(summary),
    slopes.set_index("rule")["ops_slope"].round(3).to_dict(),
)
prov = job_provenance(snakemake)
write_parquet(summary, snakemake.output.summary, prov)
write_parquet(slopes, snakemake.output.slopes, prov)
