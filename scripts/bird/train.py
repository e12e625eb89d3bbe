"""Train one network (eps-prediction, the authors' schedule) on the first N images of the training subset,
keeping its weights at the checkpoint epochs for the calibration against BIRD."""

from pathlib import Path

import numpy as np
import torch

from neurips26.bird import data, networks, training
from neurips26.common.checkpoint import fingerprint
from neurips26.common.io import atomic_path, load_npz, write_parquet
from neurips26.common.runtime import job_provenance, start_job

params, wc = snakemake.params, snakemake.wildcards
n, seed = int(wc.n), int(wc.seed)
log = start_job(snakemake, seed=seed)
torch.set_num_threads(snakemake.threads)
cfg = params.train
pool = load_npz(snakemake.input[0])["train"]
train, indices = data.subset(pool, n, params.subset_seed)  # the same N images as BIRD's runs of this N
channels, size = train.shape[1], train.shape[-1]
device = "cuda" if torch.cuda.is_available() else "cpu"  # paper scale asks for a GPU (profiles/slurm)
model = networks.build_network(wc.arch, dict(params.spec), channels, size, seed=seed).to(device)
log.info("%s: %d parameters, N = %d, %d epochs of batch %d on %s", wc.arch, networks.count_parameters(model), n,
         cfg["epochs"], cfg["batch"], device)
out = Path(snakemake.output.checkpoints)
partial = Path(f"{out}.partial")  # weights kept so far, if an earlier attempt of this job died
kept = torch.load(partial, weights_only=False) if partial.exists() else {}


def keep(epoch: int, state: dict) -> None:
    kept[epoch] = state
    with atomic_path(partial) as tmp:
        torch.save(kept, tmp)


train_log = training.train_epsilon(
    model, torch.from_numpy(train), cfg["epochs"], cfg["batch"], cfg["lr"], seed,
    checkpoint_epochs=cfg["checkpoint_epochs"], on_checkpoint=keep, checkpoint=f"{out}.ckpt",
    fingerprint=fingerprint(dict(params), list(snakemake.input)))
log.info("final loss %.4f (mean of the last epoch)", train_log[train_log["epoch"] == cfg["epochs"]]["loss"].mean())
missing = sorted(set(cfg["checkpoint_epochs"]) - set(kept))
if missing:
    raise RuntimeError(f"checkpoints of epochs {missing} were not kept; delete {partial} and rerun")
with atomic_path(out) as tmp:
    torch.save({"arch": wc.arch, "spec": dict(params.spec), "n_train": n, "subset_indices": np.asarray(indices),
                "seed": seed, "checkpoints": {e: kept[e] for e in sorted(cfg["checkpoint_epochs"])}}, tmp)
frame = train_log.assign(dataset=wc.dataset, arch=wc.arch, n_train=n, seed=seed)
write_parquet(frame, snakemake.output.log_table, job_provenance(snakemake, seed))
partial.unlink(missing_ok=True)
Path(f"{out}.ckpt").unlink(missing_ok=True)
