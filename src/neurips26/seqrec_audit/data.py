"""Sequences for the audit (notes 4.2, 4.4): MovieLens-100k from the RecBole wheel, the leave-2-out split, k-core
filtering, item features, and the synthetic generator with the three shortcut knobs (branching, smoothness, history)."""

from __future__ import annotations

import csv
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd
import scipy.sparse as sp

# what the datasets are, light enough for the workflow's parse (re-exported here, where they were defined)
from neurips26.seqrec_audit.catalog import (  # noqa: F401
    ML100K_DIR,
    ML100K_FILES,
    REGIMES,
    SyntheticSpec,
    check_features,
    movielens100k_files,
    regime_spec,
)

# ---------------------------------------------------------------------------------------------------------------------
# MovieLens-100k (RecBole atomic files)


def read_atomic(path: str | Path) -> tuple[pd.DataFrame, dict[str, str]]:
    """A RecBole atomic file: tab-separated, header `name:type` (token, token_seq, float, float_seq).

    Returns the table with bare column names (every cell a string, "" where empty) and the {name: type} map.
    No quoting and no NA guessing: a title such as "NA" stays a title.
    """
    frame = pd.read_csv(path, sep="\t", dtype=str, keep_default_na=False, quoting=csv.QUOTE_NONE)
    types = {}
    for column in frame.columns:
        name, sep, kind = column.partition(":")
        if not sep:
            raise ValueError(f"{path}: header field {column!r} lacks a ':type' suffix")
        types[name] = kind
    frame.columns = list(types)
    return frame, types


def _require_columns(frame: pd.DataFrame, columns: list[str], what: str) -> None:
    missing = [c for c in columns if c not in frame.columns]
    if missing:
        raise ValueError(f"{what} lacks column(s) {missing}; has {list(frame.columns)}")


def _as_ids(tokens: pd.Series) -> np.ndarray:
    """Token ids as int64 when every token is a decimal integer (ML-100k), else as strings."""
    values = tokens.to_numpy(dtype=str)
    if len(values) and np.char.isdigit(values).all():
        return values.astype(np.int64)
    return values.astype(object)


def read_movielens100k(inter_path: str | Path, item_path: str | Path) -> tuple[pd.DataFrame, pd.DataFrame]:
    """ML-100k as (interactions[user, item, timestamp, row], items[item, genres, year, title]).

    `row` is the 0-based data line in the .inter file, the tie-break for equal timestamps (notes 4.4).
    `genres` is a list of genre names (the `class` field), `year` a nullable Int64 (item 267 has none).
    Missing or non-numeric timestamps raise ValueError with their count.
    """
    inter, _ = read_atomic(inter_path)
    _require_columns(inter, ["user_id", "item_id", "timestamp"], f"{inter_path}")
    timestamp = pd.to_numeric(inter["timestamp"].str.strip(), errors="coerce").to_numpy(dtype=np.float64)
    n_missing = int(np.isnan(timestamp).sum())
    if n_missing:
        raise ValueError(f"{inter_path}: {n_missing} of {len(inter)} interactions have no (numeric) timestamp")
    interactions = pd.DataFrame(
        {
            "user": _as_ids(inter["user_id"]),
            "item": _as_ids(inter["item_id"]),
            "timestamp": timestamp.astype(np.int64) if np.all(timestamp == np.round(timestamp)) else timestamp,
            "row": np.arange(len(inter), dtype=np.int64),
        }
    )

    item, _ = read_atomic(item_path)
    _require_columns(item, ["item_id", "movie_title", "release_year", "class"], f"{item_path}")
    items = pd.DataFrame(
        {
            "item": _as_ids(item["item_id"]),
            "genres": [genres.split() for genres in item["class"]],
            "year": pd.to_numeric(item["release_year"], errors="coerce").astype("Int64"),
            "title": item["movie_title"].to_numpy(dtype=object),
        }
    )
    if items["item"].duplicated().any():
        raise ValueError(f"{item_path}: duplicated item ids {items['item'][items['item'].duplicated()].tolist()[:5]}")
    return interactions, items


