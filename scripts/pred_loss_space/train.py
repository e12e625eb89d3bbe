"""Train one cell of the 3x3 matrix: a denoiser predicting in `pred` space, with its loss in `loss` space.
The model and its batches sit on the job's device (a GPU where the job has one); a killed job resumes from
its checkpoint."""

import torch

from neurips26.common import loop
from neurips26.common.checkpoint import fingerprint
from neurips26.common.io import load_npz, write_parquet
from neurips26.common.runtime import job_provenance, start_job
from neurips26.pred_loss_space import artifacts, models, training

wc, params = snakemake.wildcards, snakemake.params
seed = int(wc.seed)
log = start_job(snakemake, seed=seed)
models.check_bottleneck_label(wc.arch, params.spec, params.bottleneck)
x_train = torch.from_numpy(load_npz(snakemake.input.data)["x_train"])
torch.manual_seed(seed)
model = models.build_model(wc.arch, params.spec)
device = loop.job_device()  # paper scale asks for a GPU (profiles/slurm)
model.to(device)
n_params = sum(p.numel() for p in model.parameters())
log.info("%s on %s: %d parameters, pred %s, loss %s, on %s", wc.arch, wc.dataset, n_params, wc.pred, wc.loss, device)
settings = loop.LoopSettings(
    checkpoint=loop.checkpoint_path(snakemake.output.model),
    fingerprint=fingerprint({**dict(params), **dict(wc)}, list(snakemake.input)),
    every_steps=params.train["checkpoint_every"],
    name=f"{wc.arch} {wc.pred}x{wc.loss} s{seed}",
)
ema_state, train_log, seconds = training.train_cell(
    model, x_train, wc.pred, wc.loss, params.train, params.noise, seed, settings
)
tail = train_log.tail(max(1, len(train_log) // 10))
log.info("trained in %.1f s; final loss %.4g, x-space %.4g", seconds, tail["loss_native"].mean(), tail["loss_x"].mean())
cell = {"arch": wc.arch, "spec": dict(params.spec), "pred": wc.pred, "loss": wc.loss, "train_seconds": seconds}
artifacts.save_model(snakemake.output.model, ema_state, cell)
frame = training.log_frame(train_log, dataset=wc.dataset, arch=wc.arch, pred=wc.pred, loss=wc.loss, seed=seed)
write_parquet(frame, snakemake.output.log_table, job_provenance(snakemake, seed))
loop.finish(settings)
