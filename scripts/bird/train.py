"""Train the networks of one seed group (one architecture, eps-prediction, the authors' schedule) as one batched
ensemble on the first N images of the training subset, keeping each seed's weights at the checkpoint epochs for
the calibration against BIRD. The weights and batches sit on the job's device (a GPU where the job has one); a
killed job resumes from its checkpoint."""

import torch

from neurips26.bird import artifacts, data, experiment, networks, training
from neurips26.common import loop
from neurips26.common.checkpoint import fingerprint
from neurips26.common.io import load_npz, write_parquet
from neurips26.common.runtime import job_provenance, start_job

params, wc = snakemake.params, snakemake.wildcards
n, seeds = int(wc.n), experiment.parse_seeds(wc.seeds)
log = start_job(snakemake, seed=seeds[0])
torch.set_num_threads(snakemake.threads)
cfg = params.train
train, indices = data.subset(load_npz(snakemake.input.data)["train"], n, params.subset_seed)  # BIRD's N images
device = loop.job_device()  # paper scale asks for a GPU (profiles/slurm)
models = [
    networks.build_network(wc.arch, dict(params.spec), train.shape[1], train.shape[-1], seed=seed).to(device)
    for seed in seeds
]
log.info(
    "%s: %d parameters, seeds %s, N = %d, %d epochs of batch %d on %s",
    wc.arch,
    networks.count_parameters(models[0]),
    seeds,
    n,
    cfg["epochs"],
    cfg["batch"],
    device,
)
settings = loop.LoopSettings(
    checkpoint=loop.checkpoint_path(snakemake.output.checkpoints),
    fingerprint=fingerprint(dict(params), list(snakemake.input)),
    name=f"{wc.arch} N={n} s{wc.seeds}",
)
train_log, kept = training.train_epsilon(
    models,
    torch.from_numpy(train),
    cfg["epochs"],
    cfg["batch"],
    cfg["lr"],
    seeds,
    checkpoint_epochs=cfg["checkpoint_epochs"],
    settings=settings,
)
last = train_log[train_log["epoch"] == cfg["epochs"]].groupby("seed")["loss"].mean()
log.info("final loss per seed (mean of the last epoch): %s", ", ".join(f"s{s} {v:.4f}" for s, v in last.items()))
run = {"arch": wc.arch, "spec": dict(params.spec), "n_train": n, "subset_indices": indices.tolist(), "seeds": seeds}
artifacts.save_checkpoints(snakemake.output.checkpoints, kept, run)
frame = train_log.assign(dataset=wc.dataset, arch=wc.arch, n_train=n)
frame = frame[["epoch", "step", "loss", "dataset", "arch", "n_train", "seed"]]  # the columns of one seed's table
prov_seed = seeds[0] if len(seeds) == 1 else seeds  # the table's seed column names each row's
write_parquet(frame, snakemake.output.log_table, job_provenance(snakemake, prov_seed))
loop.finish(settings)
