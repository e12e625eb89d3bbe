"""TIGER baseline (generative retrieval over semantic IDs): the RQ-VAE and collision indices, the
prefix trie and constrained beam search, that the recommender learns, determinism and the kept
epoch. Tiny models only (d = 32, one layer), so the file runs in seconds."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest
import torch

from neurips26.seqrec_audit import tiger as tiger_module
from neurips26.seqrec_audit.metrics import metrics_from_topk
from neurips26.seqrec_audit.semantic_ids import RQVAEConfig, train_rqvae, unique_semantic_ids
from neurips26.seqrec_audit.tiger import (
    TIGER,
    SemanticTrie,
    TIGERConfig,
    log_prob_tiger,
    recommend_tiger,
    train_tiger,
    transition_windows,
)

TINY = TIGERConfig(
    d_model=32, n_layers=1, n_heads=2, ff=64, dropout=0.0, max_items=5, lr=3e-3, batch=32, epochs=1, beam=10
)
SMALL_RQ = RQVAEConfig(levels=3, codebook_size=8, latent_dim=8, hidden=(16,), epochs=5, batch=64)
CYCLE = 12  # items 0..11, each followed by the next one mod 12
# 12 items on a 3 x 2 x 1 code grid, each tuple shared by two items: the 4th token separates them
IDS = unique_semantic_ids(
    np.stack([np.arange(CYCLE) % 3, (np.arange(CYCLE) // 3) % 2, np.zeros(CYCLE, dtype=np.int64)], axis=1)
)


def cycle_sequences(n: int, length: int, seed: int = 0) -> list[np.ndarray]:
    starts = np.random.default_rng(seed).integers(CYCLE, size=n)
    return [(start + np.arange(length)) % CYCLE for start in starts]


def random_model(ids: np.ndarray, seed: int = 0) -> TIGER:
    torch.manual_seed(seed)
    model = TIGER([int(v) + 1 for v in ids.max(axis=0)], replace(TINY, dropout=0.1))
    with torch.no_grad():  # spread the biases so no level's distribution is near uniform
        for param in model.parameters():
            if param.dim() == 1:
                param.normal_(0.0, 1.0)
    return model.eval()


def clusters(n_per: int = 15, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """Four tight, well-separated clusters in 16-D."""
    rng = np.random.default_rng(seed)
    centres = 20.0 * np.eye(4, 16)
    label = np.repeat(np.arange(4), n_per)
    return (centres[label] + 0.1 * rng.normal(size=(label.size, 16))).astype(np.float32), label


# --------------------------------------------------------------------------------------------------
# Semantic IDs


def test_rqvae_codes_are_in_range_and_the_run_is_reproducible():
    features, _ = clusters()
    before = torch.get_rng_state()
    codes, rows = train_rqvae(features, SMALL_RQ)
    assert torch.equal(torch.get_rng_state(), before)  # the caller's torch RNG is untouched
    assert codes.shape == (60, 3) and codes.dtype == np.int64
    assert codes.min() >= 0 and codes.max() < 8
    assert [r["epoch"] for r in rows] == [1, 2, 3, 4, 5]
    assert all(np.isfinite(r["loss"]) and 0 < r["unique_share"] <= 1 for r in rows)
    again, rows_again = train_rqvae(features, SMALL_RQ)
    np.testing.assert_array_equal(again, codes)
    strip = lambda rs: [{k: v for k, v in r.items() if k != "seconds"} for r in rs]  # noqa: E731
    assert strip(rows_again) == strip(rows)


def test_separated_clusters_get_distinct_first_codes_and_equal_items_equal_tuples():
    features, label = clusters()
    features[1] = features[0]  # two items with identical features
    codes, _ = train_rqvae(features, replace(SMALL_RQ, codebook_size=4))
    first = [set(codes[label == c, 0]) for c in range(4)]
    assert all(len(s) == 1 for s in first) and len(set().union(*first)) == 4
    assert codes[0].tolist() == codes[1].tolist()
    ids = unique_semantic_ids(codes)
    assert ids[0, :3].tolist() == ids[1, :3].tolist() and ids[0, 3] != ids[1, 3]
    assert len(np.unique(ids, axis=0)) == len(ids)


def test_small_catalogs_clip_the_codebooks_and_bad_features_are_refused():
    lines = []
    codes, _ = train_rqvae(np.random.default_rng(0).normal(size=(5, 4)), replace(SMALL_RQ, epochs=1), log=lines.append)
    assert codes.max() < 5 and "clipped from 8 to 5" in lines[0]
    with pytest.raises(ValueError, match="finite"):
        train_rqvae(np.array([[0.0, np.nan]]), SMALL_RQ)
    with pytest.raises(ValueError, match="2-D"):
        train_rqvae(np.zeros(4), SMALL_RQ)


def test_unique_semantic_ids_number_collisions_in_item_order():
    codes = np.array([[1, 2], [0, 0], [1, 2], [1, 2], [0, 1]])
    assert unique_semantic_ids(codes).tolist() == [[1, 2, 0], [0, 0, 0], [1, 2, 1], [1, 2, 2], [0, 1, 0]]
    many = np.random.default_rng(0).integers(3, size=(500, 2))
    ids = unique_semantic_ids(many)
    assert len(np.unique(ids, axis=0)) == 500 and (ids[:, :2] == many).all()
    assert unique_semantic_ids(np.zeros((0, 3), dtype=np.int64)).shape == (0, 4)


# --------------------------------------------------------------------------------------------------
# Trie and constrained beam search


def test_beam_search_returns_distinct_real_items_and_pads_when_there_are_fewer():
    # 5 items scattered over a 4 x 4 x 3 code space: most prefixes lead nowhere
    ids = np.array([[0, 0, 0], [0, 3, 1], [2, 1, 2], [3, 3, 0], [3, 3, 2]])
    model = random_model(ids)
    histories = [np.array([0]), np.array([1, 2, 3, 4]), np.array([4, 4])]
    top = recommend_tiger(model, ids, histories, k=8, beam=10)
    assert top.shape == (3, 8) and top.dtype == np.int64
    assert (top[:, 5:] == -1).all() and sorted(top[0, :5]) == [0, 1, 2, 3, 4]
    for row in top:
        real = row[row >= 0]
        assert len(set(real)) == len(real) == 5
    assert recommend_tiger(model, ids, histories[:0], k=3).shape == (0, 3)
    with pytest.raises(ValueError, match="beam >= k"):
        recommend_tiger(model, ids, histories, k=5, beam=4)
    with pytest.raises(ValueError, match="unique_semantic_ids"):
        SemanticTrie(np.array([[0, 1], [0, 1]]), width=2)


def test_wide_beams_rank_exactly_by_the_constrained_probability():
    model = random_model(IDS, seed=3)
    histories = [np.array([5]), np.arange(9) % CYCLE, np.array([3, 3, 7])]
    every = np.tile(np.arange(CYCLE), (3, 1))
    logp = log_prob_tiger(model, IDS, histories, every)
    np.testing.assert_allclose(np.exp(logp).sum(axis=1), 1.0, rtol=1e-5)  # a distribution over items
    # candidates scored together (one folded decoder sequence) or one by one agree
    for item in (0, 7):
        single = log_prob_tiger(model, IDS, histories, every[:, item : item + 1])[:, 0]
        np.testing.assert_allclose(single, logp[:, item], rtol=1e-5, atol=1e-5)
    top = recommend_tiger(model, IDS, histories, k=CYCLE, beam=CYCLE)
    np.testing.assert_array_equal(top, np.argsort(-logp, axis=1, kind="stable"))
    # a user's list does not depend on the other users in its batch (padding, length sorting)
    alone = recommend_tiger(model, IDS, histories[2:], k=5, beam=CYCLE)
    np.testing.assert_array_equal(alone[0], top[2, :5])
    # narrow beams still return real, distinct items
    narrow = recommend_tiger(model, IDS, histories, k=3, beam=3)
    assert ((narrow >= 0) & (narrow < CYCLE)).all() and all(len(set(r)) == 3 for r in narrow)


def test_transition_windows_hold_each_transition_once():
    inputs, targets = transition_windows([np.arange(5), np.array([9]), np.array([7, 8])], 10, 3)
    assert inputs.tolist() == [[0, 0, 1], [0, 1, 2], [1, 2, 3], [2, 3, 4], [0, 0, 8]]
    assert targets.tolist() == [1, 2, 3, 4, 8]
    with pytest.raises(ValueError, match="two or more items"):
        transition_windows([np.array([1])], 10, 3)


# --------------------------------------------------------------------------------------------------
# Training


def test_learns_a_deterministic_cycle_to_full_recall_at_1():
    model, rows = train_tiger(cycle_sequences(60, 8), IDS, None, None, replace(TINY, epochs=10))
    assert rows[-1]["train_loss"] < 0.1 < rows[0]["train_loss"]
    assert rows[-1]["tokens"] == 60 * 7 and rows[-1]["best"]
    histories = [h for n in range(1, 6) for h in cycle_sequences(6, n, seed=n)]
    targets = np.array([(h[-1] + 1) % CYCLE for h in histories])
    top = recommend_tiger(model, IDS, histories, k=1, beam=4)
    assert metrics_from_topk(top, targets, ks=(1,))["Recall@1"] == 1.0


def test_same_seed_same_run_and_the_best_validation_epoch_is_kept():
    train = cycle_sequences(30, 6)
    histories = cycle_sequences(10, 4, seed=2)
    targets = np.array([(h[-1] + 1) % CYCLE for h in histories])
    config = replace(TINY, dropout=0.2, lr=1e-2, epochs=8)  # NDCG@10 peaks at epoch 7
    before = torch.get_rng_state()
    first, rows = train_tiger(train, IDS, histories, targets, config)
    assert torch.equal(torch.get_rng_state(), before)
    second, rows_again = train_tiger(train, IDS, histories, targets, config)

    def strip(rs):
        return [{k: v for k, v in r.items() if k not in ("seconds", "tokens_per_s")} for r in rs]

    assert strip(rows) == strip(rows_again)
    for name, value in first.state_dict().items():
        assert torch.equal(value, second.state_dict()[name]), name
    _, rows_other = train_tiger(train, IDS, histories, targets, replace(config, seed=1))
    assert rows_other[0]["train_loss"] != rows[0]["train_loss"]

    assert sum(r["best"] for r in rows) == 1
    best = next(r for r in rows if r["best"])
    assert best["valid_ndcg10"] == max(r["valid_ndcg10"] for r in rows)
    assert all(r["valid_nll"] > 0 for r in rows)
    kept = metrics_from_topk(recommend_tiger(first, IDS, histories), targets, ks=(10,))
    assert kept["NDCG@10"] == pytest.approx(best["valid_ndcg10"], abs=1e-12)
    # the kept weights are those after the best epoch: a run stopped there has the same ones
    stopped, _ = train_tiger(train, IDS, None, None, replace(config, epochs=best["epoch"]))
    for name, value in first.state_dict().items():
        assert torch.equal(value, stopped.state_dict()[name]), name


def test_validation_every_other_epoch_and_always_at_the_last():
    histories = cycle_sequences(6, 3, seed=4)
    targets = np.array([(h[-1] + 1) % CYCLE for h in histories])
    _, rows = train_tiger(cycle_sequences(20, 5), IDS, histories, targets, replace(TINY, epochs=3, valid_every=2))
    assert [np.isnan(r["valid_ndcg10"]) for r in rows] == [True, False, False]
    assert not rows[0]["best"]


def test_a_non_finite_loss_names_its_epoch(monkeypatch):
    calls = []
    real_cross_entropy = tiger_module.F.cross_entropy

    def nan_from_third_call(*args, **kwargs):
        calls.append(1)
        loss = real_cross_entropy(*args, **kwargs)
        return loss * float("nan") if len(calls) >= 3 else loss

    monkeypatch.setattr(tiger_module.F, "cross_entropy", nan_from_third_call)
    # 16 sequences of 3 items: 32 examples, one batch per epoch
    with pytest.raises(FloatingPointError, match=r"cross-entropy is nan at epoch 3, batch 1"):
        train_tiger(cycle_sequences(16, 3), IDS, None, None, replace(TINY, epochs=5))


# --------------------------------------------------------------------------------------------------
# Settings


@pytest.mark.parametrize(
    "field, value",
    [
        ("d_model", 10),
        ("n_layers", 0),
        ("dropout", 1.0),
        ("lr", 0.0),
        ("epochs", -1),
        ("beam", 0),
        ("valid_every", 0),
        ("max_items", 2.5),
    ],
)
def test_tiger_config_refuses_bad_settings(field, value):
    overrides = {"n_heads": 4} if field == "d_model" else {}
    with pytest.raises(ValueError, match=field if field != "d_model" else "divisible"):
        TIGERConfig(**{field: value, **overrides})


@pytest.mark.parametrize(
    "field, value",
    [
        ("levels", 0),
        ("codebook_size", 0),
        ("hidden", (0,)),
        ("hidden", 8),
        ("beta", -1.0),
        ("lr", 0),
        ("epochs", -1),
        ("batch", 1.5),
    ],
)
def test_rqvae_config_refuses_bad_settings(field, value):
    with pytest.raises(ValueError, match=field):
        RQVAEConfig(**{field: value})
    assert RQVAEConfig(hidden=[32, 16]).hidden == (32, 16)  # a YAML list is kept as a tuple


def test_training_inputs_are_checked():
    histories = cycle_sequences(2, 3)
    with pytest.raises(ValueError, match="3 validation targets for 2 histories"):
        train_tiger(cycle_sequences(4, 4), IDS, histories, np.array([1, 2, 3]), TINY)
    with pytest.raises(ValueError, match="both"):
        train_tiger(cycle_sequences(4, 4), IDS, histories, None, TINY)
    with pytest.raises(ValueError, match="beam=5 < 10"):
        train_tiger(cycle_sequences(4, 4), IDS, histories, np.array([1, 2]), replace(TINY, beam=5))
    with pytest.raises(ValueError, match="unique_semantic_ids"):
        train_tiger(cycle_sequences(4, 4), IDS[:, :3], None, None, TINY)
