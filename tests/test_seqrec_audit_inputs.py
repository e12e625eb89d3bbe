"""Paper 10's bad inputs: inconsistent configs stop before any job, naming the key; the paper scale plans its
pinned downloads; the paper-scale files (ML-1M archive, Amazon 2014 reviews and metadata, embedding files) are read
as delivered, and their defects (missing timestamps, missing rows, NaN, wrong row count) are reported."""

from __future__ import annotations

import copy
import gzip
import json
import zipfile

import numpy as np
import pytest
import yaml

from conftest import ROOT, expect_config_error, planned_jobs
from neurips26.common.sources import lookup
from neurips26.seqrec_audit import experiment, prepare, sources, trained

CONFIG = yaml.safe_load((ROOT / "config/seqrec_audit.yaml").read_text())


@pytest.mark.parametrize(
    "change, message",
    [
        (lambda c: c["tgh"]["variants"].update(tgh1=[[7, 2, 2]]), r"tgh.variants.tgh1: .*sum to 11, not K=10"),
        (lambda c: c["tgh"]["variants"].update(tgh2=[[5], [3, 1]]), r"tgh.variants.tgh2: .*sum to 9"),
        (lambda c: c["tgh"]["variants"].update(graph=[[10]]), r"tgh.variants.graph: variant names start with 'tgh'"),
        (lambda c: c.update(methods=["pop", "bert4rec", "tgh1"]), r"methods: \['bert4rec'\]"),
        (lambda c: c.update(methods=["pop", "markov1"]), "methods: no TGH variant"),
        (lambda c: c.update(datasets=["netflix"]), "datasets: unknown dataset 'netflix'"),
        (lambda c: c["sasrec"].update(d_model=30, n_heads=4), "sasrec: d_model 30 is not divisible by n_heads 4"),
        (
            lambda c: (c.pop("tiger"), c["trained"].update(models=["sasrec", "tiger"])),
            "trained.models: tiger has no `tiger:`",
        ),
        (lambda c: c["tiger"].update(d_model=100, n_heads=3), "tiger: d_model 100 is not divisible by n_heads 3"),
        (lambda c: c["synthetic"].update(n_items=2), "synthetic: "),
        (lambda c: c.update(replicates={"datasets": ["ml100k"], "seeds": [1]}), "replicates.datasets: ml100k is not"),
        (
            lambda c: c.update(
                datasets=["shortcut_rich", "ml100k"], replicates={"datasets": ["only_smooth"], "seeds": [1]}
            ),
            "replicates.datasets: only_smooth is not a synthetic regime among `datasets`",
        ),
        (
            lambda c: c.update(replicates={"datasets": ["shortcut_rich"], "seeds": [0, 1]}),
            "replicates.seeds: 0 is the scale's own `seed`",
        ),
    ],
)
def test_an_inconsistent_config_is_rejected_naming_the_problem(change, message):
    cfg = copy.deepcopy(CONFIG["quick"])
    change(cfg)
    with pytest.raises(ValueError, match=message):
        experiment.check_config(cfg)


def test_a_dataset_whose_files_are_neither_pinned_nor_locked_is_refused(monkeypatch):
    monkeypatch.setattr(experiment, "is_fetchable", lambda path: path != "seqrec_audit/meta_Toys_and_Games.json.gz")
    cfg = copy.deepcopy(CONFIG["quick"])
    cfg["datasets"] = [*cfg["datasets"], "amazon_toys"]
    with pytest.raises(ValueError, match=r"amazon_toys needs \['meta_Toys_and_Games.json.gz'\], which are neither"):
        experiment.check_config(cfg)
    monkeypatch.undo()
    experiment.check_config(cfg)  # Toys and Games is locked on first fetch (config/sources.yaml)


