"""Paper 10's rehearsal: what it cuts from the paper block, and fixture files in the real formats of its sources.

The rehearsal keeps every shape of the paper block (SASRec's and BERT4Rec's width, depth, heads and 50-item
windows; TIGER's 4-layer encoder-decoder, beam 20 and its RQ-VAE of 3 x 256 codes over 512-256-128 layers; the
synthetic regimes' 5,000 items, the 128-dimensional text features, the k-core and the TGH budgets) and cuts the
budgets: one epoch of each model and two of the RQ-VAE, micro-batches a quarter of the paper's (and twice that for
the memory extrapolation), and the users: 20 per synthetic regime and 20 per fixture dataset (the work functions
count the synthetic users, DATA_GROWTH the Amazon fixture's in the ranking jobs). TIGER trains on every prefix,
one example per transition through its 4-layer encoder-decoder, and each dataset's TIGER job runs twice (at both
micro-batches): its epochs are the rehearsal's largest work (1,000 synthetic users made a 35-minute epoch on 2
loaded cores; 100 synthetic and 40 fixture users a 10.9-minute rehearsal of this paper). ML-1M's fixture keeps
at least 20 ratings per user, as ML-1M; the Amazon fixture cannot shrink below its 150 items (over the 128 text
dimensions) x 5-core. It keeps every trained model (SASRec, BERT4Rec and TIGER are three code paths, not sizes of
one), seed 0, one synthetic regime with one replicate (the claims' runs; a sweep keeps one member of a list at
least), and one dataset per reader of real data: ML-1M and the largest Amazon category, CDs and Vinyl.

Fixtures (`fixtures`), each read by the paper's own readers (tests/test_seqrec_audit_rehearsal.py):
- `seqrec_audit/ml-1m.zip`: GroupLens's archive, folder ml-1m/ with ratings.dat (UserID::MovieID::Rating::Timestamp)
  and movies.dat (MovieID::Title (Year)::Genres), latin-1, and users.dat and README as in the real archive;
- `seqrec_audit/reviews_<Category>_5.json.gz`: SNAP's 2014 5-core reviews, gzip, one JSON object per line with
  reviewerID, asin, reviewerName, helpful, reviewText, overall, summary, unixReviewTime, reviewTime; every user
  and item with at least 5 reviews;
- `seqrec_audit/meta_<Category>.json.gz`: SNAP's 2014 metadata, gzip, one Python dict literal per line (asin,
  title, price, imUrl, related, salesRank, brand, categories, description), a few items without metadata as in
  the real files.
"""

from __future__ import annotations

import gzip
import io
import json
import zipfile

import numpy as np

from neurips26.common.rehearsal import Plan

