"""Train the Meta-OT baseline: an MLP from (a, b) to f, on the entropic semi-dual (on the job's device)."""

import time

import torch

from neurips26.amortized_ot.artifacts import metaot_state
from neurips26.amortized_ot.baselines import check_fixed_support, train_metaot
from neurips26.amortized_ot.costs import cost_matrix
from neurips26.amortized_ot.data import TASK_COST
from neurips26.amortized_ot.experiment import unpack
from neurips26.common import loop
from neurips26.common.checkpoint import fingerprint
from neurips26.common.io import atomic_path, load_npz
from neurips26.common.runtime import start_job

params = snakemake.params
log = start_job(snakemake, seed=params.seed)
pairs = unpack(load_npz(snakemake.input.pairs), "train")
x, a, y, b = (pairs[k] for k in "xayb")
check_fixed_support(x, y, x, y)
cfg = params.metaot
cost = cost_matrix(x[:1], y[:1], TASK_COST[snakemake.wildcards.task])  # the support every pair shares
settings = loop.LoopSettings(
    checkpoint=loop.checkpoint_path(snakemake.output[0]),  # kept if the job dies, removed once it succeeds
    fingerprint=fingerprint(dict(params), list(snakemake.input)),
    name="metaot",
)
start = time.perf_counter()
model, losses = train_metaot(
    a,
    b,
    cost,
    params.eps,
    tuple(cfg["hidden"]),
    cfg["steps"],
    cfg["batch_size"],
    cfg["lr"],
    params.seed,
    settings,
)
seconds = time.perf_counter() - start
log.info("Meta-OT trained on %s in %.1f s, final semi-dual %.6f", loop.job_device(), seconds, -losses[-1])
with atomic_path(snakemake.output[0]) as tmp:
    torch.save(metaot_state(model, cfg["hidden"], x[0], y[0], seconds), tmp)
loop.finish(settings)
