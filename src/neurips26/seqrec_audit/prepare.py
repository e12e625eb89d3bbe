"""A dataset ready for every method: the leave-two-out split over contiguous item ids 0..n_items-1, the item
features in that id order, and the counts of what preprocessing removed (k-core, short users, cold targets); made
from a dataset's name and files by :func:`prepare_dataset` (the reader of each kind of dataset)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace

import numpy as np
import pandas as pd

from neurips26.seqrec_audit.catalog import SyntheticSpec, check_features
from neurips26.seqrec_audit.movielens import item_feature_matrix_movielens
from neurips26.seqrec_audit.sequences import LeaveTwoOutSplit, interactions_to_sequences, k_core, leave_one_out
from neurips26.seqrec_audit.synthetic import generate


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


def read_real(kind: str, files, text_dim: int, seed: int) -> tuple[pd.DataFrame, pd.DataFrame, Callable]:
    """A real dataset's interactions, items and item featurizer, by kind: ``movielens100k`` (``files.inter``,
    ``files.item``: the atomic files in the recbole wheel), ``movielens1m`` (``files.archive``) with ML-100k's
    genre/decade/title features, or ``amazon2014`` (``files.reviews``, ``files.meta``) with hashed text features
    of ``text_dim`` dimensions seeded by ``seed``."""
    from neurips26.seqrec_audit import sources
    from neurips26.seqrec_audit.movielens import read_movielens100k

    if kind == "movielens100k":
        interactions, items = read_movielens100k(files.inter, files.item)
        return interactions, items, item_feature_matrix_movielens
    if kind == "movielens1m":
        interactions, items = sources.read_movielens1m(files.archive)
        return interactions, items, item_feature_matrix_movielens
    if kind == "amazon2014":
        interactions, items = sources.read_amazon2014(files.reviews, files.meta)

        def featurize(kept):
            return sources.item_feature_matrix_text(kept["text"].tolist(), text_dim, seed)

        return interactions, items, featurize
    raise ValueError(f"unknown kind of dataset {kind!r}")


def prepare_dataset(name: str, files, settings, log=None) -> PreparedDataset:
    """Dataset ``name`` prepared for every method: a synthetic regime generated (``settings.seed``,
    ``settings.synthetic``), or a real dataset read from ``files`` (:func:`read_real`) and k-cored
    (``settings.k_core``), both split with ``settings.min_length``; the features replaced by the dataset's entry of
    ``settings.embeddings`` when it has one. ``log`` (a logger) hears what was read."""
    from neurips26.seqrec_audit import experiment, sources

    kind = experiment.dataset_kind(name)
    if kind == "synthetic":
        spec = experiment.synthetic_spec({"seed": settings.seed, "synthetic": settings.synthetic}, name)
        ready = prepare_synthetic(spec, settings.min_length)
    else:
        interactions, items, featurize = read_real(kind, files, settings.text_dim, settings.seed)
        if log is not None:
            if kind == "amazon2014":
                log.info("%d of %d items have no metadata text", int((items["text"] == "").sum()), len(items))
            log.info(
                "%s: %d interactions, %d users, %d items read",
                name,
                len(interactions),
                interactions["user"].nunique(),
                interactions["item"].nunique(),
            )
        ready = prepare_interactions(interactions, items, settings.k_core, settings.min_length, featurize)
    if settings.embeddings:  # this dataset's entry of the optional `embeddings` block
        ready = replace(ready, features=sources.load_embeddings(settings.embeddings, ready.item_ids))
        if log is not None:
            log.info("features replaced by %s (%d dimensions)", settings.embeddings, ready.features.shape[1])
    return ready