# ---------------------------------------------------------------------------------------------------------------------
# Sequences, k-core, split


def interactions_to_sequences(frame: pd.DataFrame) -> pd.DataFrame:
    """One row per user (ascending id): the items ordered by (timestamp, row).

    The sort is stable, so equal (timestamp, row) keys, or equal timestamps in a frame without `row`, keep the
    frame's order. Ties are common in ML-100k (notes 4.4), so the tie-break decides the last items, i.e. the targets.
    """
    _require_columns(frame, ["user", "item", "timestamp"], "interactions")
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
    _require_columns(frame, ["user", "item"], "interactions")
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
    """Leave-2-out split (notes 4.2, GraphRec `prepare/common.py`): for each kept user with sequence s,

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
    _require_columns(sequences, ["user", "items"], "sequences")
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


# ---------------------------------------------------------------------------------------------------------------------
# Item features


def _unit_rows(block: np.ndarray) -> np.ndarray:
    norms = np.linalg.norm(block, axis=1, keepdims=True)
    return block / np.where(norms > 0, norms, 1.0)


def item_feature_matrix_movielens(items: pd.DataFrame, title_min_df: int = 1) -> np.ndarray:
    """Quick-scale ML-100k item features (notes 4.4a), rows in `items` order, L2-normalised.

    Three blocks, each row-normalised so that each carries an equal share of the cosine: genre multi-hot, release
    decade one-hot (an "unknown" bucket for missing years), and title TF-IDF (scikit-learn defaults, l2 norm).
    A title with no token leaves its block at zero.
    """
    from sklearn.feature_extraction.text import TfidfVectorizer

    _require_columns(items, ["genres", "year", "title"], "items")
    genre_names = sorted({g for genres in items["genres"] for g in genres})
    genre_col = {g: j for j, g in enumerate(genre_names)}
    genre = np.zeros((len(items), len(genre_names)))
    for i, genres in enumerate(items["genres"]):
        genre[i, [genre_col[g] for g in genres]] = 1.0

    year = pd.to_numeric(items["year"], errors="coerce").astype("Float64")
    decade = np.where(year.isna(), -1, (year.fillna(0).to_numpy(dtype=np.float64) // 10) * 10).astype(np.int64)
    decades, decade_idx = np.unique(decade, return_inverse=True)
    decade_block = np.eye(len(decades))[decade_idx]

    titles = items["title"].fillna("").astype(str).tolist()
    tfidf = TfidfVectorizer(min_df=title_min_df).fit_transform(titles).toarray()

    features = _unit_rows(np.hstack([_unit_rows(genre), _unit_rows(decade_block), _unit_rows(tfidf)]))
    check_features(features, len(items))
    return features


# ---------------------------------------------------------------------------------------------------------------------
# Synthetic generator (notes 4.4a, [assumed] design operationalising the paper's three shortcuts)


def _sample_rows(cumulative: np.ndarray, rows: np.ndarray, uniforms: np.ndarray) -> np.ndarray:
    """Inverse-CDF draws from many categorical rows at once: `cumulative` is (R, n) with rows ending at exactly 1;
    returns, for each query, the column j with cum[row, j-1] <= u < cum[row, j]. Offsetting row r by r turns all rows
    into one sorted array, so a single searchsorted serves every query."""
    n = cumulative.shape[1]
    flat = (np.arange(len(cumulative))[:, None] + cumulative).ravel()
    index = np.searchsorted(flat, rows + uniforms, side="right")
    return np.minimum(index - rows * n, n - 1)


def generate(spec: SyntheticSpec) -> tuple[pd.DataFrame, np.ndarray, sp.csr_matrix]:
    """Synthetic sequences (notes 4.4a): returns sequences[user, items] (users 0..n_users-1, items 0..n_items-1),
    item features (n_items, dim) with unit rows, and the true transition kernel (n_items x n_items CSR, row-stochastic,
    exactly `branching` stored successors per row, never the item itself)."""
    rng = np.random.default_rng(spec.seed)
    n_items, n_users = spec.n_items, spec.n_users

    centres = _unit_rows(rng.standard_normal((spec.n_clusters, spec.dim)))
    cluster = rng.integers(spec.n_clusters, size=n_items)
    features = _unit_rows(centres[cluster] + spec.cluster_spread * rng.standard_normal((n_items, spec.dim)))

    # successor sets: m_i ~ Binomial(b, s) slots (at most `neighbours`) from a random subset of the feature
    # neighbours, the remaining b - m_i uniformly among all other items not chosen yet
    similarity = features @ features.T
    np.fill_diagonal(similarity, -np.inf)
    nearest = np.argpartition(-similarity, spec.neighbours - 1, axis=1)[:, : spec.neighbours]
    from_nearest = np.minimum(rng.binomial(spec.branching, spec.smoothness, size=n_items), spec.neighbours)
    nearest_rank = np.argsort(np.argsort(rng.random(nearest.shape), axis=1), axis=1)
    keys = rng.random((n_items, n_items))
    picked = nearest_rank < from_nearest[:, None]
    keys[np.nonzero(picked)[0], nearest[picked]] = -1.0
    np.fill_diagonal(keys, 2.0)
    successors = np.sort(np.argpartition(keys, spec.branching - 1, axis=1)[:, : spec.branching], axis=1)
    weights = rng.gamma(spec.dirichlet, size=successors.shape)
    weights = weights / weights.sum(axis=1, keepdims=True)
    indptr = np.arange(0, n_items * spec.branching + 1, spec.branching)
    kernel = sp.csr_matrix((weights.ravel(), successors.ravel(), indptr), shape=(n_items, n_items))
    kernel_cdf = np.cumsum(weights, axis=1)
    kernel_cdf[:, -1] = 1.0

    # users: z_u = normalised convex mix of two distinct cluster centres; p(i | z_u) ∝ exp(kappa f_i . z_u)
    first = rng.integers(spec.n_clusters, size=n_users)
    second = (first + rng.integers(1, max(spec.n_clusters, 2), size=n_users)) % spec.n_clusters
    mix = rng.random(n_users)[:, None]
    z = _unit_rows(mix * centres[first] + (1.0 - mix) * centres[second])
    logits = spec.kappa * (z @ features.T)
    preference = np.exp(logits - logits.max(axis=1, keepdims=True))
    preference_cdf = np.cumsum(preference, axis=1)
    preference_cdf /= preference_cdf[:, -1:]
    preference_cdf[:, -1] = 1.0

    lengths = spec.min_length + rng.poisson(spec.mean_extra_length, size=n_users)
    steps = int(lengths.max())
    user_rows = np.repeat(np.arange(n_users), steps)
    from_preference = _sample_rows(preference_cdf, user_rows, rng.random(n_users * steps)).reshape(n_users, steps)
    uniform_items = rng.integers(n_items, size=(n_users, steps))
    mode = rng.random((n_users, steps))
    is_noise = mode < spec.noise
    is_preference = ~is_noise & (mode < spec.noise + (1.0 - spec.noise) * spec.history)
    markov_uniforms = rng.random((n_users, steps))

    items = np.empty((n_users, steps), dtype=np.int64)
    items[:, 0] = from_preference[:, 0]
    for t in range(1, steps):
        column = _sample_rows(kernel_cdf, items[:, t - 1], markov_uniforms[:, t])
        markov = successors[items[:, t - 1], column]
        items[:, t] = np.where(
            is_noise[:, t], uniform_items[:, t], np.where(is_preference[:, t], from_preference[:, t], markov)
        )
    sequences = pd.DataFrame(
        {
            "user": np.arange(n_users, dtype=np.int64),
            "items": [row[:length].tolist() for row, length in zip(items, lengths)],
        }
    )
    return sequences, features, kernel
