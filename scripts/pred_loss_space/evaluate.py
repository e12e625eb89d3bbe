"""Score one trained cell: x-space denoising MSE over the t grid with the measured error amplification,
the final training losses, and sample quality: FD on the pipeline's own features (a proxy, not FID) and,
where configured, true FID on Inception-v3 features."""

import pandas as pd
import torch

from neurips26.common import loop
from neurips26.common.io import load_npz, write_parquet
from neurips26.common.runtime import job_provenance, start_job
from neurips26.pred_loss_space import artifacts, evaluation, models, sampling

wc, params = snakemake.wildcards, snakemake.params
seed = int(wc.seed)
log = start_job(snakemake, seed=seed)
arrays = load_npz(snakemake.input.data)
state_dict, cell = artifacts.load_model(snakemake.input.model)
model = models.build_model(wc.arch, params.spec)
model.load_state_dict(state_dict)
device = loop.job_device()  # paper scale asks for a GPU (profiles/slurm)
model.to(device).eval()

x_test = torch.from_numpy(arrays["x_test"][: params.n_test])
per_t = sampling.denoise_errors(
    model, x_test, wc.pred, params.t_grid, seed=seed + 2000, t_eps=params.t_eps, t_min=params.t_min
)
samples = load_npz(snakemake.input.samples)["samples"]
features = artifacts.load_model(snakemake.input.features[0]) if snakemake.input.features else None
quality = evaluation.sample_quality(samples, arrays, features, device=device)
if snakemake.input.fid:
    quality["fid"], n_reference = evaluation.inception_fid_from_files(samples, *snakemake.input.fid, device=device)
    log.info("FID (Inception-v3) %.4g against %d training images", quality["fid"], n_reference)
run_level = {
    "mse": float(per_t["mse_x"].mean()),
    **evaluation.final_losses(pd.read_parquet(snakemake.input.train_log)),
    **quality,
    "train_seconds": float(cell["train_seconds"]),
}
log.info("mse %.4g, fd %.4g, nonfinite samples %.3f", run_level["mse"], run_level["fd"], run_level["nonfinite"])
frame = evaluation.metrics_frame(
    per_t,
    run_level,
    dataset=wc.dataset,
    arch=wc.arch,
    bottleneck=bool(params.bottleneck),
    pred=wc.pred,
    loss=wc.loss,
    seed=seed,
)
write_parquet(frame, snakemake.output[0], job_provenance(snakemake, seed))
