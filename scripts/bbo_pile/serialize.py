"""The corpus: every trajectory serialised as in bbo-pile (optimizer token, search space, quantised trials), the
train split's (train black boxes) and the validation split's (held-out black boxes) token sequences shuffled and
packed into rows of the model's context, the vocabulary, and counts per split, family and optimizer (trials with
a non-finite value dropped, trajectories with too many of them rejected)."""

import numpy as np
import pandas as pd

from neurips26.bbo_pile import experiment
from neurips26.bbo_pile.corpus import build_corpus
from neurips26.common.io import atomic_path, write_parquet, write_text
from neurips26.common.runtime import job_provenance, start_job

params, inp, out = snakemake.params, snakemake.input, snakemake.output
log = start_job(snakemake, seed=params.seed)
vocab = experiment.vocabulary(params.optimizers, params.tokenizer["q"])
corpus = build_corpus(
    pd.read_parquet(inp.blackboxes),
    pd.concat([pd.read_parquet(p) for p in inp.trajectories], ignore_index=True),
    vocab,
    params.tokenizer["y_norm"],
    params.context,
    params.seed,
    warn=log.warning,
)
for split, (n, tokens) in corpus.sequences.items():
    rows = len(corpus.packed[split])
    log.info("%s: %d trajectories, %d tokens, packed into %d rows of %d", split, n, tokens, rows, params.context)
write_text(out.vocab, vocab.to_json())
for split, path in (("train", out.train), ("eval", out.valid)):
    with atomic_path(path) as tmp, open(tmp, "wb") as handle:
        np.save(handle, corpus.packed[split])
write_parquet(corpus.stats, out.stats, job_provenance(snakemake, params.seed))
