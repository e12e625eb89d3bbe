"""Train one network (eps-prediction, the authors' schedule) on the first N images of the training subset,
keeping its weights at the checkpoint epochs for the calibration against BIRD. The model and its batches sit
on the job's device (a GPU where the job has one); a killed job resumes from its checkpoint."""

import torch

from neurips26.bird import artifacts, data, networks, training
from neurips26.common import loop
from neurips26.common.checkpoint import fingerprint
from neurips26.common.io import load_npz, write_parquet
from neurips26.common.runtime import job_provenance, start_job

params, wc = snakemake.params, snakemake.wildcards
n, seed = int(wc.n), int(wc.seed)
log = start_job(snakemake, seed=seed)
torch.set_num_threads(snakemake.threads)
cfg = params.train
train, indices = data.subset(load_npz(snakemake.input.data)["train"], n, params.subset_seed)  # BIRD's N images
device = loop.job_device()  # paper scale asks for a GPU (profiles/slurm)
model = networks.build_network(wc.arch, dict(params.spec), train.shape[1], train.shape[-1], seed=seed).to(device)
n_params = networks.count_parameters(model)
log.info(
    "%s: %d parameters, N = %d, %d epochs of batch %d on %s", wc.arch, n_params, n, cfg["epochs"], cfg["batch"], device
)
settings = loop.LoopSettings(
    checkpoint=loop.checkpoint_path(snakemake.output.checkpoints),
    fingerprint=fingerprint(dict(params), list(snakemake.input)),
    name=f"{wc.arch} N={n}",
)
train_log, kept = training.train_epsilon(
    model,
    torch.from_numpy(train),
    cfg["epochs"],
    cfg["batch"],
    cfg["lr"],
    seed,
    checkpoint_epochs=cfg["checkpoint_epochs"],
    settings=settings,
)
log.info("final loss %.4f (mean of the last epoch)", train_log[train_log["epoch"] == cfg["epochs"]]["loss"].mean())
run = {"arch": wc.arch, "spec": dict(params.spec), "n_train": n, "subset_indices": indices.tolist(), "seed": seed}
artifacts.save_checkpoints(snakemake.output.checkpoints, kept, run)
frame = train_log.assign(dataset=wc.dataset, arch=wc.arch, n_train=n, seed=seed)
write_parquet(frame, snakemake.output.log_table, job_provenance(snakemake, seed))
loop.finish(settings)
