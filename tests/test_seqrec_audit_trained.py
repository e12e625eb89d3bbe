"""Paper 10's trained models behind one interface: fitted on a prepared dataset, evaluated under the protocol of
the training-free methods, with their settings read from the config."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest
import yaml

from conftest import ROOT
from neurips26.seqrec_audit import artifacts, catalog, prepare, trained

CONFIG = yaml.safe_load((ROOT / "config/seqrec_audit.yaml").read_text())


@pytest.fixture(scope="module")
def rich():
    return prepare.prepare_synthetic(catalog.regime_spec("shortcut_rich", n_users=300, n_items=120), min_length=3)


@pytest.mark.parametrize("name", ["sasrec", "bert4rec"])
def test_a_score_matrix_model_is_fitted_and_evaluated_under_the_protocol(rich, name):
    config = replace(trained.model_config(CONFIG["quick"], name, 0), d_model=32, n_blocks=1, maxlen=20, epochs=2)
    fitted = trained.fit_and_evaluate(name, rich, config, {"exclude_history": False, "tie_break": "pessimistic"})
    assert set(fitted.metrics) == {f"{m}@{k}" for m in ("Recall", "NDCG") for k in (1, 5, 10)}
    assert all(0 <= v <= 1 for v in fitted.metrics.values())
    assert len(fitted.epochs) == config.epochs and sum(row["best"] for row in fitted.epochs) == 1
    assert fitted.train_seconds > 0 and fitted.inference_seconds > 0
    masked = trained.fit_and_evaluate(name, rich, config, {"exclude_history": True, "tie_break": "pessimistic"})
    # the same weights (same seed): removing history items moves the other targets up, and a target that repeats a
    # history item becomes a miss, as it does for the training-free methods
    repeats = np.mean([t in h for t, h in zip(rich.split.test_target, rich.split.test_history)])
    assert 0 < repeats < 1
    assert masked.metrics["Recall@10"] <= 1 - repeats + 1e-12
    assert masked.metrics["Recall@10"] >= fitted.metrics["Recall@10"] - repeats - 1e-12


def test_model_settings_come_from_their_config_block_with_the_scale_seed():
    cfg = {**CONFIG["quick"], "seed": 5}
    sasrec, bert = trained.model_config(cfg, "sasrec", 1), trained.model_config(cfg, "bert4rec", 1)
    assert sasrec.seed == bert.seed == 6
    assert bert.mask_prob == CONFIG["quick"]["bert4rec"]["mask_prob"] and sasrec.maxlen == cfg["sasrec"]["maxlen"]
    with pytest.raises(ValueError, match="unknown trained model 'gru4rec'"):
        trained.model_config(cfg, "gru4rec", 0)


def test_history_items_are_dropped_from_top_k_lists_keeping_their_order():
    lists = np.array([[3, 1, 2, -1], [0, 1, 2, 3], [4, 4, -1, -1]])
    histories = [np.array([1]), np.array([0, 3]), np.array([2])]
    out = trained.drop_history(lists, histories, n_items=5, k=3)
    assert out.tolist() == [[3, 2, -1], [1, 2, -1], [4, 4, -1]]
    assert trained.drop_history(lists[:, :2], histories, n_items=5, k=3).shape == (3, 3)


def test_tiger_is_fitted_on_semantic_ids_that_survive_their_file(rich, tmp_path):
    from neurips26.seqrec_audit.semantic_ids import train_rqvae, unique_semantic_ids

    codes, _ = train_rqvae(rich.features, trained.rqvae_config(CONFIG["smoke"]))
    ids = unique_semantic_ids(codes)
    path = tmp_path / "ids.parquet"
    artifacts.semantic_id_table(ids).to_parquet(path)
    assert np.array_equal(artifacts.load_semantic_ids(path, rich.n_items), ids)
    config = trained.model_config(CONFIG["smoke"], "tiger", 0)
    for exclude in (False, True):
        fitted = trained.fit_and_evaluate(
            "tiger", rich, config, {"exclude_history": exclude, "tie_break": "pessimistic"}, semantic_ids=ids
        )
        assert all(0 <= v <= 1 for v in fitted.metrics.values()) and len(fitted.epochs) == config.epochs
    with pytest.raises(ValueError, match="TIGER needs the items' semantic IDs"):
        trained.fit_and_evaluate("tiger", rich, config, {"exclude_history": False, "tie_break": "pessimistic"})


def test_semantic_id_files_with_missing_items_or_shared_ids_are_refused(tmp_path):
    path = tmp_path / "ids.parquet"
    artifacts.semantic_id_table(np.array([[0, 1, 0], [0, 1, 0], [2, 0, 0]])).to_parquet(path)
    with pytest.raises(ValueError, match="not unique"):
        artifacts.load_semantic_ids(path, 3)
    with pytest.raises(ValueError, match="for 3 items, expected items 0..3"):
        artifacts.load_semantic_ids(path, 4)
