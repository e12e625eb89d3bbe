"""The corpus: every trajectory serialised as in bbo-pile (optimizer token, search space, quantised trials), the
train split's (train black boxes) and the validation split's (held-out black boxes) token sequences shuffled and
packed into rows of the model's context, the vocabulary, and counts per split, family and optimizer (trials with
a non-finite value dropped, trajectories with too many of them rejected). Where the scale reads BBO-Pile
(`pile`), its train.txt and valid.txt lines join the train and validation splits (neurips26.bbo_pile.pile)."""

import numpy as np
import pandas as pd

from neurips26.bbo_pile import experiment
from neurips26.bbo_pile.corpus import build_corpus
from neurips26.bbo_pile.pile import check_algorithms, read_pile
from neurips26.common.io import atomic_path, write_parquet, write_text
from neurips26.common.runtime import job_provenance, start_job

params, inp, out = snakemake.params, snakemake.input, snakemake.output
log = start_job(snakemake, seed=params.seed)
vocab = experiment.corpus_vocabulary(params.optimizers, params.tokenizer, params.pile)
pile = None
if params.pile:
    pile = {}
    for split, path in (("train", inp.pile_train[0]), ("eval", inp.pile_valid[0])):
        with open(path, encoding="utf-8") as lines:  # a first pass: unknown algorithm names stop the job early
            log.info("%s: lines per algorithm %s", path, dict(check_algorithms(lines, vocab, path)))
        with open(path, encoding="utf-8") as lines:
            pile[split] = read_pile(lines, vocab, params.context, params.pile["max_malformed"], source=path)
        log.info("%s", pile[split].summary())
        for number, reason in pile[split].malformed:
            log.warning("%s line %d malformed: %s", path, number, reason)
corpus = build_corpus(
    pd.read_parquet(inp.blackboxes),
    pd.concat([pd.read_parquet(p) for p in inp.trajectories], ignore_index=True),
    vocab,
    params.tokenizer["y_norm"],
    params.context,
    params.seed,
    warn=log.warning,
    pile=pile,
)
for split, (n, tokens) in corpus.sequences.items():
    rows = len(corpus.packed[split])
    log.info("%s: %d trajectories, %d tokens, packed into %d rows of %d", split, n, tokens, rows, params.context)
write_text(out.vocab, vocab.to_json())
for split, path in (("train", out.train), ("eval", out.valid)):
    rows = corpus.packed[split]
    if pile is not None:  # BBO-Pile's size: 4 bytes a token on disk and in the training job, not 8
        rows = rows.astype(np.int32)
    with atomic_path(path) as tmp, open(tmp, "wb") as handle:
        np.save(handle, rows)
write_parquet(corpus.stats, out.stats, job_provenance(snakemake, params.seed))
