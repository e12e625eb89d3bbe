"""Sample every trained flow (Euler ODE) on the same source points; W2 to the target, straightness."""

from pathlib import Path

import numpy as np
import pandas as pd
import torch

from neurips26.amortized_ot import cfm
from neurips26.amortized_ot.data import TOY_SAMPLERS, pair_seed
from neurips26.amortized_ot.experiment import pack
from neurips26.common.io import save_npz, write_parquet
from neurips26.common.runtime import job_provenance, start_job
from neurips26.common.tables import long_form

params = snakemake.params
log = start_job(snakemake, seed=params.seed)
cfg = params.cfm
rng = np.random.default_rng(pair_seed(params.seed, "cfm", "test"))
source = TOY_SAMPLERS["8gaussians"](cfg["eval_samples"], rng)
target = TOY_SAMPLERS["moons"](cfg["eval_samples"], rng)
samples, frames = {}, []
for path in snakemake.input.flows:
    plan = Path(path).parent.name
    # flow.pt: the base seed; flow_s{seed}.pt: another training seed
    stem = Path(path).stem
    seed = int(stem.split("_s")[1]) if "_s" in stem else params.seed
    saved = torch.load(path, weights_only=False)
    flow = cfm.VectorField(width=saved["width"])
    flow.load_state_dict(saved["state_dict"])
    generated, path_ratio = cfm.integrate(flow.eval(), source, cfg["ode_steps"])
    w2 = cfm.wasserstein2(generated, target)
    log.info("%s plan, seed %d: W2 %.4f, path length / chord %.4f", plan, seed, w2, path_ratio)
    if seed == params.seed:
        samples[plan] = {"source": source, "generated": generated, "target": target}
    frames.append(
        long_form(
            {},
            {"w2": w2, "path_ratio": path_ratio, "train_seconds": saved["train_seconds"]},
            task="cfm",
            method=plan,
            projections=0,
            res=cfg["batch_size"],
            n_atoms=cfg["batch_size"],
            seed=seed,
        )
    )
save_npz(snakemake.output.samples, **pack(samples))
write_parquet(pd.concat(frames, ignore_index=True), snakemake.output.metrics, job_provenance(snakemake, params.seed))
