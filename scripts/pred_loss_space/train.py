"""Train one cell of the 3x3 matrix for every seed of the job's seed group: denoisers predicting in `pred` space,
with their loss in `loss` space, trained together as one batch of models with a leading seed dimension (each
seed's initialisation, batches and noise its own: the result of each seed alone, to float rounding). The models
and their batches sit on the job's device (a GPU where the job has one); a killed job resumes from its
checkpoint."""

import torch

from neurips26.common import ensemble, loop
from neurips26.common.checkpoint import fingerprint
from neurips26.common.io import load_npz, write_parquet
from neurips26.common.runtime import job_provenance, start_job
from neurips26.pred_loss_space import artifacts, experiment, models, training

wc, params = snakemake.wildcards, snakemake.params
seeds = experiment.parse_group(wc.seeds)
log = start_job(snakemake, seed=seeds[0])
models.check_bottleneck_label(wc.arch, params.spec, params.bottleneck)
x_train = torch.from_numpy(load_npz(snakemake.input.data)["x_train"])
members = ensemble.build(lambda: models.build_model(wc.arch, params.spec), seeds)  # each after manual_seed(seed)
device = loop.job_device()  # paper scale asks for a GPU (profiles/slurm)
for member in members:
    member.to(device)
n_params = sum(p.numel() for p in members[0].parameters())
log.info(
    "%s on %s: %d parameters, pred %s, loss %s, seeds %s, on %s",
    *(wc.arch, wc.dataset, n_params, wc.pred, wc.loss, seeds, device),
)
settings = loop.LoopSettings(
    checkpoint=loop.checkpoint_path(snakemake.output.model),
    fingerprint=fingerprint({**dict(params), **dict(wc)}, list(snakemake.input)),
    every_steps=params.train["checkpoint_every"],
    name=f"{wc.arch} {wc.pred}x{wc.loss} s{wc.seeds}",
)
emas, train_log, seconds = training.train_cell(
    members, x_train, wc.pred, wc.loss, params.train, params.noise, seeds, settings
)
for seed, part in train_log.groupby("seed"):
    tail = part.tail(max(1, len(part) // 10))
    log.info("seed %d: final loss %.4g, x-space %.4g", seed, tail["loss_native"].mean(), tail["loss_x"].mean())
log.info("trained %d seeds together in %.1f s", len(seeds), seconds)
cell = {"arch": wc.arch, "spec": dict(params.spec), "pred": wc.pred, "loss": wc.loss, "seeds": seeds}
artifacts.save_seed_models(snakemake.output.model, dict(zip(seeds, emas)), {**cell, "train_seconds": seconds})
frame = training.log_frame(train_log, dataset=wc.dataset, arch=wc.arch, pred=wc.pred, loss=wc.loss)
write_parquet(frame, snakemake.output.log_table, job_provenance(snakemake, seeds[0] if len(seeds) == 1 else None))
loop.finish(settings)
