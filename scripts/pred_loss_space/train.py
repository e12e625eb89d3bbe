"""Train one cell of the 3x3 matrix: a denoiser predicting in `pred` space, with its loss in `loss` space.
The model and its batches sit on the job's device (a GPU where the job has one); a killed job resumes from
its checkpoint."""

import time

import torch

from neurips26.common import loop
from neurips26.common.checkpoint import fingerprint
from neurips26.common.io import atomic_path, load_npz, write_parquet
from neurips26.common.runtime import job_provenance, start_job
from neurips26.pred_loss_space import models, training

wc, params = snakemake.wildcards, snakemake.params
seed = int(wc.seed)
log = start_job(snakemake, seed=seed)
train_cfg, noise = params.train, params.noise
models.check_bottleneck_label(wc.arch, params.spec, params.bottleneck)
x_train = torch.from_numpy(load_npz(snakemake.input.data)["x_train"])
torch.manual_seed(seed)
model = models.build_model(wc.arch, params.spec)
device = loop.job_device()  # paper scale asks for a GPU (profiles/slurm)
model.to(device)
log.info(
    "%s on %s: %d parameters, pred %s, loss %s, %d steps on %s",
    wc.arch,
    wc.dataset,
    sum(p.numel() for p in model.parameters()),
    wc.pred,
    wc.loss,
    train_cfg["steps"],
    device,
)
settings = loop.LoopSettings(
    checkpoint=loop.checkpoint_path(snakemake.output.model),
    fingerprint=fingerprint({**dict(params), **dict(wc)}, list(snakemake.input)),
    every_steps=train_cfg["checkpoint_every"],
    name=f"{wc.arch} {wc.pred}x{wc.loss} s{seed}",
)
start = time.perf_counter()
ema_state, train_log = training.train_denoiser(
    model,
    x_train,
    wc.pred,
    wc.loss,
    train_cfg["steps"],
    train_cfg["batch"],
    train_cfg["lr"],
    noise["p_mean"],
    noise["p_std"],
    seed,
    ema_decay=train_cfg["ema"],
    t_eps=noise["t_eps"],
    t_min=noise["t_min"],
    settings=settings,
    log_every=max(1, train_cfg["steps"] // 50),
)
seconds = time.perf_counter() - start
tail = train_log.tail(max(1, len(train_log) // 10))
log.info(
    "trained in %.1f s; final native loss %.4g, x-space loss %.4g",
    seconds,
    tail["loss_native"].mean(),
    tail["loss_x"].mean(),
)
with atomic_path(snakemake.output.model) as tmp:
    torch.save(
        {
            "state_dict": ema_state,
            "arch": wc.arch,
            "spec": dict(params.spec),
            "pred": wc.pred,
            "loss": wc.loss,
            "train_seconds": seconds,
        },
        tmp,
    )
frame = train_log.copy()
for key in ("seed", "loss", "pred", "arch", "dataset"):
    frame.insert(0, key, int(getattr(wc, key)) if key == "seed" else getattr(wc, key))
write_parquet(frame, snakemake.output.log_table, job_provenance(snakemake, seed))
loop.finish(settings)
