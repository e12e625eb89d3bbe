"""Draw samples from one trained cell, for every seed of the job's seed group, with the Heun ODE sampler (final
step Euler, as JiT); seed s draws its initial noise from seed s + 1000, as a job of that seed alone."""

import time

import numpy as np
import torch

from neurips26.common import loop
from neurips26.common.io import save_npz
from neurips26.common.runtime import start_job
from neurips26.pred_loss_space import artifacts, experiment, models, sampling

wc, params = snakemake.wildcards, snakemake.params
seeds = experiment.parse_group(wc.seeds)
log = start_job(snakemake, seed=seeds[0])
states, _ = artifacts.load_seed_models(snakemake.input.model)
model = models.build_model(wc.arch, params.spec)
device = loop.job_device()  # paper scale asks for a GPU (profiles/slurm)
spec, cfg = params.spec, params.sample
shape = (spec["dim"],) if "dim" in spec else (spec["channels"], spec["image_size"], spec["image_size"])
drawn, seconds = [], []
for seed in seeds:
    model.load_state_dict(states[seed])
    model.to(device).eval()
    start = time.perf_counter()
    samples = sampling.heun_sample(
        model, cfg["n"], shape, cfg["steps"], wc.pred, seed=seed + 1000, t_eps=params.t_eps, t_min=params.t_min
    )
    seconds.append(time.perf_counter() - start)
    finite = torch.isfinite(samples).all(dim=tuple(range(1, samples.dim())))
    log.info(
        "seed %d: %d samples in %.1f s (%d steps); %d not finite",
        *(seed, cfg["n"], seconds[-1], cfg["steps"], int((~finite).sum())),
    )
    drawn.append(samples.numpy())
save_npz(
    snakemake.output[0], seeds=np.array(seeds), samples=np.stack(drawn), seconds=np.array(seconds), steps=cfg["steps"]
)