def test_every_shipped_scale_passes_the_checks_and_builds_its_settings():
    for scale in ("smoke", "quick", "paper"):
        experiment.check_config(CONFIG[scale])
    tgh = experiment.tgh_configs(CONFIG["quick"])
    assert tgh["tgh1"].budgets == ((7, 2, 1),) and tgh["tgh2"].budgets == ((5, 1), (3, 1))
    assert tgh["tgh1"].alpha == 0.5 and tgh["tgh1"].seed == 42 and tgh["tgh1"].pad == "random"
    spec = experiment.synthetic_spec(CONFIG["quick"], experiment.replicate_name("only_smooth", 7))
    assert (spec.seed, spec.branching, spec.smoothness) == (7, 60, 0.9)
    assert experiment.replicate_of("ml100k_seed1") == ("ml100k_seed1", None)  # only regimes have replicates
    cfg = {**CONFIG["quick"], "seed": 10}
    sasrec = trained.model_config(cfg, "sasrec", 2)
    assert sasrec.seed == 12 and sasrec.epochs == CONFIG["quick"]["sasrec"]["epochs"]


def test_a_bad_config_stops_snakemake_before_any_job(workflow_copy):
    path = workflow_copy / "config/seqrec_audit.yaml"
    data = yaml.safe_load(path.read_text())
    data["smoke"]["tgh"]["variants"]["tgh1"] = [[7, 2]]
    path.write_text(yaml.safe_dump(data))
    expect_config_error(
        workflow_copy,
        "results/smoke/seqrec_audit/report.md",
        must_contain=("config/seqrec_audit.yaml", "smoke", "tgh.variants.tgh1", "sum to 9"),
    )


def test_the_paper_scale_reads_its_real_datasets_through_the_pinned_downloads():
    jobs = planned_jobs(
        ROOT, *(f"results/paper/seqrec_audit/data/{d}/sequences.parquet" for d in ("ml1m", "amazon_beauty"))
    )
    assert jobs.get("download") == 3 and jobs.get("seqrec_audit_prepare") == 2
    quick = planned_jobs(ROOT, "--forceall", "results/quick/seqrec_audit/data/ml100k/sequences.parquet")
    assert "download" not in quick  # ML-100k is read from the recbole wheel
    for name in ("ml1m", "amazon_beauty", "amazon_sports", "amazon_cds", "amazon_toys"):
        for file in experiment.source_files(name).values():
            source = lookup(f"seqrec_audit/{file}")
            assert source.url.startswith("https://")
            assert source.known_hash.startswith("sha256:") if name != "amazon_toys" else source.lock


RATINGS = "1::10::5::978300760\n1::20::3::978302109\n1::30::4::978301968\n2::10::4::978300000\n"
MOVIES = "10::Toy Story (1995)::Animation|Children's|Comedy\n20::Heat (1995)::Action|Crime\n30::Alien (1979)::Horror\n"


def _ml1m_zip(path, ratings=RATINGS, movies=MOVIES):
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr("ml-1m/ratings.dat", ratings.encode("latin-1"))
        archive.writestr("ml-1m/movies.dat", movies.encode("latin-1"))
    return path


def test_movielens1m_is_read_in_the_schema_of_movielens100k(tmp_path):
    interactions, items = sources.read_movielens1m(_ml1m_zip(tmp_path / "ml-1m.zip"))
    assert interactions.columns.tolist() == ["user", "item", "timestamp", "row"]
    assert interactions["item"].tolist() == [10, 20, 30, 10] and interactions["row"].tolist() == [0, 1, 2, 3]
    toy = items.set_index("item").loc[10]
    assert (
        toy["title"] == "Toy Story" and toy["year"] == 1995 and toy["genres"] == ["Animation", "Children's", "Comedy"]
    )
    ready = prepare.prepare_interactions(interactions, items, k=1, min_length=3)
    assert ready.split.n_users == 1 and ready.split.n_dropped_short == 1  # user 2 has one rating
    assert ready.split.train[0].tolist() == [0] and ready.split.test_target.tolist() == [1]  # 10, 30, 20 by time


