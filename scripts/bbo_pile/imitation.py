"""Imitation: the held-out boxes' trajectories of each true optimizer, re-encoded with each conditioning token,
scored by the evaluation model (mean NLL per trial value token): per trajectory, and pooled per (true, cond)."""

import numpy as np
import pandas as pd

from neurips26.bbo_pile.artifacts import load_decoder
from neurips26.bbo_pile.sampling import imitation_nll, pool_imitation
from neurips26.bbo_pile.tokenizer import Vocabulary
from neurips26.common.io import write_parquet
from neurips26.common.loop import job_device
from neurips26.common.runtime import job_provenance, start_job

params, inp = snakemake.params, snakemake.input
log = start_job(snakemake, seed=params.seed)
vocab = Vocabulary.from_json(open(inp.vocab).read())
model = load_decoder(inp.model, job_device())  # a GPU at paper scale (profiles/slurm)
boxes = pd.read_parquet(inp.blackboxes).set_index("bb_id")
held = boxes.index[boxes["split"] == "eval"]
trials = pd.concat([pd.read_parquet(p) for p in inp.trajectories], ignore_index=True)
trials = trials[trials["bb_id"].isin(held)].sort_values(["bb_id", "optimizer", "seed", "trial"])
by_algo, names = {}, {}
for (bb_id, optimizer, seed), run in trials.groupby(["bb_id", "optimizer", "seed"], sort=True):
    if (~run["valid"]).mean() > 0.2:
        continue
    ok = run[run["valid"]]
    by_algo.setdefault(optimizer, []).append(
        (boxes.loc[bb_id, "lo"], boxes.loc[bb_id, "hi"], np.stack(ok["x"].to_numpy()), ok["y"].to_numpy())
    )
    names.setdefault(optimizer, []).append((bb_id, seed))
per_trajectory = imitation_nll(model, vocab, by_algo, params.optimizers)
keys = pd.DataFrame(
    [(algo, j, bb_id, seed) for algo, ids in names.items() for j, (bb_id, seed) in enumerate(ids)],
    columns=["true_algo", "trajectory", "bb_id", "seed"],
)
per_trajectory = per_trajectory.merge(keys, on=["true_algo", "trajectory"], how="left")
table = pool_imitation(per_trajectory)
for row in table.itertuples():
    log.info("true %s, conditioned on %s: NLL %.4f over %d tokens", row.true_algo, row.cond_algo, row.nll, row.n_tokens)
prov = job_provenance(snakemake, params.seed)
write_parquet(table.assign(run=params.run), snakemake.output.pooled, prov)
write_parquet(per_trajectory.assign(run=params.run), snakemake.output.trajectories, prov)
