"""Train one sequential recommender (SASRec, BERT4Rec, or TIGER on the items' semantic IDs) on one prepared
dataset with one seed, keep the epoch with the best validation NDCG@10, then rank every test user's next item
under the same protocol as the training-free methods."""

from neurips26.common import loop
from neurips26.common.checkpoint import fingerprint
from neurips26.common.io import write_parquet
from neurips26.common.runtime import job_provenance, start_job
from neurips26.seqrec_audit import trained
from neurips26.seqrec_audit.artifacts import load_prepared, load_semantic_ids, save_model, trained_tables

params, wc, inp, out = snakemake.params, snakemake.wildcards, snakemake.input, snakemake.output
config = trained.model_config({"seed": params.seed, wc.model: params.model}, wc.model, int(wc.seed))
log = start_job(snakemake, seed=config.seed)
ready = load_prepared(inp)
semantic_ids = load_semantic_ids(inp.semantic_ids, ready.n_items) if wc.model == "tiger" else None
device = loop.job_device()  # a GPU at paper scale (profiles/slurm)
settings = loop.LoopSettings(
    checkpoint=loop.checkpoint_path(out.model), fingerprint=fingerprint(dict(params), list(inp))
)
fitted = trained.fit_and_evaluate(
    wc.model, ready, config, params.protocol, log=log.info, device=device, semantic_ids=semantic_ids, settings=settings
)
users = ready.split.n_users
log.info(
    "%s on %s seed %s (%s): test NDCG@10 %.4f, training %.1f s, inference %.2f s for %d users",
    wc.model,
    wc.dataset,
    wc.seed,
    device,
    fitted.metrics["NDCG@10"],
    fitted.train_seconds,
    fitted.inference_seconds,
    users,
)
prov = job_provenance(snakemake, config.seed)
metrics, training = trained_tables(fitted, wc.model, wc.dataset, int(wc.seed), users)
write_parquet(metrics, out.metrics, prov)
write_parquet(training, out.training, prov)
save_model(out.model, wc.model, config, ready.n_items, fitted.model)
loop.finish(settings)
