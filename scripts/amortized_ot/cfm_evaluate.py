"""Sample a trained flow (Euler ODE) and measure W2 to the target and path straightness."""

import numpy as np
import torch

from neurips26.amortized_ot import cfm
from neurips26.amortized_ot.data import TOY_SAMPLERS, pair_seed
from neurips26.common.io import load_npz, save_npz, write_parquet
from neurips26.common.runtime import job_provenance, start_job
from neurips26.common.tables import long_form

params, plan_name = snakemake.params, snakemake.wildcards.plan
log = start_job(snakemake, seed=params.seed)
cfg = params.cfm
saved = torch.load(snakemake.input[0], weights_only=False)
flow = cfm.VectorField(width=saved["width"])
flow.load_state_dict(saved["state_dict"])
flow.eval()
# the same evaluation samples for every plan
rng = np.random.default_rng(pair_seed(params.seed, "cfm", "test"))
source = TOY_SAMPLERS["8gaussians"](cfg["eval_samples"], rng)
target = TOY_SAMPLERS["moons"](cfg["eval_samples"], rng)
generated, path_ratio = cfm.integrate(flow, source, cfg["ode_steps"])
w2 = cfm.wasserstein2(generated, target)
log.info("%s plan: W2 %.4f, path length / chord %.4f", plan_name, w2, path_ratio)
save_npz(snakemake.output.samples, source=source, generated=generated, target=target)
frame = long_form(
    {}, {"w2": w2, "path_ratio": path_ratio, "train_seconds": saved["train_seconds"]},
    task="cfm", method=plan_name, projections=0, res=cfg["batch_size"], n_atoms=cfg["batch_size"], seed=params.seed,
)
write_parquet(frame, snakemake.output.metrics, job_provenance(snakemake, params.seed))
