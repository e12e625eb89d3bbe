"""Scaffold split by cluster (Butina on ECFP4 of the scaffolds): whole clusters go to train, val or test, so test
scaffolds are out of distribution; the leak check runs before the table is written."""

import pandas as pd

from neurips26.amortix import corpus
from neurips26.common.io import write_parquet
from neurips26.common.runtime import job_provenance, start_job

params = snakemake.params
log = start_job(snakemake, seed=params.seed)
molecules = pd.read_parquet(snakemake.input.corpus)
split = corpus.split_scaffolds(
    sorted(molecules["scaffold"].unique()),
    cutoff=params.split["cutoff"],
    fractions=tuple(params.split["fractions"]),
    seed=params.seed,
)
corpus.check_no_leak(split)
sizes = (
    molecules.merge(split, on="scaffold")
    .groupby("split")
    .agg(scaffolds=("scaffold", "nunique"), molecules=("smiles", "size"))
)
log.info("split by %d clusters:\n%s", split["cluster"].nunique(), sizes)
write_parquet(split, snakemake.output[0], job_provenance(snakemake, params.seed))
