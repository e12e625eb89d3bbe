"""Train the Meta-OT baseline: an MLP from (a, b) to f, on the entropic semi-dual."""

import time
from pathlib import Path

import torch

from neurips26.amortized_ot.baselines import check_fixed_support, train_metaot
from neurips26.amortized_ot.costs import cost_matrix
from neurips26.amortized_ot.data import TASK_COST
from neurips26.amortized_ot.experiment import unpack
from neurips26.common.checkpoint import fingerprint
from neurips26.common.io import atomic_path, load_npz
from neurips26.common.runtime import start_job

CHECKPOINT_EVERY = 500
params = snakemake.params
log = start_job(snakemake, seed=params.seed)
pairs = unpack(load_npz(snakemake.input[0]), "train")
x, a, y, b = (pairs[k] for k in "xayb")
check_fixed_support(x, y, x, y)
cfg = params.metaot
cost = cost_matrix(x, y, TASK_COST[snakemake.wildcards.task])
start = time.perf_counter()
checkpoint = f"{snakemake.output[0]}.ckpt"  # kept if the job dies, removed once it succeeds
model, losses = train_metaot(
    a, b, cost, params.task["eps"], tuple(cfg["hidden"]), cfg["steps"], cfg["batch_size"], cfg["lr"],
    params.seed, log_every=max(1, cfg["steps"] // 10), log=log.info,
    checkpoint=checkpoint, checkpoint_every=CHECKPOINT_EVERY, fingerprint=fingerprint(dict(params), list(snakemake.input)),
)
seconds = time.perf_counter() - start
log.info("Meta-OT trained in %.1f s, final semi-dual %.6f", seconds, -losses[-1])
with atomic_path(snakemake.output[0]) as tmp:
    torch.save(
        {"state_dict": model.state_dict(), "hidden": cfg["hidden"], "x": x[0], "y": y[0], "fit_seconds": seconds},
        tmp,
    )
Path(checkpoint).unlink(missing_ok=True)
