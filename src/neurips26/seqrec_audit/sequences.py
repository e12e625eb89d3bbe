"""Interaction tables to what every method reads: per-user time-ordered sequences, the iterated k-core, and the
leave-two-out split (train, validation target, test target) with its counts of short users and cold targets."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

__all__ = ["LeaveTwoOutSplit", "interactions_to_sequences", "k_core", "leave_one_out", "require_columns"]


def require_columns(frame: pd.DataFrame, columns: list[str], what: str) -> None:
    """ValueError naming ``what`` when ``frame`` lacks any of ``columns``."""
    missing = [c for c in columns if c not in frame.columns]
    if missing:
        raise ValueError(f"{what} lacks column(s) {missing}; has {list(frame.columns)}")


def interactions_to_sequences(frame: pd.DataFrame) -> pd.DataFrame:
    """One row per user (ascending id): the items ordered by (timestamp, row).

    The sort is stable, so equal (timestamp, row) keys, or equal timestamps in a frame without `row`, keep the
    frame's order. Ties are common in ML-100k, so the tie-break decides the last items, i.e. the targets.
    """
    require_columns(frame, ["user", "item", "timestamp"], "interactions")
    if len(frame) == 0:
        return pd.DataFrame({"user": pd.Series([], dtype=frame["user"].dtype), "items": pd.Series([], dtype=object)})
    timestamp = frame["timestamp"].to_numpy()
    if pd.isna(timestamp).any():
        raise ValueError(f"{int(pd.isna(timestamp).sum())} interactions have no timestamp")
    users, uniques = pd.factorize(frame["user"], sort=True)
    tie = frame["row"].to_numpy() if "row" in frame.columns else np.arange(len(frame))
    order = np.lexsort((tie, timestamp, users))  # np.lexsort is stable; the last key is the primary one
    items = frame["item"].to_numpy()[order]
    bounds = np.flatnonzero(np.diff(users[order])) + 1
    return pd.DataFrame({"user": np.asarray(uniques), "items": [s.tolist() for s in np.split(items, bounds)]})


def k_core(frame: pd.DataFrame, k: int) -> tuple[pd.DataFrame, dict[str, int]]:
    """Iterated k-core: drop every interaction whose user or item has fewer than k interactions, recount, repeat
    until nothing changes. Counts are interaction rows (as RecBole's `user/item_inter_num_interval`), both sides
    filtered in the same pass; the fixed point is the unique k-core whatever the order.

    Returns the filtered frame (index reset) and counts: users/items/interactions before and after, and `rounds`,
    the number of passes that removed something.
    """
    if int(k) != k or k < 1:
        raise ValueError(f"k must be a positive integer, got {k!r}")
    require_columns(frame, ["user", "item"], "interactions")
    users, _ = pd.factorize(frame["user"])
    items, _ = pd.factorize(frame["item"])
    keep = np.ones(len(frame), dtype=bool)
    rounds = 0
    while True:
        user_count = np.bincount(users[keep], minlength=users.max(initial=-1) + 1)
        item_count = np.bincount(items[keep], minlength=items.max(initial=-1) + 1)
        drop = keep & ((user_count[users] < k) | (item_count[items] < k))
        if not drop.any():
            break
        keep &= ~drop
        rounds += 1
    counts = {
        "users_before": int(len(np.unique(users))),
        "items_before": int(len(np.unique(items))),
        "interactions_before": int(len(frame)),
        "users_after": int(len(np.unique(users[keep]))),
        "items_after": int(len(np.unique(items[keep]))),
        "interactions_after": int(keep.sum()),
        "rounds": rounds,
    }
    return frame.loc[keep].reset_index(drop=True), counts


@dataclass(frozen=True)
class LeaveTwoOutSplit:
    """Leave-2-out split (GraphRec `prepare/common.py`): for each kept user with sequence s,

    - training sequence and validation history: `train = s[:-2]`;
    - validation target `s[-2]`;
    - test history `s[:-1]` (train + validation target), test target `s[-1]`.

    `n_dropped_short` counts users shorter than `min_length`. `cold` counts targets whose item never occurs in any
    training sequence: `valid_targets_cold`/`test_targets_cold` (users), `valid_items_cold`/`test_items_cold`
    (distinct items), and `test_items_only_target` (distinct test targets seen nowhere else: not in training, not as
    a validation target).
    """

    users: np.ndarray
    train: list[np.ndarray]
    valid_target: np.ndarray
    test_target: np.ndarray
    n_dropped_short: int
    cold: dict[str, int]

    @property
    def n_users(self) -> int:
        return len(self.users)

    @property
    def valid_history(self) -> list[np.ndarray]:
        return self.train

    @property
    def test_history(self) -> list[np.ndarray]:
        return [np.append(history, last) for history, last in zip(self.train, self.valid_target)]


def leave_one_out(sequences: pd.DataFrame, min_length: int = 3) -> LeaveTwoOutSplit:
    """Split sequences[user, items] by leave-2-out (see `LeaveTwoOutSplit`); users shorter than `min_length` are
    dropped and counted. `min_length` below 3 would leave an empty training sequence, so it is refused."""
    if int(min_length) != min_length or min_length < 3:
        raise ValueError(f"min_length must be an integer >= 3 (1 training item + 2 held out), got {min_length!r}")
    require_columns(sequences, ["user", "items"], "sequences")
    lengths = np.array([len(s) for s in sequences["items"]], dtype=np.int64)
    kept = lengths >= min_length
    seqs = [np.asarray(s) for s, keep in zip(sequences["items"], kept) if keep]
    train = [s[:-2] for s in seqs]
    valid_target = np.array([s[-2] for s in seqs])
    test_target = np.array([s[-1] for s in seqs])
    seen = np.unique(np.concatenate(train)) if train else np.array([])
    valid_cold = ~np.isin(valid_target, seen)
    test_cold = ~np.isin(test_target, seen)
    only_target = test_cold & ~np.isin(test_target, valid_target)
    cold = {
        "valid_targets_cold": int(valid_cold.sum()),
        "valid_items_cold": int(len(np.unique(valid_target[valid_cold]))),
        "test_targets_cold": int(test_cold.sum()),
        "test_items_cold": int(len(np.unique(test_target[test_cold]))),
        "test_items_only_target": int(len(np.unique(test_target[only_target]))),
    }
    return LeaveTwoOutSplit(
        users=sequences["user"].to_numpy()[kept],
        train=train,
        valid_target=valid_target,
        test_target=test_target,
        n_dropped_short=int((~kept).sum()),
        cold=cold,
    )
