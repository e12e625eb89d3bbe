"""Prepare one dataset for every method: read it (synthetic regime, ML-100k from the recbole wheel, or a
paper-scale download), k-core, time-ordered sequences, contiguous item ids, item features, leave-two-out split;
write the tables, the features and the preprocessing counts."""

from dataclasses import replace

import numpy as np

from neurips26.common.io import atomic_path, write_parquet
from neurips26.common.runtime import job_provenance, start_job
from neurips26.seqrec_audit import data, experiment, prepare, sources

params, inp, out, name = snakemake.params, snakemake.input, snakemake.output, snakemake.wildcards.dataset
seed = params.seed
log = start_job(snakemake, seed=seed)
kind = experiment.dataset_kind(name)
if kind == "synthetic":
    spec = experiment.synthetic_spec({"seed": seed, "synthetic": params.synthetic}, name)
    ready = prepare.prepare_synthetic(spec, params.min_length)
else:
    if kind == "movielens100k":
        interactions, items = data.read_movielens100k(inp.inter, inp.item)
        featurize = data.item_feature_matrix_movielens
    elif kind == "movielens1m":
        interactions, items = sources.read_movielens1m(inp.archive)
        featurize = data.item_feature_matrix_movielens
    else:
        interactions, items = sources.read_amazon2014(inp.reviews, inp.meta)
        log.info("%d of %d items have no metadata text", int((items["text"] == "").sum()), len(items))

        def featurize(kept):
            return sources.item_feature_matrix_text(kept["text"].tolist(), params.text_dim, seed)

    log.info(
        "%s: %d interactions, %d users, %d items read",
        name,
        len(interactions),
        interactions["user"].nunique(),
        interactions["item"].nunique(),
    )
    ready = prepare.prepare_interactions(interactions, items, params.k_core, params.min_length, featurize)
embeddings = params.embeddings  # this dataset's entry of the optional `embeddings` block
if embeddings:
    ready = replace(ready, features=sources.load_embeddings(embeddings, ready.item_ids))
    log.info("features replaced by %s (%d dimensions)", embeddings, ready.features.shape[1])
sequences, items, counts = prepare.to_frames(ready)
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
