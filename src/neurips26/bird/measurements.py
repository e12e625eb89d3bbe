"""What paper 04's BIRD jobs measure, one function per job (the scripts read inputs and write these tables):

- `information_table`: posterior entropy and mutual information I = log N - E[H(w)] (the authors' entropy deficit,
  paper Fig. 2) by Monte Carlo over training images and noise, for every window and SNR, at one N;
- `theory_table`: the Gaussian-channel theory of one dataset, I_G(k, SNR) = 1/2 sum_i log(1 + SNR lambda_i) over the
  eigenvalues of the k x k patch covariance, and the critical SNR where it reaches log N (paper Fig. 3(b), (c));
- `sample_windows`: BIRD's reverse process (deterministic DDIM driven by the BIRD denoiser) from shared noise for each
  sampling window, and the fraction of samples that copy a training image (d1 / d2 < 1/3, our criterion).
"""

from __future__ import annotations

import time

import numpy as np
import pandas as pd

from neurips26.bird import experiment, information, memorization, posterior, sampling, schedule


def information_table(
    train: np.ndarray, n_images: int, windows: list, snr: dict, soft: float, seed: int, dataset: str, log=None
) -> pd.DataFrame:
    """One row per (SNR, window): I on central pixels (a k // 2 border excluded) and on every pixel, with their
    standard errors, for `n_images` training images drawn without replacement (rng seeded by (seed, N))."""
    n = len(train)
    rng = np.random.default_rng([seed, n])
    x0 = train[rng.choice(n, n_images, replace=False)].astype(np.float64)  # n ~ U(training set)
    windows = experiment.ordered_windows(windows)
    rows = []
    for value in experiment.snr_grid(snr):
        t = float(schedule.t_from_snr(value))
        a, b = float(schedule.a(t)), float(schedule.b(t))
        x_t = a * x0 + b * rng.standard_normal(x0.shape)
        posteriors = posterior.bird_posteriors(
            x_t, train, a, b, [experiment.window_value(w) for w in windows], soft=soft
        )
        for window, post in zip(windows, posteriors):
            k = experiment.window_value(window)
            central, central_se = information.mutual_information_estimate(post.entropy, n, exclude_border=(k or 1) // 2)
            every, every_se = information.mutual_information_estimate(post.entropy, n)
            rows.append(
                {
                    "dataset": dataset,
                    "n_train": n,
                    "snr": value,
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
        if log:
            ratios = {r["window"]: round(float(r["mi_central"] / np.log(n)), 2) for r in rows[-len(windows) :]}
            log.info("SNR %.3g (t %.3f): I/log N %s", value, t, ratios)
    return pd.DataFrame(rows)


def theory_table(heldout: np.ndarray, cfg: dict, windows: list, snr: dict, dataset: str, log=None) -> pd.DataFrame:
    """Long table of the theory of one dataset (`cfg`: its config entry): quantity "i_gauss" per (window, SNR) on
    a fine grid holding the config's SNR grid, and "snr_crit" per (window, N of cfg["n_values"]). The Toeplitz
    field's patch covariance is exact (averaged over patch positions), the others' estimated from `heldout`."""
    size = heldout.shape[-1]
    curve = np.union1d(np.logspace(-3, 3, 241), experiment.snr_grid(snr))  # the config grid is on it
    rows = []
    for window in experiment.ordered_windows(windows):
        k = experiment.window_value(window) or size
        if cfg["kind"] == "toeplitz":
            covariance = information.toeplitz_patch_covariance(
                k, alpha=cfg["alpha"], field_size=size, position="average"
            )
        else:
            covariance = information.patch_covariance(heldout, k)
        eigenvalues = information.patch_eigenvalues(covariance)
        base = {"dataset": dataset, "window": window, "k": experiment.window_k(window)}
        rows += [
            {**base, "n_train": 0, "snr": s, "quantity": "i_gauss", "value": v}
            for s, v in zip(curve, information.gaussian_patch_mi(eigenvalues, curve))
        ]
        rows += [
            {
                **base,
                "n_train": n,
                "snr": np.nan,
                "quantity": "snr_crit",
                "value": information.critical_snr(eigenvalues, n),
            }
            for n in cfg["n_values"]
        ]
        if log:
            crit = {r["n_train"]: round(r["value"], 4) for r in rows[-len(cfg["n_values"]) :]}
            log.info("window %s: %d eigenvalues, critical SNR %s", window, len(eigenvalues), crit)
    return pd.DataFrame(rows)


def sample_windows(
    train: np.ndarray, cfg: dict, soft: float, seed: int, dataset: str, log=None
) -> tuple[pd.DataFrame, dict[str, np.ndarray]]:
    """BIRD's samples for each window of cfg["windows"] (cfg["n"] samples, cfg["steps"] DDIM steps, shared noise
    seeded by (seed, N, 1)) and their memorization; returns (one row per window, arrays samples_<w> and
    nearest_<w> (each sample's nearest training image), float32)."""
    n = len(train)
    x_T = np.random.default_rng([seed, n, 1]).standard_normal((cfg["n"], *train.shape[1:]))
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
                "dataset": dataset,
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
        if log:
            log.info(
                "window %s: %d samples in %.1f s, memorized %.2f, median d1/d2 %.3f",
                window,
                cfg["n"],
                time.perf_counter() - start,
                rows[-1]["fraction_memorized"],
                rows[-1]["median_ratio"],
            )
    return pd.DataFrame(rows), arrays
