"""The training corpus: every generated trajectory serialised as in bbo-pile (:mod:`.tokenizer`), the train split's
(train black boxes) and the validation split's (held-out black boxes) token sequences shuffled and packed into rows
of the model's context, and counts per split, family and optimizer: trajectories, tokens, trials with a non-finite
value (dropped) and trajectories rejected by :func:`.tokenizer.too_many_invalid`.

bbo-pile's ``compile_data.py`` writes one trajectory per text line and shuffles the lines
(``shuf --random-source=<(yes 42)``); here the sequences are shuffled with a seeded generator and packed.

Where the scale trains on the published BBO-Pile (config ``pile``), its lines read by :mod:`.pile` join the
generated ones: ``train.txt`` the train split, ``valid.txt`` the validation split, shuffled together with the
generated sequences of their split; their counts are rows of family ``bbo_pile``."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import pandas as pd

from .pile import PileReading
from .tokenizer import encode_trajectory
from .training import pack_sequences
from .vocabulary import Vocabulary

SPLITS = ("train", "eval")


@dataclass(frozen=True)
class Corpus:
    """``packed[split]``: rows of ``context`` token ids; ``sequences[split]``: how many trajectories and tokens
    went in; ``stats``: one row per (split, family, optimizer) with ``trajectories``, ``rejected``,
    ``dropped_trials`` and ``tokens``."""

    packed: dict[str, np.ndarray]
    sequences: dict[str, tuple[int, int]]
    stats: pd.DataFrame


def encode_runs(
    boxes: pd.DataFrame,
    trials: pd.DataFrame,
    vocab: Vocabulary,
    y_norm: str,
    warn: Callable[[str], None] | None = None,
) -> tuple[dict[str, list[np.ndarray]], pd.DataFrame]:
    """The token ids of every (bb_id, optimizer, seed) run of the long trajectory table, by split of its box, and
    the per-run counts (a rejected run has no ids; ``warn`` receives why)."""
    boxes = boxes.set_index("bb_id")
    sequences, stats = {split: [] for split in SPLITS}, []
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
                y_norm=y_norm,
                return_n_dropped=True,
            )
        except ValueError as error:
            if warn is not None:
                warn(f"{bb_id} {optimizer} seed {seed} rejected: {error}")
            stats.append({**row, "rejected": 1, "dropped_trials": int((~run["valid"]).sum()), "tokens": 0})
            continue
        sequences[box["split"]].append(ids)
        stats.append({**row, "rejected": 0, "dropped_trials": int(dropped), "tokens": len(ids)})
    return sequences, pd.DataFrame(stats)


def build_corpus(
    boxes: pd.DataFrame,
    trials: pd.DataFrame,
    vocab: Vocabulary,
    y_norm: str,
    context: int,
    seed: int,
    warn: Callable[[str], None] | None = None,
    pile: dict[str, PileReading] | None = None,
) -> Corpus:
    """Encode every run (:func:`encode_runs`), shuffle each split's sequences with a generator seeded by `seed`
    (train first, then eval) and pack them into rows of `context` tokens padded with ``<pad>``. ``pile``: per
    split, BBO-Pile lines read by :func:`.pile.read_pile`, appended to the split's generated sequences before
    the shuffle."""
    sequences, runs = encode_runs(boxes, trials, vocab, y_norm, warn)
    if pile:
        unknown = set(pile) - set(SPLITS)
        if unknown:
            raise ValueError(f"pile splits {sorted(unknown)} are not among {SPLITS}")
        for split, reading in pile.items():
            sequences[split] = sequences[split] + reading.sequences
        runs = pd.concat([runs, *(reading.stats(split) for split, reading in pile.items())], ignore_index=True)
    rng = np.random.default_rng(seed)
    packed = {}
    for split, seqs in sequences.items():
        order = rng.permutation(len(seqs))
        packed[split] = pack_sequences([seqs[i] for i in order], context, vocab.pad)
    stats = runs.groupby(["split", "family", "optimizer"], as_index=False).sum()
    counts = {split: (len(seqs), sum(len(s) for s in seqs)) for split, seqs in sequences.items()}
    return Corpus(packed, counts, stats)
