"""Fit one run ({dataset}/{method}_s{seed}) of paper 17's GPLVMs in the common loop (checkpoint beside the model,
resumed by a retry): the model's state and the bound after every step."""

import time

import numpy as np
import pandas as pd
import torch

from neurips26.common import loop
from neurips26.common.checkpoint import fingerprint
from neurips26.common.io import write_parquet
from neurips26.common.runtime import job_provenance, start_job
from neurips26.gplvm_assvi.experiment import build_model
from neurips26.gplvm_assvi.models import fit

p = snakemake.params
method, seed = snakemake.wildcards.method, int(snakemake.wildcards.seed)
log = start_job(snakemake, seed)
data = np.load(snakemake.input.data)
y, mask = torch.as_tensor(data["y"]), torch.as_tensor(data["mask"])
model = build_model(method, y, mask, p.dataset, p.model, seed)
device = loop.job_device()
model, y, mask = model.to(device), y.to(device), mask.to(device)
loop_settings = loop.LoopSettings(
    checkpoint=loop.checkpoint_path(snakemake.output.model),
    fingerprint=fingerprint(dict(snakemake.params), list(snakemake.input)),
    name=f"train {snakemake.wildcards.dataset} {method} seed {seed}",
)
log.info("%s seed %d on %s: %d points, %d parameters", method, seed, snakemake.wildcards.dataset, len(y),
         sum(t.numel() for t in model.parameters()))  # fmt: skip
start = time.perf_counter()
trace = fit(model, y, mask, p.train["steps"], p.train["lr"], loop_settings, log.info, p.train["batch"], seed)
seconds = time.perf_counter() - start
torch.save({"state": {k: v.cpu() for k, v in model.state_dict().items()}}, snakemake.output.model)
curve = pd.DataFrame({"step": np.arange(1, len(trace) + 1), "elbo": trace}).assign(
    dataset=snakemake.wildcards.dataset, method=method, seed=seed, seconds=seconds, points=len(y)
)
write_parquet(curve, snakemake.output.trace, job_provenance(snakemake, seed))
loop.finish(loop_settings)
