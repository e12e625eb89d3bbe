"""The training latents of paper 03's denoisers, by the one autoencoder: whole-brain latents of the training volumes,
and for each part the latents of its training crops (each subject's volume outside its own part mask set to
background, cropped to the part's template support in its frame). Training split only."""

import numpy as np
import torch

from neurips26.anadiffusion import assembly
from neurips26.anadiffusion.artifacts import load_autoencoder, load_split
from neurips26.anadiffusion.template import template_from_arrays
from neurips26.anadiffusion.volumes import PART_LABELS, PARTS
from neurips26.common import loop
from neurips26.common.io import load_npz, save_npz
from neurips26.common.runtime import start_job

BATCH = 16
log = start_job(snakemake)
template = template_from_arrays(load_npz(snakemake.input.template))
volumes, labels = load_split(snakemake.input.train)
device = loop.job_device()
autoencoder = load_autoencoder(snakemake.input.autoencoder).to(device)
x = torch.from_numpy(volumes)[:, None]


@torch.no_grad()
def encode(images: torch.Tensor) -> np.ndarray:
    return torch.cat([autoencoder.encode(chunk.to(device)).cpu() for chunk in images.split(BATCH)]).numpy()


latents = {"whole": encode(x)}
for part in PARTS:
    masks = torch.from_numpy(labels == PART_LABELS[part])[:, None]
    latents[part] = encode(assembly.part_training_crops(x, masks, template.supports[part]))
log.info("latents: %s", {name: z.shape for name, z in latents.items()})
save_npz(snakemake.output.latents, **latents)
