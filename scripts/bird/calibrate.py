"""Compare BIRD with a trained network along the network's own reverse trajectories (addendum 2.5): at every
DDIM step of every kept checkpoint, the cosine similarity of the network's eps with BIRD's eps for each window,
the ideal (full-image) denoiser and the optimal linear denoiser, and BIRD's posterior entropy on central pixels."""

import numpy as np
import pandas as pd
import torch

from neurips26.bird import calibration, data, experiment, linear, networks, sampling
from neurips26.common.io import load_npz, write_parquet
from neurips26.common.runtime import job_provenance, start_job

params, wc = snakemake.params, snakemake.wildcards
n, seed = int(wc.n), int(wc.seed)
log = start_job(snakemake, seed=seed)
torch.set_num_threads(snakemake.threads)
saved = torch.load(snakemake.input.checkpoints, weights_only=False)
pool = load_npz(snakemake.input.data)["train"]
train, indices = data.subset(pool, n, params.subset_seed)
calibration.check_checkpoint_subset(saved, n, indices, snakemake.input.checkpoints)
train = train.astype(np.float64)
mean, covariance = linear.mean_covariance(train)
cfg, soft = params.calibrate, experiment.soft_noise(params.restriction)
windows = experiment.ordered_windows(params.windows)
x_T = np.random.default_rng([seed, n, 2]).standard_normal((cfg["trajectories"], *train.shape[1:]))
model = networks.build_network(wc.arch, saved["spec"], train.shape[1], train.shape[-1], seed=seed)
frames = []
for epoch, state in saved["checkpoints"].items():
    model.load_state_dict(state)
    eps_net = calibration.network_eps(model)
    _, trajectory = sampling.ddim_sample(eps_net, x_T, cfg["steps"], return_trajectory=True)
    frame = calibration.compare_along_trajectory(trajectory, train, windows, mean, covariance, soft=soft)
    frames.append(frame.assign(epoch=int(epoch)))
    high = frame[(frame["t"] >= 0.5) & frame["window"].isin(experiment.local_windows(windows))]
    log.info("epoch %d: best local cos at high noise %.3f", epoch, high.groupby("step")["cos"].max().mean())
table = pd.concat(frames, ignore_index=True).assign(dataset=wc.dataset, arch=wc.arch, n_train=n, seed=seed)
write_parquet(table, snakemake.output[0], job_provenance(snakemake, seed))
