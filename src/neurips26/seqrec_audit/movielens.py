"""MovieLens-100k for the quick scale: its RecBole atomic files read (from the recbole wheel, see
:func:`.catalog.movielens100k_files`) into interactions and items, and its item features (genre, release decade,
title TF-IDF)."""

from __future__ import annotations

import csv
from pathlib import Path

import numpy as np
import pandas as pd

from neurips26.seqrec_audit.catalog import check_features, unit_rows
from neurips26.seqrec_audit.sequences import require_columns

__all__ = ["item_feature_matrix_movielens", "read_atomic", "read_movielens100k"]


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


def _as_ids(tokens: pd.Series) -> np.ndarray:
    """Token ids as int64 when every token is a decimal integer (ML-100k), else as strings."""
    values = tokens.to_numpy(dtype=str)
    if len(values) and np.char.isdigit(values).all():
        return values.astype(np.int64)
    return values.astype(object)


def read_movielens100k(inter_path: str | Path, item_path: str | Path) -> tuple[pd.DataFrame, pd.DataFrame]:
    """ML-100k as (interactions[user, item, timestamp, row], items[item, genres, year, title]).

    `row` is the 0-based data line in the .inter file, the tie-break for equal timestamps.
    `genres` is a list of genre names (the `class` field), `year` a nullable Int64 (item 267 has none).
    Missing or non-numeric timestamps raise ValueError with their count.
    """
    inter, _ = read_atomic(inter_path)
    require_columns(inter, ["user_id", "item_id", "timestamp"], f"{inter_path}")
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
    require_columns(item, ["item_id", "movie_title", "release_year", "class"], f"{item_path}")
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


def item_feature_matrix_movielens(items: pd.DataFrame, title_min_df: int = 1) -> np.ndarray:
    """Quick-scale ML-100k item features, rows in `items` order, L2-normalised.

    Three blocks, each row-normalised so that each carries an equal share of the cosine: genre multi-hot, release
    decade one-hot (an "unknown" bucket for missing years), and title TF-IDF (scikit-learn defaults, l2 norm).
    A title with no token leaves its block at zero.
    """
    from sklearn.feature_extraction.text import TfidfVectorizer

    require_columns(items, ["genres", "year", "title"], "items")
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

    features = unit_rows(np.hstack([unit_rows(genre), unit_rows(decade_block), unit_rows(tfidf)]))
    check_features(features, len(items))
    return features
