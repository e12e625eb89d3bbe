"""Paper-scale datasets (among the paper's 14: Amazon Review Sports and CDs, named in its abstract, and ML-1M), read
into the schema of `movielens.read_movielens100k`:
interactions[user, item, timestamp, row] and items[item, ...] with the item text the features are built from.

* MovieLens-1M (`ml-1m.zip`, GroupLens): `ratings.dat` (UserID::MovieID::Rating::Timestamp) and `movies.dat`
  (MovieID::Title (Year)::Genre|Genre), latin-1.
* Amazon 2014 5-core reviews (McAuley et al., SNAP `reviews_<Category>_5.json.gz`: one JSON object per line with
  reviewerID, asin, unixReviewTime) and the category's metadata (`meta_<Category>.json.gz`: one Python dict literal
  per line, as SNAP documents: title, brand, categories, description).

Item features at paper scale: ML-1M as ML-100k (genres, decade, title TF-IDF); Amazon items by the TF-IDF of
title + brand + categories + description reduced to `dim` dimensions by truncated SVD (LSA). The paper embeds the
same text with flan-t5-xl; a precomputed embedding file can replace these features (`load_embeddings`).
"""

from __future__ import annotations

import ast
import gzip
import io
import json
import zipfile
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from neurips26.seqrec_audit.catalog import check_features

if TYPE_CHECKING:
    import pandas as pd

# pandas is imported inside the readers. The files' urls and pinned hashes (and why Toys and Games has none) are in
# the registry of pinned sources, config/sources.yaml (folder seqrec_audit), downloaded by rule `download`.


def _missing_timestamps(timestamp: pd.Series, what: str) -> np.ndarray:
    import pandas as pd

    values = pd.to_numeric(timestamp, errors="coerce")
    n_missing = int(values.isna().sum())
    if n_missing:
        raise ValueError(f"{what}: {n_missing} of {len(values)} interactions have no (numeric) timestamp")
    return values.to_numpy(np.int64)


def read_movielens1m(zip_path: str | Path) -> tuple[pd.DataFrame, pd.DataFrame]:
    """ML-1M as (interactions[user, item, timestamp, row], items[item, genres, year, title])."""
    import pandas as pd

    with zipfile.ZipFile(zip_path) as archive:
        names = {Path(n).name: n for n in archive.namelist()}
        for needed in ("ratings.dat", "movies.dat"):
            if needed not in names:
                raise ValueError(f"{zip_path}: no {needed} in the archive (has {sorted(names)[:6]})")
        ratings = archive.read(names["ratings.dat"]).decode("latin-1")
        movies = archive.read(names["movies.dat"]).decode("latin-1")
    rows = [line.split("::") for line in ratings.splitlines() if line.strip()]
    if any(len(r) != 4 for r in rows):
        raise ValueError(f"{zip_path}: ratings.dat lines must have 4 '::'-separated fields")
    ratings_frame = pd.DataFrame(rows, columns=["user", "item", "rating", "timestamp"])
    interactions = pd.DataFrame(
        {
            "user": ratings_frame["user"].astype(np.int64),
            "item": ratings_frame["item"].astype(np.int64),
            "timestamp": _missing_timestamps(ratings_frame["timestamp"], f"{zip_path}: ratings.dat"),
            "row": np.arange(len(ratings_frame), dtype=np.int64),
        }
    )
    movie_rows = [line.split("::") for line in movies.splitlines() if line.strip()]
    titles = pd.Series([r[1] for r in movie_rows])
    year = pd.to_numeric(titles.str.extract(r"\((\d{4})\)\s*$")[0], errors="coerce").astype("Int64")
    items = pd.DataFrame(
        {
            "item": [int(r[0]) for r in movie_rows],
            "genres": [r[2].split("|") if r[2] else [] for r in movie_rows],
            "year": year,
            "title": titles.str.replace(r"\s*\(\d{4}\)\s*$", "", regex=True),
        }
    )
    return interactions, items


