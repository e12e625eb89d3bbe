"""Posterior entropy and mutual information between restricted noisy observations and the training index
(the authors' entropy deficit, paper Fig. 2) for every window and SNR, at one training-set size N."""

from neurips26.bird import data, experiment, measurements
from neurips26.common.io import load_npz, write_parquet
from neurips26.common.runtime import job_provenance, start_job

params, wc = snakemake.params, snakemake.wildcards
log = start_job(snakemake, seed=params.seed)
train, _ = data.subset(load_npz(snakemake.input[0])["train"], int(wc.n), params.seed)
soft = experiment.soft_noise(params.restriction)
table = measurements.information_table(
    train, params.information["n_images"], params.windows, params.snr, soft, params.seed, wc.dataset, log
)
write_parquet(table, snakemake.output[0], job_provenance(snakemake, params.seed))
