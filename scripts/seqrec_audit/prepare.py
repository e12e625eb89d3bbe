"""Prepare one dataset for every method: read it (synthetic regime, ML-100k from the recbole wheel, or a
paper-scale download), k-core, time-ordered sequences, contiguous item ids, item features, leave-two-out split;
write the tables, the features and the preprocessing counts."""

import numpy as np

from neurips26.common.io import atomic_path, write_parquet
from neurips26.common.runtime import job_provenance, start_job
from neurips26.seqrec_audit.prepare import prepare_dataset, to_frames

params, out, name = snakemake.params, snakemake.output, snakemake.wildcards.dataset
seed = params.seed
log = start_job(snakemake, seed=seed)
ready = prepare_dataset(name, snakemake.input, params, log)
sequences, items, counts = to_frames(ready)
for row in counts.itertuples():
    log.info("%s: %s = %d", name, row.count, row.value)
log.info("%s: %d users, %d items, features %s", name, len(sequences), len(items), ready.features.shape)
prov = job_provenance(snakemake, seed)
write_parquet(sequences, out.sequences, prov)
write_parquet(items, out.item_table, prov)
write_parquet(counts.assign(dataset=name), out.counts, prov)
with atomic_path(out.features) as tmp:
    with open(tmp, "wb") as handle:
        np.save(handle, ready.features)
