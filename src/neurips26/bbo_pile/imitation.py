"""The imitation test (claim B2): how likely the evaluation model finds the held-out boxes' trajectories of each
real optimizer when they are re-encoded with each conditioning token; an optimizer is imitated when its own token
gives its trajectories the lowest negative log-likelihood (bbo-pile's claim that the models imitate the
optimizers they were trained on, conditioned by the ``algorithm:`` token of ``open_optformer/history.py``)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd

from .model import Decoder
from .tokenizer import encode_trajectory, header_ids, too_many_invalid
from .training import sequence_nll
from .vocabulary import Vocabulary

__all__ = [
    "held_out_trajectories",
    "imitation_matrix",
    "imitation_nll",
    "imitation_tables",
    "pool_imitation",
    "seed_imitation_tables",
]


def held_out_trajectories(boxes: pd.DataFrame, trials: pd.DataFrame) -> tuple[dict, pd.DataFrame]:
    """The held-out (``split == "eval"``) boxes' trajectories, by true optimizer: ``{optimizer: [(lo, hi, x, y),
    ...]}`` with the valid trials of each (bb_id, optimizer, seed) run, runs with too many invalid trials left out
    (:func:`.tokenizer.too_many_invalid`), and the keys of each trajectory (``true_algo``, ``trajectory`` = its
    position in the list, ``bb_id``, ``seed``). ``boxes``: the catalog; ``trials``: the long trajectory table."""
    boxes = boxes.set_index("bb_id")
    held = boxes.index[boxes["split"] == "eval"]
    trials = trials[trials["bb_id"].isin(held)].sort_values(["bb_id", "optimizer", "seed", "trial"])
    by_algo, keys = {}, []
    for (bb_id, optimizer, seed), run in trials.groupby(["bb_id", "optimizer", "seed"], sort=True):
        if too_many_invalid(int((~run["valid"]).sum()), len(run)):
            continue
        ok = run[run["valid"]]
        by_algo.setdefault(optimizer, []).append(
            (boxes.loc[bb_id, "lo"], boxes.loc[bb_id, "hi"], np.stack(ok["x"].to_numpy()), ok["y"].to_numpy())
        )
        keys.append((optimizer, len(by_algo[optimizer]) - 1, bb_id, seed))
    return by_algo, pd.DataFrame(keys, columns=["true_algo", "trajectory", "bb_id", "seed"])


def imitation_tables(
    model: Decoder, vocab: Vocabulary, boxes: pd.DataFrame, trials: pd.DataFrame, algorithms: Sequence[str]
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The imitation step: (pooled per (true_algo, cond_algo), per trajectory with its ``bb_id`` and ``seed``) of
    the held-out boxes' trajectories (:func:`held_out_trajectories`) under each of ``algorithms``."""
    by_algo, keys = held_out_trajectories(boxes, trials)
    per_trajectory = imitation_nll(model, vocab, by_algo, algorithms)
    per_trajectory = per_trajectory.merge(keys, on=["true_algo", "trajectory"], how="left")
    return pool_imitation(per_trajectory), per_trajectory


def seed_imitation_tables(
    models: Mapping[int, Decoder],
    vocab: Vocabulary,
    boxes: pd.DataFrame,
    trials: pd.DataFrame,
    algorithms: Sequence[str],
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """:func:`imitation_tables` for each model seed of a run (``{seed: model}``, claim B2): the per-trajectory rows
    of every seed with its ``model_seed``, and the NLL pooled per (true_algo, cond_algo) over the seeds' tokens."""
    if not models:
        raise ValueError("no model seed to score the held-out trajectories with")
    parts = [
        imitation_tables(model, vocab, boxes, trials, algorithms)[1].assign(model_seed=int(seed))
        for seed, model in models.items()
    ]
    per_trajectory = pd.concat(parts, ignore_index=True)
    return pool_imitation(per_trajectory), per_trajectory


def imitation_nll(
    model: Decoder,
    vocab: Vocabulary,
    trajectories_by_algo: Mapping[str, Sequence[tuple]],
    algorithms: Sequence[str],
    batch: int = 32,
) -> pd.DataFrame:
    """Mean NLL per trial value token of each trajectory when each true optimizer's trajectories are
    re-encoded with each conditioning algorithm token (claim B2).

    ``trajectories_by_algo[true]`` holds ``(lo, hi, x, y)`` (or ``(lo, hi, x, y, log_scale)``)
    tuples. Each is encoded as in training (``"global"`` objective bins) with the header of
    ``cond``; the scored tokens are the value bins after the header (the x bins and the y bins of
    every trial; separators, header and EOS excluded). Returns one row per (true_algo, cond_algo,
    trajectory): ``trajectory`` (its position in ``trajectories_by_algo[true]``), ``nll``,
    ``n_tokens``.
    """
    bins = vocab.bin_ids
    records = []
    for true_algo, trajectories in trajectories_by_algo.items():
        if not trajectories:
            raise ValueError(f"no trajectories for true algorithm {true_algo!r}")
        for cond in algorithms:
            sequences, masks = [], []
            for item in trajectories:
                lo, hi, x, y = item[:4]
                log_scale = item[4] if len(item) > 4 else None
                ids = encode_trajectory(vocab, cond, lo, hi, x, y, log_scale)
                start = header_ids(vocab, cond, lo, hi, log_scale).size
                mask = np.isin(ids, bins)
                mask[:start] = False
                sequences.append(ids)
                masks.append(mask)
            means = sequence_nll(model, sequences, masks, batch=batch, reduce="sequence")
            records += [
                {
                    "true_algo": true_algo,
                    "cond_algo": cond,
                    "trajectory": j,
                    "nll": float(nll),
                    "n_tokens": int(mask.sum()),
                }
                for j, (nll, mask) in enumerate(zip(means, masks))
            ]
    return pd.DataFrame.from_records(records, columns=["true_algo", "cond_algo", "trajectory", "nll", "n_tokens"])


def pool_imitation(per_trajectory: pd.DataFrame) -> pd.DataFrame:
    """One row per (true_algo, cond_algo) of `imitation_nll`'s rows: ``nll`` pooled over the
    trajectories' tokens, ``n_tokens``, ``n_trajectories``."""
    frame = per_trajectory.assign(weighted=per_trajectory["nll"] * per_trajectory["n_tokens"])
    pooled = (
        frame.groupby(["true_algo", "cond_algo"], sort=False)
        .agg(weighted=("weighted", "sum"), n_tokens=("n_tokens", "sum"), n_trajectories=("nll", "size"))
        .reset_index()
    )
    pooled["nll"] = pooled["weighted"] / pooled["n_tokens"]
    return pooled[["true_algo", "cond_algo", "nll", "n_tokens", "n_trajectories"]]


def imitation_matrix(
    model: Decoder,
    vocab: Vocabulary,
    trajectories_by_algo: Mapping[str, Sequence[tuple]],
    algorithms: Sequence[str],
    batch: int = 32,
) -> pd.DataFrame:
    """Mean NLL per trial value token, pooled over each true optimizer's trajectories, for each
    conditioning token (see `imitation_nll`): one row per (true_algo, cond_algo) with ``nll``,
    ``n_tokens``, ``n_trajectories``."""
    return pool_imitation(imitation_nll(model, vocab, trajectories_by_algo, algorithms, batch))
