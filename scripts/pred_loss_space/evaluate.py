"""Score one trained cell: x-space denoising MSE over the t grid with the measured error amplification,
the final training losses, and sample quality: FD on the pipeline's own features (a proxy, not FID) and,
where configured, true FID on Inception-v3 features."""

import pandas as pd
import torch

from neurips26.common import loop
from neurips26.common.io import load_npz, write_parquet
from neurips26.common.runtime import job_provenance, start_job
from neurips26.pred_loss_space import evaluation, inception, models, sampling

wc, params = snakemake.wildcards, snakemake.params
seed = int(wc.seed)
log = start_job(snakemake, seed=seed)
arrays = load_npz(snakemake.input.data)
saved = torch.load(snakemake.input.model, weights_only=False)
model = models.build_model(wc.arch, params.spec)
model.load_state_dict(saved["state_dict"])
device = loop.job_device()  # paper scale asks for a GPU (profiles/slurm)
model.to(device).eval()

x_test = torch.from_numpy(arrays["x_test"][: params.n_test])
per_t = sampling.denoise_errors(
    model, x_test, wc.pred, params.t_grid, seed=seed + 2000, t_eps=params.t_eps, t_min=params.t_min
)
samples = load_npz(snakemake.input.samples)["samples"]
if snakemake.input.features:
    features = torch.load(snakemake.input.features[0], weights_only=False)
    embed = evaluation.feature_embedder(
        features["state_dict"], features["feature_dim"], features["channels"], features["n_classes"], device=device
    )
    quality = evaluation.sample_quality_images(samples, arrays["x_train"], embed)
else:
    quality = evaluation.sample_quality_toy(samples, arrays["x_train"], arrays["projection"])
if snakemake.input.fid:
    weights, reference = snakemake.input.fid
    net = inception.load_inception(weights, device=device)
    stats = load_npz(reference)
    quality["fid"] = evaluation.inception_fid(
        samples, lambda images: inception.inception_features(net, images, device=device), stats["mu"], stats["sigma"]
    )
    log.info("FID (Inception-v3) %.4g against %d training images", quality["fid"], int(stats["n"]))
train_log = pd.read_parquet(snakemake.input.train_log)
run_level = {
    "mse": float(per_t["mse_x"].mean()),
    **evaluation.final_losses(train_log),
    **quality,
    "train_seconds": float(saved["train_seconds"]),
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
