"""The items' semantic IDs for TIGER: an RQ-VAE over the item features (residual quantisation, one codebook per
level), then a collision index that makes every item's ID unique."""

import pandas as pd

from neurips26.common import loop
from neurips26.common.checkpoint import fingerprint
from neurips26.common.io import write_parquet
from neurips26.common.runtime import job_provenance, start_job
from neurips26.seqrec_audit import trained
from neurips26.seqrec_audit.artifacts import load_prepared, semantic_id_table
from neurips26.seqrec_audit.semantic_ids import train_rqvae, unique_semantic_ids

params, out = snakemake.params, snakemake.output
config = trained.rqvae_config({"seed": params.seed, "tiger": {"rqvae": params.rqvae}})
log = start_job(snakemake, seed=config.seed)
ready = load_prepared(snakemake.input)
settings = loop.LoopSettings(
    checkpoint=loop.checkpoint_path(out.ids), fingerprint=fingerprint(dict(params), list(snakemake.input))
)
codes, rows = train_rqvae(ready.features, config, log=log.info, device=loop.job_device(), settings=settings)
ids = unique_semantic_ids(codes)
log.info(
    "%s: %d items, %d distinct code tuples before the collision index, largest collision group %d",
    snakemake.wildcards.dataset,
    len(ids),
    len(set(map(tuple, codes))),
    int(ids[:, -1].max()) + 1,
)
prov = job_provenance(snakemake, config.seed)
write_parquet(semantic_id_table(ids), out.ids, prov)
write_parquet(pd.DataFrame(rows).assign(dataset=snakemake.wildcards.dataset), out.training, prov)
loop.finish(settings)
