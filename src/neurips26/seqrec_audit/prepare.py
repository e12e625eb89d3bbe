"""A dataset ready for every method: the leave-two-out split over contiguous item ids 0..n_items-1, the item
features in that id order, and the counts of what preprocessing removed (k-core, short users, cold targets)."""

from __future__ import annotations

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


def prepare_interactions(interactions: pd.DataFrame, items: pd.DataFrame, k: int, min_length: int) -> PreparedDataset:
    """Real data (ML-100k): iterated k-core, time-ordered sequences (stable on ties), contiguous ids, features
    of the kept items, leave-two-out split."""
    kept, core_counts = k_core(interactions, k)
    sequences, item_ids = reindex_items(interactions_to_sequences(kept))
    missing = np.setdiff1d(item_ids, items["item"].to_numpy())
    if len(missing):
        raise ValueError(f"{len(missing)} interacted items have no item record, e.g. {missing[:5].tolist()}")
    features = item_feature_matrix_movielens(items.set_index("item").loc[item_ids].reset_index())
    split = leave_one_out(sequences, min_length)
    return PreparedDataset(split, features, item_ids, {**core_counts, "users_too_short": split.n_dropped_short,
                                                       **split.cold})


def prepare_synthetic(spec: SyntheticSpec, min_length: int) -> PreparedDataset:
    """A synthetic regime: its sequences (already over 0..n_items-1) and its features, split leave-two-out."""
    sequences, features, _ = generate(spec)
    check_features(features, spec.n_items)
    split = leave_one_out(sequences, min_length)
    return PreparedDataset(split, features, np.arange(spec.n_items), {"users_too_short": split.n_dropped_short,
                                                                       **split.cold})
