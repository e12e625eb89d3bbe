"""Collect the documents of a named corpus and split them by document into train and validation."""

from neurips26.common.corpus import build_documents
from neurips26.common.io import write_parquet
from neurips26.common.runtime import job_provenance, start_job

log = start_job(snakemake)
corpus = snakemake.wildcards.corpus
documents = build_documents(corpus, snakemake.params.validation_fraction)
for split, group in documents.groupby("split"):
    log.info("%s: %d %s documents, %d characters", corpus, len(group), split, group["n_chars"].sum())
write_parquet(documents, snakemake.output[0], job_provenance(snakemake))
