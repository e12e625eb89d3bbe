"""Paper 10's prepared datasets: contiguous item ids, features aligned with them, counts carried through."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest

from neurips26.seqrec_audit import catalog, movielens, prepare
from neurips26.seqrec_audit.artifacts import load_prepared


def test_reindexing_keeps_order_and_maps_to_contiguous_ids():
    sequences = pd.DataFrame({"user": [1, 2], "items": [[30, 10, 30], [20, 10]]})
    remapped, item_ids = prepare.reindex_items(sequences)
    assert item_ids.tolist() == [10, 20, 30]
    assert remapped["items"].tolist() == [[2, 0, 2], [1, 0]]


def test_movielens_is_prepared_with_features_aligned_to_the_kept_items():
    files = catalog.movielens100k_files()
    interactions, items = movielens.read_movielens100k(files["inter"], files["item"])
    ready = prepare.prepare_interactions(interactions, items, k=5, min_length=3)
    assert ready.n_items == 1349 and ready.features.shape[0] == 1349  # 5-core keeps 1,349 of 1,682 items
    assert ready.split.n_users == 943 and ready.counts["interactions_after"] == 99287
    every_item = np.concatenate([*ready.split.train, ready.split.valid_target, ready.split.test_target])
    assert every_item.min() >= 0 and every_item.max() < ready.n_items
    # the features of contiguous item j are those of its source item
    full = movielens.item_feature_matrix_movielens(items.set_index("item").loc[ready.item_ids].reset_index())
    assert np.allclose(ready.features, full)


def test_items_without_a_record_are_refused():
    interactions = pd.DataFrame({"user": [1] * 3, "item": [5, 6, 7], "timestamp": [1, 2, 3], "row": [0, 1, 2]})
    items = pd.DataFrame({"item": [5, 6], "genres": [["a"], ["b"]], "year": [1990, 1991], "title": ["x", "y"]})
    with pytest.raises(ValueError, match="1 interacted items have no item record"):
        prepare.prepare_interactions(interactions, items, k=1, min_length=3)


def test_a_synthetic_regime_is_prepared_with_its_counts():
    ready = prepare.prepare_synthetic(catalog.regime_spec("shortcut_rich", n_users=200, n_items=100), min_length=3)
    assert ready.n_items == 100 and ready.features.shape == (100, 16)
    assert ready.split.n_users + ready.counts["users_too_short"] == 200
    assert set(ready.counts) >= {"test_targets_cold", "valid_targets_cold"}


def test_a_prepared_dataset_survives_its_files(tmp_path):
    ready = prepare.prepare_synthetic(catalog.regime_spec("shortcut_poor", n_users=60, n_items=80, seed=3), 3)
    sequences, items, counts = prepare.to_frames(ready)
    paths = {
        "sequences": tmp_path / "s.parquet",
        "item_table": tmp_path / "i.parquet",
        "counts": tmp_path / "c.parquet",
        "features": tmp_path / "f.npy",
    }
    sequences.to_parquet(paths["sequences"])
    items.to_parquet(paths["item_table"])
    counts.to_parquet(paths["counts"])
    np.save(paths["features"], ready.features)
    back = load_prepared(SimpleNamespace(**paths))
    assert back.n_items == ready.n_items and np.array_equal(back.features, ready.features)
    assert back.counts == ready.counts and back.split.cold == ready.split.cold
    assert all(np.array_equal(a, b) for a, b in zip(back.split.train, ready.split.train))
    assert all(np.array_equal(a, b) for a, b in zip(back.split.test_history, ready.split.test_history))
    assert np.array_equal(back.split.test_target, ready.split.test_target)


def test_features_that_do_not_match_the_items_are_refused_on_reading():
    ready = prepare.prepare_synthetic(catalog.regime_spec("shortcut_rich", n_users=30, n_items=70), 3)
    sequences, items, counts = prepare.to_frames(ready)
    with pytest.raises(ValueError, match="rows but there are 70 items"):
        prepare.from_frames(sequences, items, ready.features[:-1], counts)
    nan = ready.features.copy()
    nan[5, 0] = np.nan
    with pytest.raises(ValueError, match="finite|NaN"):
        prepare.from_frames(sequences, items, nan, counts)


def test_prepare_dataset_dispatches_a_synthetic_name_to_the_generator():
    settings = SimpleNamespace(
        seed=0, synthetic={"n_users": 60, "n_items": 80}, min_length=3, k_core=5, text_dim=8, embeddings=None
    )
    ready = prepare.prepare_dataset("shortcut_rich", SimpleNamespace(), settings)
    spec = catalog.regime_spec("shortcut_rich", seed=0, n_users=60, n_items=80)
    expected = prepare.prepare_synthetic(spec, 3)
    np.testing.assert_array_equal(ready.features, expected.features)
    assert ready.counts == expected.counts


def test_read_real_refuses_an_unknown_kind():
    with pytest.raises(ValueError, match="unknown kind of dataset 'gowalla'"):
        prepare.read_real("gowalla", SimpleNamespace(), 8, 0)
