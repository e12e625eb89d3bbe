"""One of paper 03's latent denoisers ({denoiser}: a part model or the whole-brain model), every seed of the config
as a batch dimension in one job (common.ensemble), in the common loop (checkpoint beside the model, resumed by a
retry). The shared hemisphere model learns the left hemispheres (side 0) and the mirrored right ones (side 1)."""

import numpy as np
import torch

from neurips26.anadiffusion import diffusion, model, training
from neurips26.anadiffusion.artifacts import save_network
from neurips26.common import ensemble, loop
from neurips26.common.checkpoint import fingerprint
from neurips26.common.io import load_npz, write_parquet
from neurips26.common.runtime import job_provenance, start_job

p = snakemake.params
name = snakemake.wildcards.denoiser
seeds = list(p.seeds)
log = start_job(snakemake, seeds[0])
latents = load_npz(snakemake.input.latents)
routes = {part: r for part, r in model.PART_MODELS[p.denoiser["part_model"]].items() if r.denoiser == name}
if name == "whole":
    z, sides = latents["whole"], None
else:
    z = np.concatenate([latents[part] for part in routes])
    labelled = [r.side for r in routes.values()]
    sides = None if labelled[0] is None else torch.tensor(np.repeat(labelled, [len(latents[q]) for q in routes]))
config = model.DENOISERS[p.denoiser["size"]]
device = loop.job_device()
n_sides = None if sides is None else len(model.SIDES)
nets = ensemble.build(lambda: model.build_denoiser(config, z.shape[1], n_sides), seeds)
for net in nets:
    net.to(device)
settings = loop.LoopSettings(checkpoint=loop.checkpoint_path(snakemake.output.model),
                             fingerprint=fingerprint(dict(snakemake.params), list(snakemake.input)),
                             name=f"denoiser {name} seeds {seeds}")  # fmt: skip
schedule = diffusion.NoiseSchedule(**p.schedule)
d = p.denoiser
trace = training.train_denoiser(nets, torch.from_numpy(z), d["steps"], d["batch"], d["lr"], seeds, schedule,
                                sides=sides, settings=settings)  # fmt: skip
log.info("%s: %d latents %s, %d parameters per seed", name, len(z), z.shape[1:], model.n_parameters(nets[0]))
save_network(snakemake.output.model, name, d["size"], seeds, [net.state_dict() for net in nets],
             {"latent_channels": int(z.shape[1]), "sides": n_sides})  # fmt: skip
write_parquet(trace.assign(model=name), snakemake.output.trace, job_provenance(snakemake, seeds[0]))
loop.finish(settings)
