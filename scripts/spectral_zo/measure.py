"""One of paper 13's gradient measurements (alignment, bias_variance, dimension) over the seeds of its block: the
named methods on the dataset's train split (seeds run in turn within the job)."""

import numpy as np
import pandas as pd

from neurips26.common.io import write_parquet
from neurips26.common.runtime import job_provenance, start_job
from neurips26.spectral_zo import experiment

MEASUREMENTS = {
    "alignment": experiment.alignment,
    "bias_variance": experiment.bias_variance_table,
    "dimension": experiment.dimension,
}
p = snakemake.params
log = start_job(snakemake, 0)
data = dict(np.load(snakemake.input.data))
measure = MEASUREMENTS[p.measurement]
rows = []
for seed in p.block["seeds"]:
    rows += measure(p.methods, data, p.block, seed)
    log.info("%s seed %d: %d rows", p.measurement, seed, len(rows))
write_parquet(pd.DataFrame(rows), snakemake.output[0], job_provenance(snakemake))
