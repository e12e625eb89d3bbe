"""The reference minimum of every held-out black box for normalised regret (notes 5.5): the best of
`reference_samples` uniform random points (seeded per box); the tables take the minimum of this and of every
value any method evaluated on the box."""

import time

import numpy as np
import pandas as pd

from neurips26.bbo_pile.blackboxes import make_blackbox, specs_from_catalog
from neurips26.common.io import write_parquet
from neurips26.common.runtime import job_provenance, start_job

params = snakemake.params
log = start_job(snakemake, seed=params.seed)
boxes = pd.read_parquet(snakemake.input.blackboxes)
rows, start = [], time.perf_counter()
for k, spec in enumerate(specs_from_catalog(boxes, "eval")):
    rng = np.random.default_rng([params.seed, k])
    lo, hi = np.asarray(spec.lo), np.asarray(spec.hi)
    y = make_blackbox(spec)(lo + (hi - lo) * rng.random((params.reference_samples, spec.dim)))
    finite = y[np.isfinite(y)]
    rows.append(
        {
            "bb_id": spec.bb_id,
            "random_min": float(finite.min()) if finite.size else np.nan,
            "random_median": float(np.median(finite)) if finite.size else np.nan,
            "samples": int(y.size),
            "non_finite": int(y.size - finite.size),
        }
    )
log.info(
    "%d held-out boxes x %d random samples in %.1f s", len(rows), params.reference_samples, time.perf_counter() - start
)
write_parquet(pd.DataFrame(rows), snakemake.output[0], job_provenance(snakemake, params.seed))
