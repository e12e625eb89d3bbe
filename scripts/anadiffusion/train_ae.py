"""Paper 03's one autoencoder (MONAI AutoencoderKL, L1 + KL) on the training volumes, in the common loop (checkpoint
beside the model, resumed by a retry), then its latent scale (1 / std of the training latents)."""

import torch

from neurips26.anadiffusion import model, training
from neurips26.anadiffusion.artifacts import load_split, save_network
from neurips26.common import loop
from neurips26.common.checkpoint import fingerprint
from neurips26.common.io import write_parquet
from neurips26.common.runtime import job_provenance, start_job

p = snakemake.params.autoencoder
seed = p["seed"]
log = start_job(snakemake, seed)
volumes = torch.from_numpy(load_split(snakemake.input.train)[0])[:, None]
device = loop.job_device()
config = model.AUTOENCODERS[p["size"]]
(autoencoder,) = training.job_members(lambda: model.build_autoencoder(config), [seed], device)
settings = loop.LoopSettings(checkpoint=loop.checkpoint_path(snakemake.output.model),
                             fingerprint=fingerprint(dict(snakemake.params), list(snakemake.input)),
                             name=f"autoencoder seed {seed}")  # fmt: skip
trace = training.train_autoencoder([autoencoder], volumes, p["steps"], p["batch"], p["lr"], [seed], settings=settings)
scale = training.fit_latent_scale(autoencoder, volumes)
log.info("%d parameters; last loss %.4f; latent scale %.4f", model.n_parameters(autoencoder),
         float(trace["loss"].iloc[-1]) if len(trace) else float("nan"), scale)  # fmt: skip
save_network(snakemake.output.model, "autoencoder", p["size"], [seed], [autoencoder.state_dict()])
write_parquet(trace.assign(model="autoencoder"), snakemake.output.trace, job_provenance(snakemake, seed))
loop.finish(settings)
