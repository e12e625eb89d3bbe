"""Compare BIRD with a trained network along the network's own reverse trajectories (authors'
`k_cal_vs_k_mem_sweep.py`): at every
DDIM step of every kept checkpoint, the cosine similarity of the network's eps with BIRD's eps for each window,
the ideal (full-image) denoiser and the optimal linear denoiser, and BIRD's posterior entropy on central pixels."""

import numpy as np
import torch

from neurips26.bird import artifacts, calibration, data, experiment, networks
from neurips26.common.io import load_npz, write_parquet
from neurips26.common.runtime import job_provenance, start_job

params, wc = snakemake.params, snakemake.wildcards
n, seed = int(wc.n), int(wc.seed)
log = start_job(snakemake, seed=seed)
torch.set_num_threads(snakemake.threads)
kept, run = artifacts.load_checkpoints(snakemake.input.checkpoints)
train, indices = data.subset(load_npz(snakemake.input.data)["train"], n, params.subset_seed)
calibration.check_checkpoint_subset(run, n, indices, snakemake.input.checkpoints)
train = train.astype(np.float64)
cfg = params.calibrate
x_T = np.random.default_rng([seed, n, 2]).standard_normal((cfg["trajectories"], *train.shape[1:]))
model = networks.build_network(wc.arch, run["spec"], train.shape[1], train.shape[-1], seed=seed)
windows, soft = experiment.ordered_windows(params.windows), experiment.soft_noise(params.restriction)
table = calibration.calibrate_checkpoints(model, kept, x_T, cfg["steps"], train, windows, soft, log)
table = table.assign(dataset=wc.dataset, arch=wc.arch, n_train=n, seed=seed)
write_parquet(table, snakemake.output[0], job_provenance(snakemake, seed))
