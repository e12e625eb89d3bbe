"""Paper 03's claims: measured by the library from the evaluation tables, the training traces and the sampling and
editing jobs' input records, decided against config/claims/anadiffusion.yaml.

snakemake.input: definitions (the claims file); fd, cohen_d, edit, memorization, assets, conditioning, volumes
(evaluation/*.parquet); eval_subjects (data/eval_subjects.parquet: the held-out scans, with their true volumes where
the cohort is synthetic);
traces (list: models/*_trace.parquet, the model named by the file's stem before ``_trace``); input_records (list:
the records of their inputs that the sampling, editing and evaluation jobs and the Seg. cLDM's job write).
snakemake.params: subject_files (list: the cohort's per-subject files and the training latents), expected_jobs (the
jobs whose records K1 needs: experiment.record_jobs of the config), dataset (the config's data.source: ``adni`` at
paper scale, where the published numbers are comparable).
snakemake.output[0]: claims.parquet."""

from pathlib import Path

import pandas as pd

from neurips26.anadiffusion.claims import measure_claims
from neurips26.common.claims import decide, load_definitions, log_verdicts
from neurips26.common.io import write_parquet
from neurips26.common.runtime import job_provenance, start_job

inp = snakemake.input
log = start_job(snakemake)
traces = pd.concat(
    [pd.read_parquet(p).assign(model=Path(p).stem.removesuffix("_trace")) for p in inp.traces], ignore_index=True
)
measured = measure_claims(
    pd.read_parquet(inp.fd),
    pd.read_parquet(inp.cohen_d),
    pd.read_parquet(inp.edit),
    pd.read_parquet(inp.memorization),
    pd.read_parquet(inp.assets),
    traces,
    pd.concat([pd.read_parquet(p) for p in inp.input_records] or [pd.DataFrame(columns=["job"])], ignore_index=True),
    list(snakemake.params.subject_files),
    snakemake.params.dataset,
    volumes=pd.read_parquet(inp.volumes),
    eval_subjects=pd.read_parquet(inp.eval_subjects),
    expected_jobs=list(snakemake.params.expected_jobs),
    conditioning=pd.read_parquet(inp.conditioning),
)
table = decide(load_definitions(inp.definitions), measured)
log_verdicts(table, log)
write_parquet(table, snakemake.output[0], job_provenance(snakemake))
