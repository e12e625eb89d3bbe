"""BIRD's reverse process (deterministic DDIM driven by the BIRD denoiser) from shared noise, for each sampling
window, and the fraction of samples that are copies of a training image (nearest / second-nearest < 1/3)."""

import numpy as np

from neurips26.bird import data, experiment, measurements
from neurips26.common.io import load_npz, save_npz, write_parquet
from neurips26.common.runtime import job_provenance, start_job

params, wc = snakemake.params, snakemake.wildcards
log = start_job(snakemake, seed=params.seed)
train, _ = data.subset(load_npz(snakemake.input[0])["train"], int(wc.n), params.seed)
soft = experiment.soft_noise(params.restriction)
table, arrays = measurements.sample_windows(train.astype(np.float64), params.sample, soft, params.seed, wc.dataset, log)
save_npz(snakemake.output.samples, **arrays)
write_parquet(table, snakemake.output.memorization, job_provenance(snakemake, params.seed))
