"""The synthetic cohort of paper 03 (quick, smoke), both splits in one job (train and eval: independent draws, each
seeded by the data seed and its split, as one job per split would draw them): volumes in [-1, 1] and their
ground-truth part labels on the template's grid, checked, and the subject tables (true regional volumes and every
drawn parameter).

snakemake.input: template. snakemake.params: data (train, eval: subjects per split; seed). snakemake.output: train,
eval (data/<split>.npz) and train_subjects, eval_subjects (data/<split>_subjects.parquet)."""

import numpy as np

from neurips26.anadiffusion.artifacts import save_split
from neurips26.anadiffusion.cohort import synthesize_cohort
from neurips26.anadiffusion.template import template_from_arrays
from neurips26.anadiffusion.volumes import check_parts, check_volumes
from neurips26.common.io import load_npz, write_parquet
from neurips26.common.runtime import job_provenance, start_job

p = snakemake.params
log = start_job(snakemake, p.data["seed"])
template = template_from_arrays(load_npz(snakemake.input.template))
for split in ("train", "eval"):
    cohort = synthesize_cohort(template, p.data[split], p.data["seed"], split)
    check_volumes(cohort.volumes, template, where=f"{split} volumes")
    check_parts(cohort.parts, cohort.parts > 0, where=f"{split} part labels")
    log.info("%s: %d subjects (%s), brain volume %.0f mm^3 on average", split, len(cohort.volumes),
             dict(cohort.subjects["group"].value_counts()), float(np.mean(cohort.subjects["brain_mm3"])))  # fmt: skip
    save_split(getattr(snakemake.output, split), cohort.volumes, cohort.parts)
    subjects = getattr(snakemake.output, f"{split}_subjects")
    write_parquet(cohort.subjects, subjects, job_provenance(snakemake, p.data["seed"]))
