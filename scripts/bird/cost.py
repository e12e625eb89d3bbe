"""The cost of one denoising step: BIRD (one window, and the full image) against the U-Net's and the DiT's
forward pass on the same images, and how BIRD's grows with N (per image, best of `repeats`, one thread)."""

import time

import numpy as np
import pandas as pd
import torch

from neurips26.bird import data, networks, posterior, schedule
from neurips26.common.io import load_npz, write_parquet
from neurips26.common.runtime import job_provenance, start_job

params, dataset = snakemake.params, snakemake.wildcards.dataset
log = start_job(snakemake, seed=params.seed)
torch.set_num_threads(1)
cfg = params.cost
pool = load_npz(snakemake.input[0])["train"].astype(np.float64)
t = float(schedule.t_from_snr(1.0))
a, b = float(schedule.a(t)), float(schedule.b(t))
rng = np.random.default_rng(params.seed)
x_t = a * pool[: cfg["n_images"]] + b * rng.standard_normal((cfg["n_images"], *pool.shape[1:]))


def best_time(run) -> float:
    times = []
    for _ in range(cfg["repeats"]):
        start = time.perf_counter()
        run()
        times.append(time.perf_counter() - start)
    return min(times) / cfg["n_images"]


rows = []
for n in cfg["n_values"]:
    train, _ = data.subset(pool, n, params.seed)
    for label, window in ((f"bird k={cfg['window']}", cfg["window"]), ("ideal (full)", None)):
        seconds = best_time(lambda: posterior.bird_posterior(x_t, train, a, b, window))
        rows.append({"dataset": dataset, "method": label, "n_train": n, "seconds_per_image": seconds})
    log.info(
        "N = %d: BIRD k=%d %.2e s, ideal %.2e s per image",
        n,
        cfg["window"],
        rows[-2]["seconds_per_image"],
        rows[-1]["seconds_per_image"],
    )
z = torch.from_numpy(x_t.astype(np.float32))
for arch, spec in params.archs.items():
    model = networks.build_network(arch, dict(spec), pool.shape[1], pool.shape[-1]).eval()
    with torch.no_grad():
        model(z, torch.full((len(z),), t))  # warm-up
        seconds = best_time(lambda: model(z, torch.full((len(z),), t)))
    rows.append({"dataset": dataset, "method": arch, "n_train": np.nan, "seconds_per_image": seconds})
    log.info("%s: %.2e s per image", arch, seconds)
write_parquet(pd.DataFrame(rows), snakemake.output[0], job_provenance(snakemake, params.seed))
