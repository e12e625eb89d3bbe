"""Train SASRec (cross-entropy over all items) on one prepared dataset with one seed, keep the epoch with the best
validation NDCG@10, then rank every test user's next item under the same protocol as the training-free methods."""

import time

import pandas as pd
import torch

from neurips26.common.io import atomic_path, write_parquet
from neurips26.common.runtime import job_provenance, start_job
from neurips26.seqrec_audit import experiment
from neurips26.seqrec_audit.artifacts import load_prepared
from neurips26.seqrec_audit.metrics import metrics_from_ranks, ranks_in_chunks
from neurips26.seqrec_audit.sasrec import score_sasrec, train_sasrec

params, wc, inp, out = snakemake.params, snakemake.wildcards, snakemake.input, snakemake.output
cfg = params.config
config = experiment.sasrec_config(cfg, int(wc.seed))
log = start_job(snakemake, seed=config.seed)
ready = load_prepared(inp)
split = ready.split
start = time.perf_counter()
device = "cuda" if torch.cuda.is_available() else "cpu"  # a GPU at paper scale (profiles/slurm)
model, epochs = train_sasrec(split.train, ready.n_items, split.valid_history, split.valid_target, config,
                             log=log.info, device=device)
train_seconds = time.perf_counter() - start
start = time.perf_counter()
histories = split.test_history
protocol = cfg["protocol"]
ranks = ranks_in_chunks(lambda chunk: score_sasrec(model, chunk), histories, split.test_target, ready.n_items,
                        protocol["exclude_history"], protocol["tie_break"])
values = metrics_from_ranks(ranks)
inference_seconds = time.perf_counter() - start
log.info("%s seed %s on %s: test NDCG@10 %.4f, training %.1f s, inference %.2f s for %d users", wc.dataset,
         wc.seed, device, values["NDCG@10"], train_seconds, inference_seconds, split.n_users)
prov = job_provenance(snakemake, config.seed)
per_1000 = inference_seconds / max(split.n_users, 1) * 1000
write_parquet(pd.DataFrame([{"method": "sasrec", "metric": k, "value": float(v), "seconds_per_1000_users": per_1000}
                            for k, v in values.items()]).assign(dataset=wc.dataset, seed=int(wc.seed)),
              out.metrics, prov)
write_parquet(pd.DataFrame(epochs).assign(dataset=wc.dataset, seed=int(wc.seed), train_seconds=train_seconds,
                                          inference_seconds=inference_seconds, users=split.n_users),
              out.training, prov)
with atomic_path(out.model) as tmp:
    torch.save({"config": config.__dict__, "n_items": ready.n_items,
                "state": {k: v.cpu() for k, v in model.state_dict().items()}}, tmp)
