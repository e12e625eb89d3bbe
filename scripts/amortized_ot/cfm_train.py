"""Train a 2-D flow by minibatch conditional flow matching with one coupling plan (the flow on the job's device)."""

import time

import numpy as np
import torch

from neurips26.amortized_ot import cfm
from neurips26.amortized_ot.artifacts import flow_state
from neurips26.amortized_ot.data import TOY_SAMPLERS, pair_seed
from neurips26.amortized_ot.method import FittedModel
from neurips26.common import loop
from neurips26.common.checkpoint import fingerprint
from neurips26.common.io import atomic_path, load_npz
from neurips26.common.runtime import start_job

params, plan_name = snakemake.params, snakemake.wildcards.plan
log = start_job(snakemake, seed=params.seed)
cfg = params.cfm

model = FittedModel.from_dict(load_npz(snakemake.input.model)) if plan_name in cfm.FITTED_PLANS else None
plan_fn = cfm.coupling_plan(plan_name, model, cfg.get("eps"))  # eps: the RA/OA plans only
settings = loop.LoopSettings(
    checkpoint=loop.checkpoint_path(snakemake.output[0]),  # kept if the job dies, removed once it succeeds
    fingerprint=fingerprint(dict(params), list(snakemake.input)),
    name=f"cfm {plan_name}",
)
start = time.perf_counter()
flow, losses = cfm.train_flow(
    TOY_SAMPLERS["8gaussians"],
    TOY_SAMPLERS["moons"],
    plan_fn,
    cfg["steps"],
    cfg["batch_size"],
    cfg["lr"],
    cfg["width"],
    pair_seed(params.seed, "cfm", "train") + 7,
    settings,
)
seconds = time.perf_counter() - start
log.info(
    "%s plan: %d steps on %s in %.1f s, final loss %.4f",
    plan_name,
    cfg["steps"],
    loop.job_device(),
    seconds,
    np.mean(losses[-50:]),
)
with atomic_path(snakemake.output[0]) as tmp:
    torch.save(flow_state(flow, cfg["width"], losses, seconds), tmp)
loop.finish(settings)
