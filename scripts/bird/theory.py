"""The Gaussian-channel theory of one dataset (paper Fig. 3(b)): I_G(k, SNR) = 1/2 sum_i log(1 + SNR lambda_i) over
the eigenvalues of the k x k patch covariance, and the critical SNR where it reaches log N, for every window."""

import numpy as np
import pandas as pd

from neurips26.bird import experiment, information
from neurips26.common.io import load_npz, write_parquet
from neurips26.common.runtime import job_provenance, start_job

params, dataset = snakemake.params, snakemake.wildcards.dataset
log = start_job(snakemake)
cfg = params.dataset
heldout = load_npz(snakemake.input[0])["heldout"]
size = heldout.shape[-1]
curve = np.union1d(np.logspace(-3, 3, 241), experiment.snr_grid(params.snr))  # the config grid is on it
rows = []
for window in experiment.ordered_windows(params.windows):
    k = experiment.window_value(window) or size
    if cfg["kind"] == "toeplitz":  # exact: the sampled field's covariance, averaged over patch positions
        covariance = information.toeplitz_patch_covariance(k, alpha=cfg["alpha"], field_size=size, position="average")
    else:  # estimated from the held-out images
        covariance = information.patch_covariance(heldout, k)
    eigenvalues = information.patch_eigenvalues(covariance)
    base = {"dataset": dataset, "window": window, "k": experiment.window_k(window)}
    rows += [
        {**base, "n_train": 0, "snr": s, "quantity": "i_gauss", "value": v}
        for s, v in zip(curve, information.gaussian_patch_mi(eigenvalues, curve))
    ]
    rows += [
        {**base, "n_train": n, "snr": np.nan, "quantity": "snr_crit", "value": information.critical_snr(eigenvalues, n)}
        for n in cfg["n_values"]
    ]
    log.info(
        "window %s: %d eigenvalues, critical SNR %s",
        window,
        len(eigenvalues),
        {r["n_train"]: round(r["value"], 4) for r in rows[-len(cfg["n_values"]) :]},
    )
write_parquet(pd.DataFrame(rows), snakemake.output[0], job_provenance(snakemake, 0))
