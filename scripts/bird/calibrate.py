"""Compare BIRD with the trained networks of one seed group along each network's own reverse trajectories
(authors' `k_cal_vs_k_mem_sweep.py`): at every DDIM step of every kept checkpoint, the cosine similarity of the
network's eps with BIRD's eps for each window, the ideal (full-image) denoiser and the optimal linear denoiser, and
BIRD's posterior entropy on central pixels. Each seed starts from its own noise; its rows equal its single-seed
job's."""

import numpy as np
import torch

from neurips26.bird import artifacts, calibration, data, experiment, networks
from neurips26.common.io import load_npz, write_parquet
from neurips26.common.runtime import job_provenance, start_job

params, wc = snakemake.params, snakemake.wildcards
n, seeds = int(wc.n), experiment.parse_seeds(wc.seeds)
log = start_job(snakemake, seed=seeds[0])
torch.set_num_threads(snakemake.threads)
kept, run = artifacts.load_checkpoints(snakemake.input.checkpoints)
train, indices = data.subset(load_npz(snakemake.input.data)["train"], n, params.subset_seed)
calibration.check_checkpoint_subset(run, n, indices, snakemake.input.checkpoints)
artifacts.check_seeds(kept, seeds, snakemake.input.checkpoints)
train = train.astype(np.float64)
cfg = params.calibrate
model = networks.build_network(wc.arch, run["spec"], train.shape[1], train.shape[-1])
windows, soft = experiment.ordered_windows(params.windows), experiment.soft_noise(params.restriction)
kept = {seed: kept[seed] for seed in seeds}  # the rows in the group's seed order
table = calibration.calibrate_seeds(model, kept, n, cfg["trajectories"], cfg["steps"], train, windows, soft, log)
table = table.assign(dataset=wc.dataset, arch=wc.arch, n_train=n)
table = table[[c for c in table.columns if c != "seed"] + ["seed"]]  # the columns of one seed's table
prov_seed = seeds[0] if len(seeds) == 1 else seeds  # the table's seed column names each row's
write_parquet(table, snakemake.output[0], job_provenance(snakemake, prov_seed))
