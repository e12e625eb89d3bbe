"""Paper 03's Seg. cLDM baseline at inference (neurips26.anadiffusion.seg_cldm): the samples and the edits of the
segmentation-conditioned LDM, which needs each subject's part label map, exactly what the sampling and editing jobs
of our method never take (this job's input record is the check K1's positive case: it must hold per-subject masks).

Per training seed: sample i conditioned on the label map of training subject seg_cldm.conditioning_subjects(i),
from the seed's whole-brain noise (the sampling job's first draw from the same generator, so z_T is ldm's); then,
for the config's (recipient, donor) pairs and each part, the recipient's label map with that part taken from the
donor's, resampled with the recipient's noise (paired with its original sample). Chunks of BATCH samples at a time
(the same numbers as one batch: each sample's noise and map are its own).

snakemake.input: autoencoder (models/ae.pt), model (models/seg_cldm.pt), train (data/train.npz: its labels).
snakemake.params: schedule, sampling, pairs, seeds. snakemake.output: samples (samples/seg_cldm.npz), inputs
(samples/seg_cldm_inputs.parquet: every input file with the mask arrays it holds)."""

from functools import partial

import numpy as np
import torch

from neurips26.anadiffusion import diffusion, seg_cldm
from neurips26.anadiffusion.artifacts import input_record, job_inputs, load_autoencoder, load_seg_cldms, load_split
from neurips26.anadiffusion.experiment import noise_seed
from neurips26.anadiffusion.model import PARTS
from neurips26.common import loop
from neurips26.common.io import save_npz, write_parquet
from neurips26.common.runtime import job_provenance, start_job

BATCH = 8
p = snakemake.params
seeds, sampling = list(p.seeds), p.sampling
log = start_job(snakemake, sampling["seed"])
device = loop.job_device()
autoencoder = load_autoencoder(snakemake.input.autoencoder).to(device)
nets = [net.to(device) for net in load_seg_cldms(snakemake.input.model, seeds)]
_, labels = load_split(snakemake.input.train)
n, steps = sampling["samples"], sampling["ddim_steps"]
subjects = seg_cldm.conditioning_subjects(n, len(labels))
maps = torch.from_numpy(labels[subjects].astype(np.int64)).to(device)
factor, channels = autoencoder.config.factor, autoencoder.config.latent_channels
schedule = diffusion.NoiseSchedule(**p.schedule)
recipients, donors = (torch.tensor(column, device=device) for column in zip(*p.pairs))


def in_chunks(fn, count: int) -> np.ndarray:
    """fn(indices) -> volumes (B, 1, X, Y, Z) over 0..count-1, BATCH indices at a time, as (count, X, Y, Z)."""
    return torch.cat([fn(torch.arange(a, min(a + BATCH, count), device=device))[:, 0].cpu()
                      for a in range(0, count, BATCH)]).numpy()  # fmt: skip


@torch.no_grad()
def sample(net, noise: diffusion.SamplingNoise, index: torch.Tensor) -> torch.Tensor:
    """Samples `index`, each conditioned on its own label map from its own noise, decoded."""
    z = seg_cldm.sample_seg_cldm(net, maps[index], factor, noise.select(index), schedule, steps)
    return autoencoder.decode(z).clamp(-1.0, 1.0)


def edit(net, noise: diffusion.SamplingNoise, part: str, index: torch.Tensor) -> torch.Tensor:
    """Edit pairs `index`: the recipient's map with `part` from the donor's, resampled with the recipient's noise."""
    return seg_cldm.edit_seg_cldm(net, autoencoder, maps, part, recipients[index], donors[index], noise, schedule,
                                  steps).volumes  # fmt: skip


volumes, edited = [], []
for i, seed in enumerate(seeds):
    generator = torch.Generator().manual_seed(noise_seed(sampling["seed"], seed))
    drawn = diffusion.draw_sampling_noise((n, channels, *(s // factor for s in maps.shape[1:])), generator)
    noise = diffusion.SamplingNoise(drawn.start.to(device), drawn.injection.to(device))
    volumes.append(in_chunks(partial(sample, nets[i], noise), n))
    edited.append(np.stack([in_chunks(partial(edit, nets[i], noise, part), len(recipients)) for part in PARTS]))
    log.info("seed %d: %d samples, %d edits per part, mean %+.3f", seed, n, len(recipients), float(volumes[-1].mean()))
save_npz(snakemake.output.samples, seeds=np.array(seeds), conditioning_subjects=subjects,
         volumes_seg_cldm=np.stack(volumes).astype(np.float32), parts=np.array(PARTS),
         recipients=recipients.cpu().numpy(), donors=donors.cpu().numpy(),
         edited_seg_cldm=np.stack(edited).astype(np.float32))  # fmt: skip
write_parquet(
    input_record("seg_cldm", job_inputs(snakemake.input, snakemake.params)),
    snakemake.output.inputs,
    job_provenance(snakemake, sampling["seed"]),
)
