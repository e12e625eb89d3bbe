"""Train a 2-D flow by minibatch conditional flow matching with one coupling plan."""

import time
from pathlib import Path

import numpy as np
import torch

from neurips26.amortized_ot import cfm
from neurips26.amortized_ot.costs import cost_matrix
from neurips26.amortized_ot.data import TOY_SAMPLERS, pair_seed
from neurips26.amortized_ot.method import FittedModel, predict_plan
from neurips26.common.checkpoint import fingerprint
from neurips26.common.io import atomic_path, load_npz
from neurips26.common.runtime import start_job

CHECKPOINT_EVERY = 500
params, plan_name = snakemake.params, snakemake.wildcards.plan
log = start_job(snakemake, seed=params.seed)
cfg = params.cfm
checkpoint = f"{snakemake.output[0]}.ckpt"  # kept if the job dies, removed once it succeeds

if plan_name in ("ra", "oa"):
    model = FittedModel.from_dict(load_npz(snakemake.input.model))

    def plan_fn(x0, x1):
        w = np.full((1, len(x0)), 1.0 / len(x0))
        return predict_plan(model, x0[None], w, x1[None], w, cost_matrix(x0[None], x1[None], "sqeuclidean"), cfg["eps"])[0]
else:
    plan_fn = {"exact": cfm.exact_plan, "indep": cfm.independent_plan}[plan_name]

start = time.perf_counter()
flow, losses = cfm.train_flow(
    TOY_SAMPLERS["8gaussians"], TOY_SAMPLERS["moons"], plan_fn,
    cfg["steps"], cfg["batch_size"], cfg["lr"], cfg["width"], pair_seed(params.seed, "cfm", "train") + 7,
    log_every=max(1, cfg["steps"] // 10), log=log.info,
    checkpoint=checkpoint, checkpoint_every=CHECKPOINT_EVERY,
    fingerprint=fingerprint(dict(params), list(snakemake.input)),
)
seconds = time.perf_counter() - start
log.info("%s plan: %d steps in %.1f s, final loss %.4f", plan_name, cfg["steps"], seconds, np.mean(losses[-50:]))
with atomic_path(snakemake.output[0]) as tmp:
    torch.save({"state_dict": flow.state_dict(), "width": cfg["width"], "losses": losses, "train_seconds": seconds}, tmp)
Path(checkpoint).unlink(missing_ok=True)