PLAN = Plan(
    budgets={
        "synthetic.n_users": 20,
        "sasrec.epochs": 1,
        "sasrec.batch": 32,
        "bert4rec.epochs": 1,
        "bert4rec.batch": 32,
        "tiger.epochs": 1,
        "tiger.batch": 32,
        "tiger.valid_every": 1,
        "tiger.rqvae.epochs": 2,
        "tiger.rqvae.batch": 256,
    },
    sweeps={
        "datasets": lambda names: [n for n in names if n in ("shortcut_rich", "ml1m", "amazon_cds")] or names[:1],
        "replicates.datasets": lambda names: names[:1],
        "replicates.seeds": lambda seeds: seeds[:1],
        "trained.seeds": lambda seeds: seeds[:1],
    },
    micro_batch=("sasrec.batch", "bert4rec.batch", "tiger.batch", "tiger.rqvae.batch"),
    work={
        # prepare: the synthetic regimes' users (a real dataset's work is its data: DATA_GROWTH)
        "seqrec_audit_prepare": lambda cfg, wc: _synthetic(cfg, wc, cfg["synthetic"]["n_users"]),
        # every test user against every item
        "seqrec_audit_rank": lambda cfg, wc: _synthetic(
            cfg, wc, cfg["synthetic"]["n_users"] * cfg["synthetic"]["n_items"]
        ),
        "seqrec_audit_diagnostics": lambda cfg, wc: _synthetic(
            cfg, wc, cfg["synthetic"]["n_users"] * cfg["synthetic"]["n_items"]
        ),
        "seqrec_audit_semantic_ids": lambda cfg, wc: cfg["tiger"]["rqvae"]["epochs"],
        # epochs over the dataset's training windows, and TIGER's beam-search validations
        "seqrec_audit_train": lambda cfg, wc: (
            _synthetic(cfg, wc, cfg["synthetic"]["n_users"])
            * len(wc["seeds"].split("-"))
            * (
                cfg[wc["model"]]["epochs"]
                + (cfg["tiger"]["epochs"] // cfg["tiger"]["valid_every"] if wc["model"] == "tiger" else 0)
            )
        ),
        # the summaries read one table per dataset (replicates included) and job on it
        **{
            f"seqrec_audit_{step}": lambda cfg, wc: _result_files(cfg)
            for step in ("tables", "claims", "figures", "report")
        },
    },
    note=(
        "1 epoch per model (2 of the RQ-VAE), micro-batches 1/4 of the paper's, 20 synthetic users; datasets"
        " shortcut_rich (+ one replicate), ML-1M and Amazon CDs; seed 0; every model and shape the paper's"
    ),
)

# Rules whose cost grows faster than the data: rule -> (fixture records at size 1, real records), the records being
# users. The training-free methods and the diagnostics score every test user against every item (dense rows of a
# chunk of 4,096 users x all items): their time grows as users x items. fixtures(2) doubles the users and the Amazon
# items; the driver runs these rules again on it and extrapolates to the largest real source, Amazon CDs and Vinyl
# 5-core: 75,258 users, 64,443 items, 1,097,592 reviews (McAuley et al.'s 2014 Amazon dataset page at SNAP/UCSD,
# per-category 5-core counts). The train jobs rank the same way at evaluation, on top of training that is linear
# in the interactions.
BASE_USERS = 20  # users per fixture dataset at items=1 (TIGER trains on every prefix of their histories)
CDS_USERS = 75_258
DATA_GROWTH = {  # the Amazon CDs jobs only: the synthetic regimes do not grow with the fixtures
    f"{rule}:dataset=amazon_cds": (BASE_USERS, CDS_USERS) for rule in ("seqrec_audit_rank", "seqrec_audit_diagnostics")
}
SEED = 10
AMAZON_ITEMS = 150  # items per Amazon category at items=1: over text_dim (128), so the LSA features keep 128 dimensions
CATEGORIES = ("Beauty", "Sports_and_Outdoors", "Toys_and_Games", "CDs_and_Vinyl")
ML1M = "seqrec_audit/ml-1m.zip"
# pseudo-words for titles and descriptions: a vocabulary larger than text_dim, none an English stop word
WORDS = tuple(
    a + b + c
    for a in ("bra", "cle", "dru", "fo", "gan", "hel")
    for b in ("mo", "ti", "za", "ve", "lu")
    for c in ("n", "x", "rt", "sk", "mp", "l", "d")
)


def _synthetic(cfg: dict, wc: dict, work: float) -> float:
    """`work` for a synthetic regime (or a replicate of one), 1 for real data (whose size is the data's)."""
    from neurips26.seqrec_audit.experiment import dataset_kind

    return work if dataset_kind(wc["dataset"]) == "synthetic" else 1


def _result_files(cfg: dict) -> int:
    """Result tables of every dataset (replicates included): training-free, diagnostics and one per train job."""
    from neurips26.seqrec_audit import experiment

    datasets = len(cfg["datasets"]) + len(experiment.replicate_datasets(cfg))
    return datasets * (2 + len(experiment.trained_jobs(cfg)))


def _gzip(text: str) -> bytes:
    out = io.BytesIO()
    with gzip.GzipFile(fileobj=out, mode="wb", mtime=0) as handle:  # mtime 0: the same bytes on every build
        handle.write(text.encode("utf-8"))
    return out.getvalue()


def _histories(rng: np.random.Generator, n_users: int, n_items: int, low: int = 5, high: int = 14) -> list:
    """Per user, distinct item indices in time order: random walks on a ring of items (a shortcut TGH can use),
    every item drawn by at least 5 users (5-core)."""
    histories = []
    for _ in range(n_users):
        length = int(rng.integers(low, high + 1))
        start = int(rng.integers(n_items))
        steps = rng.integers(1, 4, size=length - 1)
        walk = (start + np.concatenate([[0], np.cumsum(steps)])) % n_items
        histories.append(list(dict.fromkeys(int(i) for i in walk)))
    for item in range(n_items):  # top up items with fewer than 5 users
        holders = [u for u, h in enumerate(histories) if item in h]
        for user in rng.permutation(n_users):
            if len(holders) >= 5:
                break
            if item not in histories[user]:
                histories[user].append(item)
                holders.append(user)
    return histories


def movielens1m_payload(n_users: int, seed: int = SEED) -> bytes:
    """GroupLens's ml-1m.zip for `n_users` users (ids from 1, at least 20 ratings each as in ML-1M)."""
    rng = np.random.default_rng(seed)
    n_movies = max(80, n_users // 2)
    movie_ids = np.sort(rng.choice(np.arange(1, 4 * n_movies), size=n_movies, replace=False))
    genres = ("Action", "Comedy", "Drama", "Children's", "Sci-Fi", "Film-Noir", "Romance")
    movies = [
        f"{mid}::{rng.choice(WORDS).title()} {rng.choice(WORDS).title()} ({int(rng.integers(1919, 2001))})::"
        + "|".join(sorted(set(rng.choice(genres, size=int(rng.integers(1, 4))))))
        for mid in movie_ids
    ]
    movies[1] = f"{movie_ids[1]}::Cité des enfants perdus, La (1995)::Adventure|Sci-Fi"  # latin-1 as in movies.dat
    ratings, users = [], []
    for user, history in enumerate(_histories(rng, n_users, n_movies, low=20, high=30), start=1):
        t = int(rng.integers(956703932, 1046454590))
        for item in history:
            t += int(rng.integers(1, 4000))
            ratings.append(f"{user}::{movie_ids[item]}::{int(rng.integers(1, 6))}::{t}")
        users.append(f"{user}::{rng.choice(['F', 'M'])}::{rng.choice([1, 18, 25, 35])}::{rng.integers(21)}::48067")
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, lines in (("movies.dat", movies), ("ratings.dat", ratings), ("users.dat", users)):
            info = zipfile.ZipInfo(f"ml-1m/{name}", date_time=(2003, 3, 1, 0, 0, 0))
            archive.writestr(info, ("\n".join(lines) + "\n").encode("latin-1"), zipfile.ZIP_DEFLATED)
        info = zipfile.ZipInfo("ml-1m/README", date_time=(2003, 3, 1, 0, 0, 0))
        archive.writestr(info, b"SUMMARY\n================================================================\n")
    return out.getvalue()


def amazon2014_payloads(category: str, n_users: int, seed: int = SEED) -> tuple[bytes, bytes]:
    """(reviews_<category>_5.json.gz, meta_<category>.json.gz) for `n_users` users in SNAP's 2014 formats."""
    rng = np.random.default_rng([seed, CATEGORIES.index(category)])
    n_items = AMAZON_ITEMS * max(1, n_users // BASE_USERS)
    asins = [f"B00{rng.integers(10**6, 10**7)}{chr(65 + i % 26)}" for i in range(n_items)]
    reviews = []
    for user, history in enumerate(_histories(rng, n_users, n_items, low=15, high=25)):
        reviewer = f"A{user:03d}{rng.integers(10**9, 10**10)}"
        t = int(rng.integers(1262304000, 1388534400))
        for item in history:
            t += int(rng.integers(86400, 30 * 86400))
            day = np.datetime64(t, "s").astype("datetime64[D]").item()
            reviews.append(
                json.dumps(
                    {
                        "reviewerID": reviewer,
                        "asin": asins[item],
                        "reviewerName": f"reader {user}",
                        "helpful": [int(rng.integers(3)), int(rng.integers(3, 6))],
                        "reviewText": " ".join(rng.choice(WORDS, size=12)),
                        "overall": float(rng.integers(1, 6)),
                        "summary": " ".join(rng.choice(WORDS, size=3)),
                        "unixReviewTime": t,
                        "reviewTime": f"{day.month:02d} {day.day}, {day.year}",
                    }
                )
            )
    meta = []
    for i, asin in enumerate(asins):
        if i % 10 == 9:  # items without metadata, which the reader keeps with an empty text
            continue
        record = {
            "asin": asin,
            "title": " ".join(rng.choice(WORDS, size=3)).title(),
            "price": round(float(rng.uniform(2, 80)), 2),
            "imUrl": f"http://ecx.images-amazon.com/images/I/{asin}.jpg",
            "related": {"also_bought": [asins[(i + 1) % n_items]], "bought_together": [asins[(i + 2) % n_items]]},
            "salesRank": {category.replace("_", " "): int(rng.integers(1, 10**6))},
            "categories": [[category.replace("_", " "), str(rng.choice(WORDS)).title()]],
        }
        if i % 3:
            record["brand"] = str(rng.choice(WORDS)).title()
        if i % 4:
            record["description"] = " ".join(rng.choice(WORDS, size=10))
        meta.append(repr(record))  # SNAP's metadata is Python dict literals, not JSON
    return _gzip("\n".join(reviews) + "\n"), _gzip("\n".join(meta) + "\n")


def fixtures(items: int = 1) -> dict[str, bytes]:
    """Registry path -> bytes of every seqrec_audit source: ML-1M and the four Amazon categories with
    BASE_USERS x `items` users each. Deterministic."""
    payloads = {ML1M: movielens1m_payload(BASE_USERS * items)}
    for category in CATEGORIES:
        reviews, meta = amazon2014_payloads(category, BASE_USERS * items)
        payloads[f"seqrec_audit/reviews_{category}_5.json.gz"] = reviews
        payloads[f"seqrec_audit/meta_{category}.json.gz"] = meta
    return payloads
