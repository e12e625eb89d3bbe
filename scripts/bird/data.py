"""One dataset of paper 04: the training pool and the held-out images, standardised, with the normalisation
recorded (BIRD's posterior is scale-sensitive)."""

import json

import numpy as np

from neurips26.bird import loaders
from neurips26.common.io import save_npz
from neurips26.common.runtime import start_job

params = snakemake.params
log = start_job(snakemake, seed=params.seed)
images = loaders.load_configured(dict(params.dataset), params.seed, snakemake.input.get("archives", []))
kind = params.dataset["kind"]
log.info(
    "%s: train %s, held out %s, normalisation %s",
    kind,
    images.train.shape,
    images.heldout.shape,
    images.meta["normalisation"],
)
save_npz(snakemake.output[0], train=images.train, heldout=images.heldout, meta=np.array(json.dumps(images.meta)))
