"""The cost of one denoising step: BIRD (one window, and the full image) against the networks' forward pass on the
same noisy images, and how BIRD's grows with N (seconds per image, best of `repeats`)."""

from __future__ import annotations

import time
from collections.abc import Callable

import numpy as np
import pandas as pd
import torch

from neurips26.bird import data, networks, posterior, schedule


def best_time(run: Callable[[], object], repeats: int, n_images: int) -> float:
    """The fastest of `repeats` calls of `run`, per image."""
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        run()
        times.append(time.perf_counter() - start)
    return min(times) / n_images


def step_costs(pool: np.ndarray, cfg: dict, archs: dict, seed: int, log=None) -> pd.DataFrame:
    """One row per (method, N): BIRD with window cfg["window"] and the ideal (full-image) denoiser for each N of
    cfg["n_values"], and each network of `archs` (name -> spec; n_train NaN), at SNR 1 on cfg["n_images"] noisy
    training images; columns method, n_train, seconds_per_image."""
    t = float(schedule.t_from_snr(1.0))
    a, b = float(schedule.a(t)), float(schedule.b(t))
    n_images, repeats = cfg["n_images"], cfg["repeats"]
    rng = np.random.default_rng(seed)
    x_t = a * pool[:n_images] + b * rng.standard_normal((n_images, *pool.shape[1:]))
    rows = []
    for n in cfg["n_values"]:
        train, _ = data.subset(pool, n, seed)
        for label, window in ((f"bird k={cfg['window']}", cfg["window"]), ("ideal (full)", None)):
            seconds = best_time(lambda w=window, x=train: posterior.bird_posterior(x_t, x, a, b, w), repeats, n_images)
            rows.append({"method": label, "n_train": n, "seconds_per_image": seconds})
        if log:
            log.info(
                "N = %d: BIRD k=%d %.2e s, ideal %.2e s per image",
                n,
                cfg["window"],
                rows[-2]["seconds_per_image"],
                rows[-1]["seconds_per_image"],
            )
    z = torch.from_numpy(x_t.astype(np.float32))
    for arch, spec in archs.items():
        model = networks.build_network(arch, dict(spec), pool.shape[1], pool.shape[-1]).eval()
        with torch.no_grad():
            model(z, torch.full((len(z),), t))  # warm-up
            seconds = best_time(lambda m=model: m(z, torch.full((len(z),), t)), repeats, n_images)
        rows.append({"method": arch, "n_train": np.nan, "seconds_per_image": seconds})
        if log:
            log.info("%s: %.2e s per image", arch, seconds)
    return pd.DataFrame(rows)
