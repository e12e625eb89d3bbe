"""Paper 03's samples, per training seed of the denoisers: the part assets (shared hemisphere and CB models, DDIM),
their naive paste at the template supports (seam band and CSF left open: assembly.pipeline_layout), its autoencoder
round trip without diffusion (ae_roundtrip, the refinement's null), the monolithic LDM (alpha 0) and every named
injection (one that names another part layout, e.g. ana_separate, takes its assets from that layout's part models,
drawn from the same part noise), all from one noise draw per seed. The inputs are the template (population-level
masks only) and the networks: no subject's segmentation; the job records every input file and path-like param
(artifacts.job_inputs, samples/inputs.parquet) for the claims' DAG check."""

import numpy as np
import torch

from neurips26.anadiffusion import assembly, diffusion
from neurips26.anadiffusion.artifacts import input_record, job_inputs, load_autoencoder, load_denoisers
from neurips26.anadiffusion.experiment import noise_seed
from neurips26.anadiffusion.template import template_from_arrays
from neurips26.common import loop
from neurips26.common.io import load_npz, save_npz, write_parquet
from neurips26.common.runtime import job_provenance, start_job

p = snakemake.params
seeds, sampling = list(p.seeds), p.sampling
log = start_job(snakemake, sampling["seed"])
template = template_from_arrays(load_npz(snakemake.input.template))
layout = assembly.pipeline_layout(template)
device = loop.job_device()
autoencoder = load_autoencoder(snakemake.input.autoencoder).to(device)
files = dict(zip(p.denoisers, snakemake.input.denoisers, strict=True))
denoisers = {name: [net.to(device) for net in load_denoisers(path, name, seeds)] for name, path in files.items()}
schedule = diffusion.NoiseSchedule(**p.schedule)
injections = {name: (spec["r_inj"], spec["alpha"]) for name, spec in p.injections.items()}
# injections whose assets another part layout makes (the separate hemisphere models of Table 2's ablation)
layouts = {name: spec["part_model"] for name, spec in p.injections.items() if spec.get("part_model", p.part_model)
           != p.part_model}  # fmt: skip
channels = autoencoder.config.latent_channels
factor = autoencoder.config.factor
n, steps = sampling["samples"], sampling["ddim_steps"]


def on_device(noise: diffusion.SamplingNoise) -> diffusion.SamplingNoise:
    return diffusion.SamplingNoise(noise.start.to(device), noise.injection.to(device))


out = {name: [] for name in p.methods}
assets_by_part, starts, injected = {part: [] for part in template.supports}, [], []
for i, seed in enumerate(seeds):
    generator = torch.Generator().manual_seed(noise_seed(sampling["seed"], seed))
    whole_noise = diffusion.draw_sampling_noise((n, channels, *(s // factor for s in template.shape)), generator)
    part_noise = {part: diffusion.draw_sampling_noise((n, channels, *(s // factor for s in support.shape)), generator)
                  for part, support in template.supports.items()}  # fmt: skip
    nets = {name: models[i] for name, models in denoisers.items()}
    assets, volumes = assembly.sample_methods(nets, autoencoder, layout, p.part_model,
                                              {part: on_device(z) for part, z in part_noise.items()},
                                              on_device(whole_noise), schedule, steps, injections,
                                              layouts)  # fmt: skip
    for name in p.methods:
        out[name].append(volumes[name][:, 0].cpu().numpy())
    for part, image in assets.images.items():
        assets_by_part[part].append(image[:, 0].cpu().numpy())
    starts.append(whole_noise.start.numpy())
    injected.append(whole_noise.injection.numpy())
    log.info("seed %d: %s", seed, {name: f"{float(v.mean()):+.3f}" for name, v in volumes.items()})
save_npz(snakemake.output.samples, seeds=np.array(seeds), noise_start=np.stack(starts),
         noise_injection=np.stack(injected), **{f"volumes_{m}": np.stack(v).astype(np.float32) for m, v in out.items()},
         **{f"asset_{part}": np.stack(v).astype(np.float32) for part, v in assets_by_part.items()})  # fmt: skip
write_parquet(
    input_record("sample", job_inputs(snakemake.input, snakemake.params), population_files=[p.population]),
    snakemake.output.inputs,
    job_provenance(snakemake, sampling["seed"]),
)
