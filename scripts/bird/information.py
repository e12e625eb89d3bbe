"""Posterior entropy and mutual information between restricted noisy observations and the training index
(the authors' entropy deficit, paper Fig. 2): I = log N - E[H(w)], by Monte Carlo over training images and noise,
for every
window and SNR, at one training-set size N."""

import numpy as np
import pandas as pd

from neurips26.bird import data, experiment, information, posterior, schedule
from neurips26.common.io import load_npz, write_parquet
from neurips26.common.runtime import job_provenance, start_job

params, wc = snakemake.params, snakemake.wildcards
n = int(wc.n)
log = start_job(snakemake, seed=params.seed)
train, _ = data.subset(load_npz(snakemake.input[0])["train"], n, params.seed)
rng = np.random.default_rng([params.seed, n])
x0 = train[rng.choice(n, params.information["n_images"], replace=False)].astype(np.float64)  # n ~ U(training set)
windows = experiment.ordered_windows(params.windows)
soft = experiment.soft_noise(params.restriction)
rows = []
for snr in experiment.snr_grid(params.snr):
    t = float(schedule.t_from_snr(snr))
    a, b = float(schedule.a(t)), float(schedule.b(t))
    x_t = a * x0 + b * rng.standard_normal(x0.shape)
    posteriors = posterior.bird_posteriors(x_t, train, a, b, [experiment.window_value(w) for w in windows], soft=soft)
    for window, post in zip(windows, posteriors):
        k = experiment.window_value(window)
        central, central_se = information.mutual_information_estimate(post.entropy, n, exclude_border=(k or 1) // 2)
        every, every_se = information.mutual_information_estimate(post.entropy, n)
        rows.append(
            {
                "dataset": wc.dataset,
                "n_train": n,
                "snr": snr,
                "t": t,
                "window": window,
                "k": experiment.window_k(window),
                "mi_central": central,
                "mi_central_se": central_se,
                "mi_all": every,
                "mi_all_se": every_se,
                "log_n": np.log(n),
            }
        )
    log.info(
        "SNR %.3g (t %.3f): I/log N %s",
        snr,
        t,
        {r["window"]: round(float(r["mi_central"] / np.log(n)), 2) for r in rows[-len(windows) :]},
    )
write_parquet(pd.DataFrame(rows), snakemake.output[0], job_provenance(snakemake, params.seed))
