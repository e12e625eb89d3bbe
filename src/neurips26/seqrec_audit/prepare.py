"""A dataset ready for every method: the leave-two-out split over contiguous item ids 0..n_items-1, the item
features in that id order, and the counts of what preprocessing removed (k-core, short users, cold targets)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import pandas as pd

from neurips26.seqrec_audit.data import (
    LeaveTwoOutSplit,
    SyntheticSpec,
    check_features,
    generate,
    interactions_to_sequences,
    item_feature_matrix_movielens,
    k_core,
    leave_one_out,
)


@dataclass(frozen=True)
class PreparedDataset:
    split: LeaveTwoOutSplit
    features: np.ndarray  # (n_items, d), row j = contiguous item j
    item_ids: np.ndarray  # the source's id of contiguous item j
    counts: dict

    @property
    def n_items(self) -> int:
        return len(self.item_ids)


def reindex_items(sequences: pd.DataFrame) -> tuple[pd.DataFrame, np.ndarray]:
    """Map the items of sequences[user, items] to 0..n-1 in ascending order of their source ids; returns the
    remapped sequences and the source id of each new id."""
    flat = np.concatenate([np.asarray(s) for s in sequences["items"]]) if len(sequences) else np.array([], int)
    item_ids, codes = np.unique(flat, return_inverse=True)
    bounds = np.cumsum([len(s) for s in sequences["items"]])[:-1]
    remapped = [part.tolist() for part in np.split(codes, bounds)] if len(sequences) else []
    return sequences.assign(items=remapped), item_ids


def prepare_interactions(
    interactions: pd.DataFrame,
    items: pd.DataFrame,
    k: int,
    min_length: int,
    featurize: Callable[[pd.DataFrame], np.ndarray] = item_feature_matrix_movielens,
) -> PreparedDataset:
    """Real data: iterated k-core, time-ordered sequences (stable on ties), contiguous ids, features of the kept
    items (`featurize` gets their rows of `items` in contiguous order; default: ML-100k's genres, decade and
    title), leave-two-out split."""
    kept, core_counts = k_core(interactions, k)
    sequences, item_ids = reindex_items(interactions_to_sequences(kept))
    missing = np.setdiff1d(item_ids, items["item"].to_numpy())
    if len(missing):
        raise ValueError(f"{len(missing)} interacted items have no item record, e.g. {missing[:5].tolist()}")
    features = featurize(items.set_index("item").loc[item_ids].reset_index())
    check_features(features, len(item_ids))
    split = leave_one_out(sequences, min_length)
    return PreparedDataset(
        split, features, item_ids, {**core_counts, "users_too_short": split.n_dropped_short, **split.cold}
    )


def prepare_synthetic(spec: SyntheticSpec, min_length: int) -> PreparedDataset:
    """A synthetic regime: its sequences (already over 0..n_items-1) and its features, split leave-two-out."""
    sequences, features, _ = generate(spec)
    check_features(features, spec.n_items)
    split = leave_one_out(sequences, min_length)
    return PreparedDataset(
        split, features, np.arange(spec.n_items), {"users_too_short": split.n_dropped_short, **split.cold}
    )


def to_frames(ready: PreparedDataset) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    """(sequences, items, counts) tables of a prepared dataset: one row per kept user (user, train, valid_target,
    test_target), one per contiguous item (item, source_id), one per preprocessing count (count, value)."""
    split = ready.split
    sequences = pd.DataFrame(
        {
            "user": split.users,
            "train": [s.tolist() for s in split.train],
            "valid_target": split.valid_target,
            "test_target": split.test_target,
        }
    )
    items = pd.DataFrame({"item": np.arange(ready.n_items), "source_id": ready.item_ids})
    counts = pd.DataFrame({"count": list(ready.counts), "value": [int(v) for v in ready.counts.values()]})
    return sequences, items, counts


def from_frames(
    sequences: pd.DataFrame, items: pd.DataFrame, features: np.ndarray, counts: pd.DataFrame
) -> PreparedDataset:
    """The inverse of `to_frames` (features stored beside the tables); checks the features against the items."""
    counts_dict = dict(zip(counts["count"], counts["value"].astype(int)))
    check_features(features, len(items))
    cold_keys = (
        "valid_targets_cold",
        "valid_items_cold",
        "test_targets_cold",
        "test_items_cold",
        "test_items_only_target",
    )
    split = LeaveTwoOutSplit(
        users=sequences["user"].to_numpy(),
        train=[np.asarray(s, dtype=np.int64) for s in sequences["train"]],
        valid_target=sequences["valid_target"].to_numpy(np.int64),
        test_target=sequences["test_target"].to_numpy(np.int64),
        n_dropped_short=counts_dict.get("users_too_short", 0),
        cold={k: counts_dict[k] for k in cold_keys},
    )
    return PreparedDataset(split, np.asarray(features), items["source_id"].to_numpy(), counts_dict)
