"""Paper 17's sanity baseline on one dataset: probabilistic PCA with as many components as the GPLVMs' latent
dimensions (at most the data's columns less one), fitted to the observed entries, scored on the hidden ones as the
GPLVMs are."""

import numpy as np
import pandas as pd

from neurips26.common.io import write_parquet
from neurips26.common.runtime import job_provenance, start_job
from neurips26.gplvm_assvi.metrics import score
from neurips26.gplvm_assvi.pca import ppca_components, ppca_predictive

p = snakemake.params
log = start_job(snakemake)
data = dict(np.load(snakemake.input.data))
surface = np.load(snakemake.input.surface)
q = ppca_components(p.dataset["latent_dim"], data["y"].shape[1])
log.info("PPCA of %d components (the GPLVMs' latent_dim %d, capped at %d - 1 columns)", q, p.dataset["latent_dim"],
         data["y"].shape[1])  # fmt: skip
means, variances, reconstruction = ppca_predictive(data["y"], data["mask"], p.dataset["latent_dim"], p.iterations)
row = score(means, variances, data, reconstruction, surface if len(surface) else None)
row.update(dataset=snakemake.wildcards.dataset, method="pca", seed=-1, nlpd_without_noise=np.nan, points=len(means[0]))
log.info("%s", row)
write_parquet(pd.DataFrame([row]), snakemake.output.metrics, job_provenance(snakemake))
