"""Inception-v3 pool3 statistics (mean, covariance) of a dataset's training images: the reference of true FID."""

import time

import numpy as np

from neurips26.common import loop
from neurips26.common.io import load_npz, save_npz
from neurips26.common.runtime import start_job
from neurips26.pred_loss_space import fd, inception

log = start_job(snakemake)
device = loop.job_device()  # paper scale asks for a GPU (profiles/slurm)
x_train = load_npz(snakemake.input.data)["x_train"]
net = inception.load_inception(snakemake.input.weights, device=device)
start = time.perf_counter()
features = inception.inception_features(net, x_train, batch=snakemake.params.batch, device=device)
mu, sigma = fd.gaussian_stats(features)
log.info("Inception features of %d training images on %s in %.1f s", len(x_train), device, time.perf_counter() - start)
save_npz(snakemake.output[0], mu=mu, sigma=sigma, n=np.int64(len(x_train)))
