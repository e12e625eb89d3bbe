"""BERT4Rec (paper 10's bidirectional baseline): bidirectional attention, padding invariance, the
Cloze masking, that it can learn, determinism, divergence errors and the score matrix. Tiny models
only (d = 16, maxlen <= 8), so the file runs in seconds."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest
import torch

from neurips26.seqrec_audit import seeds as seeds_module
from neurips26.seqrec_audit.bert4rec import (
    BERT4Rec,
    BERT4RecConfig,
    cloze_masked,
    item_windows,
    score_bert4rec,
    train_bert4rec,
)
from neurips26.seqrec_audit.metrics import metrics_from_scores
from neurips26.seqrec_audit.sasrec import IGNORE

TINY = BERT4RecConfig(
    d_model=16, n_blocks=2, n_heads=2, maxlen=8, dropout=0.0, mask_prob=0.3, lr=1e-2, batch=16, epochs=1
)
CYCLE = 7  # items 0..6, each followed by the next one mod 7


def cycle_sequences(n: int, length: int, seed: int = 0) -> list[np.ndarray]:
    """Segments of the cycle 0 -> 1 -> ... -> 6 -> 0 with random starts."""
    starts = np.random.default_rng(seed).integers(CYCLE, size=n)
    return [(start + np.arange(length)) % CYCLE for start in starts]


def eval_model(config: BERT4RecConfig = TINY, n_items: int = 20, seed: int = 0) -> BERT4Rec:
    torch.manual_seed(seed)
    model = BERT4Rec(n_items, config)
    # spread the weights, LayerNorm and bias parameters, so no output is trivially constant
    with torch.no_grad():
        for param in model.parameters():
            param.normal_(0.0, 0.5)
    return model.eval()


# --------------------------------------------------------------------------------------------------
# Attention and padding


@pytest.mark.parametrize("n_heads", [1, 2])
def test_changing_a_later_item_changes_earlier_positions(n_heads):
    model = eval_model(replace(TINY, n_heads=n_heads))
    tokens = torch.randint(1, 22, (3, 8), generator=torch.Generator().manual_seed(1))
    changed = tokens.clone()
    changed[:, 5] = tokens[:, 5] % 21 + 1
    with torch.no_grad():
        before, after = model(tokens), model(changed)
    # bidirectional: every position sees the change, the earlier ones included (SASRec: none)
    assert (after - before).abs().amax(dim=-1).min() > 1e-4


def test_left_padding_does_not_change_the_real_positions():
    model = eval_model()
    tokens = torch.tensor([[4, 21, 9, 2]])  # 21 is [MASK] for 20 items
    padded = torch.cat([torch.zeros(1, 4, dtype=torch.long), tokens], dim=1)
    with torch.no_grad():
        alone, with_padding = model(tokens), model(padded)
    torch.testing.assert_close(with_padding[:, 4:], alone, rtol=1e-5, atol=1e-5)
    # in a batch with longer and shorter histories, and on its own, the scores are the same
    history = np.array([3, 7, 1, 12])
    batch = score_bert4rec(model, [np.arange(10), history, np.array([5])])
    single = score_bert4rec(model, [history])
    np.testing.assert_allclose(batch[1], single[0], rtol=1e-5, atol=1e-5)
    # only the last maxlen - 1 items are read, then [MASK]
    long = np.arange(15) % 20
    np.testing.assert_allclose(score_bert4rec(model, [long]), score_bert4rec(model, [long[-7:]]), rtol=1e-5, atol=1e-5)
    with torch.no_grad():
        direct = model.logits(model(torch.tensor([[*(long[-7:] + 1), 21]]))[:, -1])
    np.testing.assert_allclose(score_bert4rec(model, [long]), direct.numpy(), rtol=1e-5, atol=1e-5)


# --------------------------------------------------------------------------------------------------
# Windows and masking


def test_item_windows_hold_every_item_once_in_time_order():
    sequences = [np.arange(6), np.array([9]), np.array([7, 8])]
    assert item_windows(sequences, n_items=10, maxlen=3).tolist() == [[1, 2, 3], [4, 5, 6], [0, 0, 10], [0, 8, 9]]
    assert item_windows([np.arange(7), np.array([], dtype=np.int64)], 10, 3).tolist() == [
        [0, 0, 1],
        [2, 3, 4],
        [5, 6, 7],
    ]
    with pytest.raises(ValueError, match="empty"):
        item_windows([np.array([], dtype=np.int64)], n_items=10, maxlen=3)
    with pytest.raises(ValueError, match="outside"):
        item_windows([np.array([10])], n_items=10, maxlen=3)


@pytest.mark.parametrize("mask_prob", [0.05, 0.5, 0.95])
def test_masking_spares_padding_and_masks_at_least_one_item_per_window(mask_prob):
    rng = np.random.default_rng(0)
    windows = item_windows([rng.integers(30, size=n) for n in rng.integers(1, 12, size=500)], 30, 8)
    inputs, targets = cloze_masked(windows, 30, mask_prob, rng)
    masked = inputs == 31
    assert not (masked & (windows == 0)).any()  # padding is never masked
    assert (inputs[windows == 0] == 0).all()
    assert masked.any(axis=1).all()  # at least one masked item per window
    np.testing.assert_array_equal(targets[masked], windows[masked] - 1)
    assert (targets[~masked] == IGNORE).all()
    np.testing.assert_array_equal(inputs[~masked], windows[~masked])  # the rest is untouched
    # about mask_prob of the items, plus the forced last item of each window left unmasked
    n_real = (windows > 0).sum(axis=1)
    expected = (n_real * mask_prob + (1 - mask_prob) ** n_real).sum()
    assert masked.sum() == pytest.approx(expected, rel=0.05)


# --------------------------------------------------------------------------------------------------
# Training


def test_learns_a_deterministic_cycle_to_full_next_item_accuracy():
    # A Cloze model must learn to attend to the neighbours of [MASK] by position (SASRec's cycle
    # only needs the current item), which takes far more steps than SASRec's test: 390 here.
    # Windows of 2 to 8 items; a short one whose items are all masked cannot be solved, so the
    # training loss stays above 0.
    rng = np.random.default_rng(0)
    train = [
        (start + np.arange(length)) % CYCLE
        for start, length in zip(rng.integers(CYCLE, size=200), rng.integers(2, 9, size=200))
    ]
    config = replace(TINY, d_model=32, lr=3e-3, epochs=30)
    model, rows = train_bert4rec(train, CYCLE, None, None, config)
    assert rows[-1]["train_loss"] < 0.5 < 1.5 < rows[0]["train_loss"]
    # histories of 1 to 6 items: the context lengths seen in training
    histories = [h for n in range(1, 7) for h in cycle_sequences(6, n, seed=n)]
    predicted = score_bert4rec(model, histories).argmax(axis=1)
    expected = np.array([(h[-1] + 1) % CYCLE for h in histories])
    assert (predicted == expected).mean() == 1.0


def test_same_seed_same_run_and_the_best_validation_epoch_is_kept():
    train = cycle_sequences(24, 6)
    histories = cycle_sequences(10, 4, seed=2)
    targets = np.array([(h[-1] + 1) % CYCLE for h in histories])
    config = replace(TINY, dropout=0.2, lr=3e-3, epochs=4)
    rng_before = torch.get_rng_state()
    first, rows_first = train_bert4rec(train, CYCLE, histories, targets, config)
    assert torch.equal(torch.get_rng_state(), rng_before)  # the caller's torch RNG is untouched
    second, rows_second = train_bert4rec(train, CYCLE, histories, targets, config)
    strip = ("seconds", "tokens_per_s")
    assert [{k: v for k, v in r.items() if k not in strip} for r in rows_first] == [
        {k: v for k, v in r.items() if k not in strip} for r in rows_second
    ]
    for name, value in first.state_dict().items():
        assert torch.equal(value, second.state_dict()[name]), name
    _, rows_other = train_bert4rec(train, CYCLE, histories, targets, replace(config, seed=1))
    assert rows_other[0]["train_loss"] != rows_first[0]["train_loss"]

    assert [r["epoch"] for r in rows_first] == [1, 2, 3, 4]
    assert set(rows_first[0]) == {
        "epoch",
        "train_loss",
        "tokens",
        "seconds",
        "tokens_per_s",
        "valid_ndcg10",
        "valid_recall10",
        "valid_nll",
        "best",
    }
    assert all(r["tokens"] == 24 * 6 for r in rows_first)  # every training item once an epoch
    assert sum(r["best"] for r in rows_first) == 1
    best = max(rows_first, key=lambda r: r["valid_ndcg10"])
    assert best["best"]
    kept = metrics_from_scores(score_bert4rec(first, histories), targets, ks=(10,))["NDCG@10"]
    assert kept == pytest.approx(best["valid_ndcg10"], abs=1e-12)


def test_a_huge_learning_rate_raises_naming_the_epoch():
    with pytest.raises(FloatingPointError, match=r"at epoch [12], batch [0-9]+: training diverged"):
        train_bert4rec(cycle_sequences(64, 6), CYCLE, None, None, replace(TINY, lr=1e30, epochs=3))


def test_a_non_finite_loss_in_a_later_epoch_names_that_epoch(monkeypatch):
    calls = []
    real_cross_entropy = seeds_module.F.cross_entropy

    def nan_from_third_call(*args, **kwargs):
        calls.append(1)
        loss = real_cross_entropy(*args, **kwargs)
        return loss * float("nan") if len(calls) >= 3 else loss

    monkeypatch.setattr(seeds_module.F, "cross_entropy", nan_from_third_call)
    # 16 windows and batch 16: one batch per epoch, so the third loss is epoch 3's
    with pytest.raises(FloatingPointError, match=r"cross-entropy is nan at epoch 3, batch 1"):
        train_bert4rec(cycle_sequences(16, 5), CYCLE, None, None, replace(TINY, epochs=5))


# --------------------------------------------------------------------------------------------------
# Scores and settings


def test_scores_are_a_float32_users_by_items_matrix():
    model = eval_model(n_items=13)
    histories = [np.array([0]), np.arange(12), np.array([5, 5, 5])]
    scores = score_bert4rec(model, histories, batch=2)
    assert scores.shape == (3, 13) and scores.dtype == np.float32 and np.isfinite(scores).all()
    assert score_bert4rec(model, histories[:0]).shape == (0, 13)
    model.train()
    score_bert4rec(model, histories)
    assert model.training  # scoring restores the mode it found
    model.eval()
    score_bert4rec(model, histories)
    assert not model.training
    with pytest.raises(ValueError, match="history 1 is empty"):
        score_bert4rec(model, [np.array([1]), np.array([], dtype=np.int64)])


@pytest.mark.parametrize(
    "field, value",
    [
        ("d_model", 10),
        ("n_blocks", 0),
        ("n_heads", 0),
        ("dropout", 1.0),
        ("mask_prob", 0.0),
        ("mask_prob", 1.0),
        ("lr", 0.0),
        ("epochs", -1),
        ("maxlen", 1),
        ("maxlen", 2.5),
        ("batch", True),
        ("seed", -1),
    ],
)
def test_config_refuses_bad_settings(field, value):
    overrides = {"n_heads": 4} if field == "d_model" else {}
    with pytest.raises(ValueError, match=field if field != "d_model" else "divisible"):
        BERT4RecConfig(**{field: value, **overrides})


def test_validation_targets_must_match_histories():
    with pytest.raises(ValueError, match="3 validation targets for 2 histories"):
        train_bert4rec(cycle_sequences(4, 4), CYCLE, cycle_sequences(2, 3), np.array([1, 2, 3]), TINY)
    with pytest.raises(ValueError, match="both"):
        train_bert4rec(cycle_sequences(4, 4), CYCLE, cycle_sequences(2, 3), None, TINY)