def _records(path: str | Path) -> list[dict]:
    """One record per line of a gzipped file: JSON, or a Python dict literal (SNAP's 2014 metadata)."""
    records = []
    with gzip.open(path, "rt", encoding="utf-8") as handle:
        for number, line in enumerate(handle, start=1):
            if not line.strip():
                continue
            try:
                records.append(json.loads(line))
            except json.JSONDecodeError:
                try:
                    records.append(ast.literal_eval(line))
                except (ValueError, SyntaxError):
                    raise ValueError(f"{path}: line {number} is neither JSON nor a Python literal") from None
    return records


def _item_text(record: dict) -> str:
    categories = record.get("categories") or []
    flat = [c for group in categories for c in (group if isinstance(group, list) else [group])]
    parts = [
        record.get("title") or "",
        record.get("brand") or "",
        " ".join(map(str, flat)),
        record.get("description") or "",
    ]
    return " ".join(str(p) for p in parts if p)


def read_amazon2014(reviews_path: str | Path, meta_path: str | Path) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Amazon 2014 5-core reviews and metadata as (interactions[user, item, timestamp, row], items[item, text]).
    Items without metadata keep an empty text (counted in the log by the caller via `text == ""`)."""
    import pandas as pd

    reviews = pd.DataFrame(_records(reviews_path))
    missing = [c for c in ("reviewerID", "asin", "unixReviewTime") if c not in reviews.columns]
    if missing:
        raise ValueError(f"{reviews_path}: reviews lack field(s) {missing}")
    interactions = pd.DataFrame(
        {
            "user": reviews["reviewerID"].astype(str).to_numpy(object),
            "item": reviews["asin"].astype(str).to_numpy(object),
            "timestamp": _missing_timestamps(reviews["unixReviewTime"], f"{reviews_path}"),
            "row": np.arange(len(reviews), dtype=np.int64),
        }
    )
    meta = {str(r["asin"]): _item_text(r) for r in _records(meta_path) if "asin" in r}
    asins = np.unique(interactions["item"].to_numpy(str))
    items = pd.DataFrame({"item": asins.astype(object), "text": [meta.get(a, "") for a in asins]})
    return interactions, items


def item_feature_matrix_text(texts: list[str], dim: int, seed: int = 0) -> np.ndarray:
    """L2-normalised LSA features: TF-IDF (English stop words, sublinear tf) then truncated SVD to `dim`
    dimensions (fewer when the vocabulary is smaller). A text with no token gets a zero row."""
    from sklearn.decomposition import TruncatedSVD
    from sklearn.feature_extraction.text import TfidfVectorizer

    tfidf = TfidfVectorizer(stop_words="english", sublinear_tf=True, min_df=1).fit_transform(
        [t if t else "" for t in texts]
    )
    dim = max(1, min(dim, tfidf.shape[1] - 1, len(texts) - 1))
    reduced = TruncatedSVD(n_components=dim, random_state=seed).fit_transform(tfidf)
    norms = np.linalg.norm(reduced, axis=1, keepdims=True)
    features = reduced / np.where(norms > 0, norms, 1.0)
    check_features(features, len(texts))
    return features


def load_embeddings(path: str | Path, item_ids: np.ndarray) -> np.ndarray:
    """Precomputed item embeddings (an .npz with `item`, the source ids, and `embedding`, one row each), ordered
    as `item_ids`. Raises when an item has no row, when ids repeat, or on NaN/inf rows."""
    import pandas as pd

    with np.load(io.BytesIO(Path(path).read_bytes()), allow_pickle=False) as data:
        if "item" not in data or "embedding" not in data:
            raise ValueError(f"{path}: needs arrays 'item' and 'embedding', has {list(data.keys())}")
        ids, embedding = data["item"].astype(str), data["embedding"]
    if embedding.ndim != 2 or len(embedding) != len(ids):
        raise ValueError(
            f"{path}: {len(ids)} item ids but embedding of shape {embedding.shape}: the embedding row "
            f"count must equal the item count"
        )
    if len(np.unique(ids)) != len(ids):
        raise ValueError(f"{path}: repeated item ids")
    position = pd.Index(ids).get_indexer(np.asarray(item_ids).astype(str))
    if (position < 0).any():
        raise ValueError(
            f"{path}: {int((position < 0).sum())} of {len(item_ids)} items have no embedding row, "
            f"e.g. {np.asarray(item_ids)[position < 0][:3].tolist()}"
        )
    features = embedding[position].astype(np.float64)
    check_features(features, len(item_ids))
    return features
