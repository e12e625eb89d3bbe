"""Draw samples from one trained cell with the Heun ODE sampler (final step Euler, as JiT)."""

import time

import torch

from neurips26.common import loop
from neurips26.common.io import save_npz
from neurips26.common.runtime import start_job
from neurips26.pred_loss_space import artifacts, models, sampling

wc, params = snakemake.wildcards, snakemake.params
seed = int(wc.seed)
log = start_job(snakemake, seed=seed)
state_dict, _ = artifacts.load_model(snakemake.input.model)
model = models.build_model(wc.arch, params.spec)
model.load_state_dict(state_dict)
model.to(loop.job_device()).eval()  # paper scale asks for a GPU (profiles/slurm)
spec, cfg = params.spec, params.sample
shape = (spec["dim"],) if "dim" in spec else (spec["channels"], spec["image_size"], spec["image_size"])
start = time.perf_counter()
samples = sampling.heun_sample(
    model, cfg["n"], shape, cfg["steps"], wc.pred, seed=seed + 1000, t_eps=params.t_eps, t_min=params.t_min
)
seconds = time.perf_counter() - start
finite = torch.isfinite(samples).all(dim=tuple(range(1, samples.dim())))
log.info("%d samples in %.1f s (%d steps); %d not finite", cfg["n"], seconds, cfg["steps"], int((~finite).sum()))
save_npz(snakemake.output[0], samples=samples.numpy(), seconds=seconds, steps=cfg["steps"])
