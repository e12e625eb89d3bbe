"""Paper 03's Seg. cLDM baseline at inference (neurips26.anadiffusion.seg_cldm): the samples and the edits of the
segmentation-conditioned LDM, which needs each subject's part label map, exactly what the sampling and editing jobs
of our method never take (this job's input record is the check K1's positive case: it must hold per-subject masks).

The conditioning scans: one scan per distinct training subject, the subjects permuted with the sampling seed
(seg_cldm.conditioning_scans); an edit pair whose recipient and donor are the same subject is refused. Per training
seed: sample i conditioned on the label map of conditioning scan i, from the seed's whole-brain noise (the sampling
job's first draw from the same generator, so z_T is ldm's); then, for the config's (recipient, donor) pairs and each
part, the recipient's label map with that part taken from the donor's, resampled with the recipient's noise (paired
with its original sample); and per pair the recipient's noise with the donor's WHOLE map (swapped_seg_cldm: the
evaluation's check that the model follows its conditioning, which an untrained model would ignore). Chunks of BATCH
samples at a time (the same numbers as one batch: each sample's noise and map are its own).

snakemake.input: autoencoder (models/ae.pt), model (models/seg_cldm.pt), train (data/train.npz: its labels),
train_subjects (data/train_subjects.parquet: the subject of each training scan).
snakemake.params: schedule, sampling, pairs, seeds. snakemake.output: samples (samples/seg_cldm.npz), inputs
(samples/seg_cldm_inputs.parquet: every input file with the mask arrays it holds)."""

from functools import partial

import numpy as np
import pandas as pd
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
subject_ids = pd.read_parquet(snakemake.input.train_subjects)["subject"].astype(str).to_numpy()
if len(subject_ids) != len(labels):
    raise ValueError(f"{len(subject_ids)} training subjects for {len(labels)} label maps: rerun the data rule")
n, steps = sampling["samples"], sampling["ddim_steps"]
scans = seg_cldm.conditioning_scans(subject_ids, n, sampling["seed"])
seg_cldm.check_pair_subjects(subject_ids[scans], *zip(*p.pairs))
log.info("%d samples conditioned on %d distinct training subjects", n, len(set(subject_ids[scans])))
maps = torch.from_numpy(labels[scans].astype(np.int64)).to(device)
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


@torch.no_grad()
def swap(net, noise: diffusion.SamplingNoise, index: torch.Tensor) -> torch.Tensor:
    """Pairs `index`: the recipient's noise with the donor's whole label map (the conditioning check)."""
    z = seg_cldm.sample_seg_cldm(net, maps[donors[index]], factor, noise.select(recipients[index]), schedule, steps)
    return autoencoder.decode(z).clamp(-1.0, 1.0)


volumes, edited, swapped = [], [], []
for i, seed in enumerate(seeds):
    generator = torch.Generator().manual_seed(noise_seed(sampling["seed"], seed))
    drawn = diffusion.draw_sampling_noise((n, channels, *(s // factor for s in maps.shape[1:])), generator)
    noise = diffusion.SamplingNoise(drawn.start.to(device), drawn.injection.to(device))
    volumes.append(in_chunks(partial(sample, nets[i], noise), n))
    edited.append(np.stack([in_chunks(partial(edit, nets[i], noise, part), len(recipients)) for part in PARTS]))
    swapped.append(in_chunks(partial(swap, nets[i], noise), len(recipients)))
    log.info("seed %d: %d samples, %d edits per part, mean %+.3f", seed, n, len(recipients), float(volumes[-1].mean()))
save_npz(snakemake.output.samples, seeds=np.array(seeds), conditioning_scans=scans,
         volumes_seg_cldm=np.stack(volumes).astype(np.float32), parts=np.array(PARTS),
         recipients=recipients.cpu().numpy(), donors=donors.cpu().numpy(),
         edited_seg_cldm=np.stack(edited).astype(np.float32),
         swapped_seg_cldm=np.stack(swapped).astype(np.float32))  # fmt: skip
write_parquet(
    input_record("seg_cldm", job_inputs(snakemake.input, snakemake.params)),
    snakemake.output.inputs,
    job_provenance(snakemake, sampling["seed"]),
)
