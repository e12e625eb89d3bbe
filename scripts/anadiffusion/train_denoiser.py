"""One of paper 03's latent denoisers ({denoiser}: a part model, the whole-brain model, or the Seg. cLDM baseline),
every seed of the config as a batch dimension in one job (common.ensemble), in the common loop (checkpoint beside the
model, resumed by a retry). The shared hemisphere model learns the left hemispheres (side 0) and the mirrored right
ones (side 1); the separate hemisphere models of Table 2's ablation (lh, rh) one side each, in half the steps
each (experiment.denoiser_steps: together as many updates as the shared model). The Seg. cLDM
(neurips26.anadiffusion.seg_cldm, where the scale runs it) learns the whole-brain latents, latent i conditioned on
training subject i's part label map (input train: data/train.npz, the encode job's order), at the same size and
budget.

snakemake.input: latents (latents/train.npz), and train (data/train.npz) for seg_cldm. snakemake.params: denoiser,
schedule, seeds. snakemake.output: model (models/{denoiser}.pt), trace (models/{denoiser}_trace.parquet)."""

import numpy as np
import torch

from neurips26.anadiffusion import diffusion, model, seg_cldm, training
from neurips26.anadiffusion.artifacts import load_split, save_network
from neurips26.anadiffusion.experiment import SEG_CLDM, denoiser_steps
from neurips26.common import loop
from neurips26.common.checkpoint import fingerprint
from neurips26.common.io import load_npz, write_parquet
from neurips26.common.runtime import job_provenance, start_job

p = snakemake.params
name, d = snakemake.wildcards.denoiser, p.denoiser
seeds = list(p.seeds)
log = start_job(snakemake, seeds[0])
latents = load_npz(snakemake.input.latents)
config = model.DENOISERS[d["size"]]
device = loop.job_device()
settings = loop.LoopSettings(checkpoint=loop.checkpoint_path(snakemake.output.model),
                             fingerprint=fingerprint(dict(snakemake.params), list(snakemake.input)),
                             name=f"denoiser {name} seeds {seeds}")  # fmt: skip
schedule = diffusion.NoiseSchedule(**p.schedule)
if name == SEG_CLDM:  # the baseline: whole-brain latents, each with its own subject's label map
    z = latents["whole"]
    _, labels = load_split(snakemake.input.train)
    if len(labels) != len(z) or labels.shape[1] % z.shape[2]:
        raise ValueError(f"{len(z)} training latents {z.shape[1:]} for {len(labels)} label maps "
                         f"{labels.shape[1:]}: rerun the encode rule")  # fmt: skip
    factor = labels.shape[1] // z.shape[2]  # the autoencoder's: image voxels per latent voxel along each axis
    nets = training.job_members(lambda: seg_cldm.build_seg_cldm(config, z.shape[1]), seeds, device)
    trace = seg_cldm.train_seg_cldm(nets, torch.from_numpy(z), labels, factor, d["steps"], d["batch"], d["lr"],
                                    seeds, schedule, settings=settings)  # fmt: skip
    stored = {"latent_channels": int(z.shape[1]), "factor": int(factor)}
else:
    if name == "whole":
        z, sides = latents["whole"], None
    else:  # a part model (of any layout: the separate hemisphere models of the ablation too)
        routes = model.denoiser_routes(name)
        z = np.concatenate([latents[part] for part in routes])
        labelled = [r.side for r in routes.values()]
        sides = None if labelled[0] is None else torch.tensor(np.repeat(labelled, [len(latents[q]) for q in routes]))
    n_sides = None if sides is None else len(model.SIDES)
    nets = training.job_members(lambda: model.build_denoiser(config, z.shape[1], n_sides), seeds, device)
    trace = training.train_denoiser(nets, torch.from_numpy(z), denoiser_steps(d, name), d["batch"], d["lr"], seeds,
                                    schedule, sides=sides, settings=settings)  # fmt: skip
    stored = {"latent_channels": int(z.shape[1]), "sides": n_sides}
log.info("%s: %d latents %s, %d parameters per seed", name, len(z), z.shape[1:], model.n_parameters(nets[0]))
save_network(snakemake.output.model, name, d["size"], seeds, [net.state_dict() for net in nets], stored)
write_parquet(trace.assign(model=name), snakemake.output.trace, job_provenance(snakemake, seeds[0]))
loop.finish(settings)
