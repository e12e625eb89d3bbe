"""Score one trained cell, for every seed of the job's seed group: x-space denoising MSE over the t grid with the
measured error amplification, the final training losses, and sample quality: FD on the pipeline's own features
(a proxy, not FID) and, where configured, true FID on Inception-v3 features. Seed s draws its test noise from
seed s + 2000, as a job of that seed alone."""

import pandas as pd
import torch

from neurips26.common import loop
from neurips26.common.io import load_npz, write_parquet
from neurips26.common.runtime import job_provenance, start_job
from neurips26.pred_loss_space import artifacts, evaluation, experiment, models, sampling

wc, params = snakemake.wildcards, snakemake.params
seeds = experiment.parse_group(wc.seeds)
log = start_job(snakemake, seed=seeds[0])
arrays = load_npz(snakemake.input.data)
states, cell = artifacts.load_seed_models(snakemake.input.model)
model = models.build_model(wc.arch, params.spec)
device = loop.job_device()  # paper scale asks for a GPU (profiles/slurm)
x_test = torch.from_numpy(arrays["x_test"][: params.n_test])
drawn = load_npz(snakemake.input.samples)
train_log = pd.read_parquet(snakemake.input.train_log)
features = artifacts.load_model(snakemake.input.features[0]) if snakemake.input.features else None
frames = []
for seed in seeds:
    model.load_state_dict(states[seed])
    model.to(device).eval()
    per_t = sampling.denoise_errors(
        model, x_test, wc.pred, params.t_grid, seed=seed + 2000, t_eps=params.t_eps, t_min=params.t_min
    )
    samples = drawn["samples"][list(drawn["seeds"]).index(seed)]
    quality = evaluation.sample_quality(samples, arrays, features, device=device)
    if snakemake.input.fid:
        quality["fid"], n_reference = evaluation.inception_fid_from_files(samples, *snakemake.input.fid, device=device)
        log.info("seed %d: FID (Inception-v3) %.4g against %d training images", seed, quality["fid"], n_reference)
    run_level = {
        "mse": float(per_t["mse_x"].mean()),
        **evaluation.final_losses(train_log[train_log["seed"] == seed]),
        **quality,
        "train_seconds": float(cell["train_seconds"]),  # the job's, shared by the seeds trained together
    }
    log.info(
        "seed %d: mse %.4g, fd %.4g, nonfinite samples %.3f",
        *(seed, run_level["mse"], run_level["fd"], run_level["nonfinite"]),
    )
    frames.append(
        evaluation.metrics_frame(
            per_t,
            run_level,
            dataset=wc.dataset,
            arch=wc.arch,
            bottleneck=bool(params.bottleneck),
            pred=wc.pred,
            loss=wc.loss,
            seed=seed,
        )
    )
frame = pd.concat(frames, ignore_index=True)
write_parquet(frame, snakemake.output[0], job_provenance(snakemake, seeds[0] if len(seeds) == 1 else None))
