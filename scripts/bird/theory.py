"""The Gaussian-channel theory of one dataset (paper Fig. 3(b)): I_G(k, SNR) = 1/2 sum_i log(1 + SNR lambda_i) over
the eigenvalues of the k x k patch covariance, and the critical SNR where it reaches log N, for every window."""

from neurips26.bird import measurements
from neurips26.common.io import load_npz, write_parquet
from neurips26.common.runtime import job_provenance, start_job

params = snakemake.params
log = start_job(snakemake)
heldout = load_npz(snakemake.input[0])["heldout"]
table = measurements.theory_table(heldout, params.dataset, params.windows, params.snr, snakemake.wildcards.dataset, log)
write_parquet(table, snakemake.output[0], job_provenance(snakemake, 0))
