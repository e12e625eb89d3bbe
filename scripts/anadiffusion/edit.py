"""Paper 03's localized edits, per seed and part: the same (recipient, donor) pairs of generated samples, the
recipient's part assets with that part taken from the donor, reassembled at the template supports (seam band and
CSF left open: assembly.pipeline_layout); `paste` keeps the swapped composite, `ae_roundtrip` encodes and decodes it
(no diffusion), an injection re-encodes it, injects it and refines it with the recipient's own noise (paired with its
original sample). Inputs: the template, the networks and the samples; no subject's segmentation (every input file
and path-like param recorded in edit_inputs.parquet by artifacts.job_inputs)."""

import numpy as np
import torch

from neurips26.anadiffusion import assembly, diffusion
from neurips26.anadiffusion.artifacts import input_record, job_inputs, load_autoencoder, load_denoisers, load_samples
from neurips26.anadiffusion.template import template_from_arrays
from neurips26.common import loop
from neurips26.common.io import load_npz, save_npz, write_parquet
from neurips26.common.runtime import job_provenance, start_job

p = snakemake.params
seeds = list(p.seeds)
log = start_job(snakemake)
template = template_from_arrays(load_npz(snakemake.input.template))
layout = assembly.pipeline_layout(template)
device = loop.job_device()
autoencoder = load_autoencoder(snakemake.input.autoencoder).to(device)
wholes = [net.to(device) for net in load_denoisers(snakemake.input.whole, "whole", seeds)]
samples = load_samples(snakemake.input.samples)
if samples["seeds"].tolist() != seeds:
    raise ValueError(f"{snakemake.input.samples} holds seeds {samples['seeds'].tolist()}, not {seeds}")
schedule = diffusion.NoiseSchedule(**p.schedule)
recipients, donors = (torch.tensor(column, device=device) for column in zip(*p.pairs))
parts = list(template.supports)
edited = {method: np.empty((len(seeds), len(parts), len(recipients), *template.shape), np.float32)
          for method in p.methods}  # fmt: skip
for i, _seed in enumerate(seeds):
    images = {part: torch.from_numpy(samples[f"asset_{part}"][i])[:, None].to(device) for part in parts}
    assets = assembly.PartAssets(latents={}, images=images)
    noise = diffusion.SamplingNoise(torch.from_numpy(samples["noise_start"][i]).to(device),
                                    torch.from_numpy(samples["noise_injection"][i]).to(device))  # fmt: skip
    for j, part in enumerate(parts):
        for method in p.methods:
            if method == "paste":  # the swapped composite, not refined
                volumes = assembly.assemble_scaffold(assembly.swap_part(images, part, recipients, donors), layout)
            elif method == "ae_roundtrip":  # the swapped composite encoded and decoded, no diffusion
                scaffold = assembly.assemble_scaffold(assembly.swap_part(images, part, recipients, donors), layout)
                volumes = assembly.roundtrip(autoencoder, scaffold)
            else:
                r_inj, alpha = p.injections[method]["r_inj"], p.injections[method]["alpha"]
                volumes = assembly.edit(assets, part, recipients, donors, layout, wholes[i], autoencoder, noise,
                                        schedule, p.ddim_steps, r_inj, alpha).volumes  # fmt: skip
            edited[method][i, j] = volumes[:, 0].clamp(-1.0, 1.0).cpu().numpy()
    log.info("seed %d: %d edits per part and method", seeds[i], len(recipients))
save_npz(snakemake.output.edits, seeds=np.array(seeds), parts=np.array(parts), recipients=recipients.cpu().numpy(),
         donors=donors.cpu().numpy(), **{f"edited_{m}": v for m, v in edited.items()})  # fmt: skip
write_parquet(
    input_record("edit", job_inputs(snakemake.input, snakemake.params), population_files=[p.population]),
    snakemake.output.inputs,
    job_provenance(snakemake),
)
