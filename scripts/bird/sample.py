"""BIRD's reverse process (deterministic DDIM driven by the BIRD denoiser) from shared noise, for each sampling
window, and the fraction of samples that are copies of a training image (nearest / second-nearest < 1/3)."""

import time

import numpy as np
import pandas as pd

from neurips26.bird import data, experiment, memorization, posterior, sampling, schedule
from neurips26.common.io import load_npz, save_npz, write_parquet
from neurips26.common.runtime import job_provenance, start_job

params, wc = snakemake.params, snakemake.wildcards
n = int(wc.n)
log = start_job(snakemake, seed=params.seed)
train, _ = data.subset(load_npz(snakemake.input[0])["train"], n, params.seed)
train = train.astype(np.float64)
cfg, soft = params.sample, experiment.soft_noise(params.restriction)
x_T = np.random.default_rng([params.seed, n, 1]).standard_normal((cfg["n"], *train.shape[1:]))
rows, arrays = [], {}
for window in experiment.ordered_windows(cfg["windows"]):
    k = experiment.window_value(window)

    def eps_fn(x, t, k=k):
        return posterior.bird_posterior(x, train, float(schedule.a(t)), float(schedule.b(t)), k, soft=soft).eps_hat

    start = time.perf_counter()
    samples = sampling.ddim_sample(eps_fn, x_T, cfg["steps"])
    nearest = memorization.nearest_distances(samples, train)
    rows.append(
        {
            "dataset": wc.dataset,
            "n_train": n,
            "window": window,
            "k": experiment.window_k(window),
            "fraction_memorized": memorization.fraction_memorized(nearest.ratio),
            "median_ratio": float(np.median(nearest.ratio)),
            "n_samples": cfg["n"],
        }
    )
    arrays[f"samples_{window}"] = samples.astype(np.float32)
    arrays[f"nearest_{window}"] = train[nearest.nearest].astype(np.float32)
    log.info(
        "window %s: %d samples in %.1f s, memorized %.2f, median d1/d2 %.3f",
        window,
        cfg["n"],
        time.perf_counter() - start,
        rows[-1]["fraction_memorized"],
        rows[-1]["median_ratio"],
    )
save_npz(snakemake.output.samples, **arrays)
write_parquet(pd.DataFrame(rows), snakemake.output.memorization, job_provenance(snakemake, params.seed))
