"""The cost of one denoising step: BIRD (one window, and the full image) against the U-Net's and the DiT's
forward pass on the same images, and how BIRD's grows with N (per image, best of `repeats`, one thread)."""

import numpy as np
import torch

from neurips26.bird import cost
from neurips26.common.io import load_npz, write_parquet
from neurips26.common.runtime import job_provenance, start_job

params = snakemake.params
log = start_job(snakemake, seed=params.seed)
torch.set_num_threads(1)
pool = load_npz(snakemake.input[0])["train"].astype(np.float64)
table = cost.step_costs(pool, params.cost, params.archs, params.seed, log)
table.insert(0, "dataset", snakemake.wildcards.dataset)
write_parquet(table, snakemake.output[0], job_provenance(snakemake, params.seed))
