"""The corpus: every trajectory serialised as in bbo-pile (optimizer token, search space, quantised trials), the
train split's (train black boxes) and the validation split's (held-out black boxes) token sequences shuffled and
packed into rows of the model's context, the vocabulary, and counts per split, family and optimizer (trials with
a non-finite value dropped, trajectories rejected when more than 20% of their trials are)."""

import numpy as np
import pandas as pd

from neurips26.bbo_pile import experiment
from neurips26.bbo_pile.tokenizer import encode_trajectory
from neurips26.bbo_pile.training import pack_sequences
from neurips26.common.io import atomic_path, write_parquet, write_text
from neurips26.common.runtime import job_provenance, start_job

params, inp, out = snakemake.params, snakemake.input, snakemake.output
log = start_job(snakemake, seed=params.seed)
vocab = experiment.vocabulary(params.optimizers, params.tokenizer["q"])
boxes = pd.read_parquet(inp.blackboxes).set_index("bb_id")
trials = pd.concat([pd.read_parquet(p) for p in inp.trajectories], ignore_index=True)
sequences, stats = {"train": [], "eval": []}, []
for (bb_id, optimizer, seed), run in trials.groupby(["bb_id", "optimizer", "seed"], sort=True):
    box = boxes.loc[bb_id]
    run = run.sort_values("trial")
    row = {"split": box["split"], "family": box["family"], "optimizer": optimizer, "trajectories": 1}
    try:
        ids, dropped = encode_trajectory(
            vocab,
            optimizer,
            box["lo"],
            box["hi"],
            np.stack(run["x"].to_numpy()),
            run["y"].to_numpy(),
            y_norm=params.tokenizer["y_norm"],
            return_n_dropped=True,
        )
    except ValueError as error:
        log.warning("%s %s seed %s rejected: %s", bb_id, optimizer, seed, error)
        stats.append({**row, "rejected": 1, "dropped_trials": int((~run["valid"]).sum()), "tokens": 0})
        continue
    sequences[box["split"]].append(ids)
    stats.append({**row, "rejected": 0, "dropped_trials": int(dropped), "tokens": len(ids)})
rng = np.random.default_rng(params.seed)
packed = {}
for split, seqs in sequences.items():
    order = rng.permutation(len(seqs))
    packed[split] = pack_sequences([seqs[i] for i in order], params.context, vocab.pad)
    log.info(
        "%s: %d trajectories, %d tokens, packed into %d rows of %d",
        split,
        len(seqs),
        sum(len(s) for s in seqs),
        len(packed[split]),
        params.context,
    )
stats = pd.DataFrame(stats).groupby(["split", "family", "optimizer"], as_index=False).sum()
prov = job_provenance(snakemake, params.seed)
write_text(out.vocab, vocab.to_json())
for split, path in (("train", out.train), ("eval", out.valid)):
    with atomic_path(path) as tmp, open(tmp, "wb") as handle:
        np.save(handle, packed[split])
write_parquet(stats, out.stats, prov)
