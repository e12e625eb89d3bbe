"""Paper 10's rehearsal (issue 38): the rehearsal block derived from the paper block passes the paper's own checks
and keeps every shape, and each fixture source (GroupLens's ml-1m.zip, SNAP's Amazon 2014 reviews and metadata) is
read by the paper's real readers and prepared into the shapes the paper-scale jobs see."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import pytest

from conftest import ROOT, assert_keeps_shapes
from neurips26.common.config import derived_rehearsal, load_yaml
from neurips26.common.rehearsal import work_ratio
from neurips26.seqrec_audit import experiment, rehearsal, sources
from neurips26.seqrec_audit.prepare import prepare_dataset

CONFIG = load_yaml(ROOT / "config/seqrec_audit.yaml")
SCHEMA = load_yaml(ROOT / "workflow/schemas/seqrec_audit.schema.yaml")
PAPER = CONFIG["paper"]
SHAPES = (
    "synthetic.n_items",
    "k_core",
    "min_length",
    "text_dim",
    "methods",
    "protocol",
    "tgh",
    "trained.models",
    *(f"{model}.{key}" for model in ("sasrec", "bert4rec") for key in ("d_model", "n_blocks", "n_heads", "maxlen")),
    *(f"tiger.{key}" for key in ("d_model", "n_layers", "n_heads", "ff", "max_items", "beam")),
    *(f"tiger.rqvae.{key}" for key in ("levels", "codebook_size", "latent_dim", "hidden")),
)


@pytest.mark.parametrize("factor", [1, 2])
def test_the_rehearsal_block_passes_the_papers_checks_and_keeps_its_shapes(factor):
    block = derived_rehearsal("seqrec_audit", CONFIG, SCHEMA, factor)
    experiment.check_config(block)
    assert_keeps_shapes(block, PAPER, SHAPES)
    assert block["datasets"] == ["shortcut_rich", "ml1m", "amazon_cds"]
    assert {experiment.dataset_kind(name) for name in block["datasets"]} == {"synthetic", "movielens1m", "amazon2014"}
    assert experiment.replicate_datasets(block) == ["shortcut_rich_seed1"]
    assert block["sasrec"]["batch"] == 32 * factor <= PAPER["sasrec"]["batch"]


@pytest.fixture(scope="module")
def files(tmp_path_factory) -> dict[str, Path]:
    folder = tmp_path_factory.mktemp("seqrec_fixtures")
    out = {}
    for path, payload in rehearsal.fixtures(1).items():
        out[path] = folder / path.rpartition("/")[2]
        out[path].write_bytes(payload)
    return out


def test_every_file_of_the_registry_folder_has_a_fixture(files):
    registry = load_yaml(ROOT / "config/sources.yaml")["seqrec_audit"]["files"]
    assert set(files) == {f"seqrec_audit/{name}" for name in registry}


SETTINGS = SimpleNamespace(
    seed=0,
    synthetic=None,
    k_core=PAPER["k_core"],
    min_length=PAPER["min_length"],
    text_dim=PAPER["text_dim"],
    embeddings=None,
)


def test_the_ml1m_fixture_is_read_and_prepared_as_movielens(files):
    archive = files[rehearsal.ML1M]
    interactions, items = sources.read_movielens1m(archive)
    assert interactions.columns.tolist() == ["user", "item", "timestamp", "row"]
    assert interactions.groupby("user").size().min() >= 20  # as in ML-1M
    assert "Cité des enfants perdus, La" in items["title"].tolist()  # latin-1 decoded
    ready = prepare_dataset("ml1m", SimpleNamespace(archive=str(archive)), SETTINGS)
    assert ready.split.n_users == rehearsal.BASE_USERS and ready.features.shape[0] == len(ready.item_ids)


def _roles(files: dict[str, Path], dataset: str) -> dict[str, str]:
    return {role: str(files[f"seqrec_audit/{name}"]) for role, name in experiment.source_files(dataset).items()}


def test_the_amazon_fixtures_are_read_as_snaps_5_core_files_and_prepared_with_full_width_text_features(files):
    for dataset in experiment.AMAZON_CATEGORIES:
        roles = _roles(files, dataset)
        interactions, items = sources.read_amazon2014(roles["reviews"], roles["meta"])
        assert (interactions.groupby("item").size() >= PAPER["k_core"]).all(), dataset  # 5-core, as SNAP's files
        assert (interactions.groupby("user").size() >= PAPER["k_core"]).all(), dataset
        assert (items["text"] == "").sum() > 0, dataset  # items without metadata, as in SNAP's files
    ready = prepare_dataset(
        "amazon_cds", SimpleNamespace(**_roles(files, "amazon_cds")), SETTINGS
    )  # the rehearsal's Amazon category
    assert ready.split.n_users == rehearsal.BASE_USERS
    assert ready.features.shape == (rehearsal.AMAZON_ITEMS, PAPER["text_dim"])  # the paper's 128 LSA dimensions


@pytest.mark.parametrize(
    ("rule", "wildcards", "expected"),
    [
        ("seqrec_audit_prepare", {"dataset": "shortcut_rich"}, 1000),
        ("seqrec_audit_prepare", {"dataset": "amazon_cds"}, 1),  # the data's own size: DATA_GROWTH
        ("seqrec_audit_rank", {"dataset": "shortcut_rich_seed1"}, 1000),
        ("seqrec_audit_semantic_ids", {"dataset": "ml1m"}, 250),
        ("seqrec_audit_train", {"dataset": "amazon_cds", "model": "sasrec", "seeds": "0"}, 200),
        ("seqrec_audit_train", {"dataset": "shortcut_rich", "model": "tiger", "seeds": "0"}, 1000 * 120 / 2),
    ],
)
def test_every_cut_rule_does_the_work_of_the_paper_block(rule, wildcards, expected):
    block = derived_rehearsal("seqrec_audit", CONFIG, SCHEMA)
    assert work_ratio(rehearsal.PLAN, rule, PAPER, block, wildcards) == pytest.approx(expected)
    assert rehearsal.DATA_GROWTH["seqrec_audit_rank:dataset=amazon_cds"] == (rehearsal.BASE_USERS, 75_258)
