"""Train one group of seeds of one sequential recommender (SASRec or BERT4Rec as one batched ensemble, TIGER on
the items' semantic IDs one seed at a time) on one prepared dataset, keep each seed's epoch with the best
validation NDCG@10, then rank every test user's next item under the same protocol as the training-free methods."""

import pandas as pd

from neurips26.common import loop
from neurips26.common.checkpoint import fingerprint
from neurips26.common.io import write_parquet
from neurips26.common.runtime import job_provenance, start_job
from neurips26.seqrec_audit import trained
from neurips26.seqrec_audit.artifacts import load_prepared, load_semantic_ids, save_models, trained_tables
from neurips26.seqrec_audit.experiment import parse_seed_group

params, wc, inp, out = snakemake.params, snakemake.wildcards, snakemake.input, snakemake.output
seeds = parse_seed_group(wc.seeds)
block = {"seed": params.seed, wc.model: params.model}
configs = [trained.model_config(block, wc.model, seed) for seed in seeds]
log = start_job(snakemake, seed=configs[0].seed)
ready = load_prepared(inp)
semantic_ids = load_semantic_ids(inp.semantic_ids, ready.n_items) if wc.model == "tiger" else None
device = loop.job_device()  # a GPU at paper scale (profiles/slurm)
settings = loop.LoopSettings(
    checkpoint=loop.checkpoint_path(out.model), fingerprint=fingerprint(dict(params), list(inp))
)
fits = trained.fit_and_evaluate_seeds(
    wc.model, ready, configs, params.protocol, log=log.info, device=device, semantic_ids=semantic_ids, settings=settings
)
users = ready.split.n_users
tables = []
for seed, fitted in zip(seeds, fits):
    log.info(
        "%s on %s seed %s (%s, %d seed(s) in this job): test NDCG@10 %.4f, training %.1f s (its share), "
        "inference %.2f s for %d users",
        wc.model,
        wc.dataset,
        seed,
        device,
        len(seeds),
        fitted.metrics["NDCG@10"],
        fitted.train_seconds,
        fitted.inference_seconds,
        users,
    )
    tables.append(trained_tables(fitted, wc.model, wc.dataset, seed, users))
prov = job_provenance(snakemake, configs[0].seed)
write_parquet(pd.concat([metrics for metrics, _ in tables], ignore_index=True), out.metrics, prov)
write_parquet(pd.concat([training for _, training in tables], ignore_index=True), out.training, prov)
save_models(out.model, wc.model, seeds, configs, ready.n_items, [fitted.model for fitted in fits])
loop.finish(settings)
