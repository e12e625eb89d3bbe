"""Fit one run ({dataset}/{method}_{setting}_s{seed}) of paper 11 on the normal training images: one model on every
class (unified) or one per class, each in the common loop (checkpoint beside the model, resumed by a retry)."""

import time

import numpy as np
import pandas as pd
import torch

from neurips26.common import loop
from neurips26.common.checkpoint import fingerprint
from neurips26.common.io import write_parquet
from neurips26.common.runtime import job_provenance, start_job
from neurips26.ecfr.experiment import fit_run
from neurips26.ecfr.training import prepare

p = snakemake.params
w = snakemake.wildcards
seed = int(w.seed)
log = start_job(snakemake, seed)
data = np.load(snakemake.input.train)
rgb, depth = prepare(data["rgb"].astype(np.float32) / 255, data["depth"])
teacher = torch.load(snakemake.input.teacher, weights_only=True)
base = loop.checkpoint_path(snakemake.output.model)
stamp = fingerprint(dict(snakemake.params), list(snakemake.input))


def checkpoint(group):
    """One checkpoint per fitted model, every tenth of the *unified* run's steps (a per-class model's own tenth
    would be a checkpoint every step or two)."""
    return loop.LoopSettings(checkpoint=base.with_name(f"{base.name}.{group}"), fingerprint=stamp,
                             every_steps=max(1, p.train["steps"] // 10),
                             name=f"train {w.dataset} {w.method} {w.setting} seed {seed} {group}")  # fmt: skip


cfg = {"teacher": p.teacher, "model": p.model, "cfm": p.cfm, "train": p.train}
start = time.perf_counter()
states, rows = fit_run(w.method, w.setting, seed, rgb, depth, data["cls"], cfg, teacher, checkpoint, log.info)
seconds = time.perf_counter() - start
torch.save({"states": states}, snakemake.output.model)
trace = pd.DataFrame(rows).assign(dataset=w.dataset, method=w.method, setting=w.setting, seed=seed, seconds=seconds)
write_parquet(trace, snakemake.output.trace, job_provenance(snakemake, seed))
for group in states:
    loop.finish(checkpoint(group))