def test_movielens1m_with_a_missing_timestamp_is_refused_with_the_count(tmp_path):
    path = _ml1m_zip(tmp_path / "ml-1m.zip", ratings=RATINGS + "2::20::4::\n")
    with pytest.raises(ValueError, match="1 of 5 interactions have no"):
        sources.read_movielens1m(path)


def _gz(path, lines):
    with gzip.open(path, "wt", encoding="utf-8") as handle:
        handle.write("".join(line + "\n" for line in lines))
    return path


def test_amazon_2014_reviews_are_json_and_metadata_python_literals(tmp_path):
    reviews = _gz(
        tmp_path / "reviews.json.gz",
        [
            json.dumps({"reviewerID": u, "asin": a, "unixReviewTime": t})
            for u, a, t in [("A", "x1", 3), ("A", "x2", 1), ("B", "x1", 2)]
        ],
    )
    meta = _gz(
        tmp_path / "meta.json.gz",
        [repr({"asin": "x1", "title": "Red lipstick", "brand": "Acme", "categories": [["Beauty", "Makeup"]]})],
    )
    interactions, items = sources.read_amazon2014(reviews, meta)
    assert interactions["user"].tolist() == ["A", "A", "B"] and interactions["timestamp"].tolist() == [3, 1, 2]
    text = items.set_index("item")["text"]
    assert text["x1"] == "Red lipstick Acme Beauty Makeup" and text["x2"] == ""  # no metadata: empty, counted
    features = sources.item_feature_matrix_text(["red lipstick", "blue lipstick", "garden hose", ""], dim=2)
    assert features.shape == (4, 2) and np.allclose(np.linalg.norm(features[:3], axis=1), 1.0)
    assert not features[3].any()


def test_a_corrupt_metadata_line_is_refused_with_its_line_number(tmp_path):
    meta = _gz(tmp_path / "meta.json.gz", ["{'asin': 'x1'}", "{'asin': 'x2', 'title': "])
    reviews = _gz(tmp_path / "reviews.json.gz", [json.dumps({"reviewerID": "A", "asin": "x1", "unixReviewTime": 1})])
    with pytest.raises(ValueError, match="line 2 is neither JSON nor a Python literal"):
        sources.read_amazon2014(reviews, meta)


def test_amazon_reviews_without_a_time_are_refused(tmp_path):
    reviews = _gz(tmp_path / "reviews.json.gz", [json.dumps({"reviewerID": "A", "asin": "x1"})])
    meta = _gz(tmp_path / "meta.json.gz", [])
    with pytest.raises(ValueError, match=r"lack field\(s\) \['unixReviewTime'\]"):
        sources.read_amazon2014(reviews, meta)


def _embeddings(path, ids, rows):
    np.savez(path, item=np.asarray(ids), embedding=np.asarray(rows, dtype=float))
    return path


def test_embeddings_are_aligned_to_the_items_and_their_defects_are_named(tmp_path):
    good = _embeddings(tmp_path / "e.npz", ["b", "a", "c"], [[0, 1], [1, 0], [1, 1]])
    assert sources.load_embeddings(good, np.array(["a", "b"])).tolist() == [[1, 0], [0, 1]]
    with pytest.raises(ValueError, match="1 of 2 items have no embedding row"):
        sources.load_embeddings(good, np.array(["a", "z"]))
    short = _embeddings(tmp_path / "s.npz", ["a", "b"], [[0, 1]])
    with pytest.raises(ValueError, match="embedding row count must equal the item count"):
        sources.load_embeddings(short, np.array(["a"]))
    nan = _embeddings(tmp_path / "n.npz", ["a", "b"], [[0, 1], [np.nan, 1]])
    with pytest.raises(ValueError, match="non-finite|NaN|finite"):
        sources.load_embeddings(nan, np.array(["a", "b"]))
