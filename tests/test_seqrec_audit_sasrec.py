"""SASRec (paper 10's trained baseline): causal masking, padding invariance, training windows,
that it can learn, determinism, divergence errors and the score matrix. Tiny models only (d = 16,
maxlen <= 8), so the file runs in seconds."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest
import torch

from neurips26.seqrec_audit import seeds as seeds_module
from neurips26.seqrec_audit.metrics import metrics_from_scores
from neurips26.seqrec_audit.sasrec import (
    IGNORE,
    SASRec,
    SASRecConfig,
    left_padded,
    score_sasrec,
    train_sasrec,
    training_windows,
)

TINY = SASRecConfig(d_model=16, n_blocks=2, n_heads=2, maxlen=8, dropout=0.0, lr=1e-2, batch=16, epochs=1)
CYCLE = 7  # items 0..6, each followed by the next one mod 7


def cycle_sequences(n: int, length: int, seed: int = 0) -> list[np.ndarray]:
    """Segments of the cycle 0 -> 1 -> ... -> 6 -> 0 with random starts."""
    starts = np.random.default_rng(seed).integers(CYCLE, size=n)
    return [(start + np.arange(length)) % CYCLE for start in starts]


def eval_model(config: SASRecConfig = TINY, n_items: int = 20, seed: int = 0) -> SASRec:
    torch.manual_seed(seed)
    model = SASRec(n_items, config)
    # spread the LayerNorm and bias parameters too, so no output is trivially constant
    with torch.no_grad():
        for param in model.parameters():
            if param.dim() == 1:
                param.normal_(0.0, 0.5)
    return model.eval()


# --------------------------------------------------------------------------------------------------
# Masks and padding


@pytest.mark.parametrize("n_heads", [1, 2])
def test_changing_a_later_item_leaves_earlier_positions_unchanged(n_heads):
    model = eval_model(replace(TINY, n_heads=n_heads))
    tokens = torch.randint(1, 21, (3, 8), generator=torch.Generator().manual_seed(1))
    changed = tokens.clone()
    changed[:, 5] = tokens[:, 5] % 20 + 1
    with torch.no_grad():
        before, after = model(tokens), model(changed)
    torch.testing.assert_close(after[:, :5], before[:, :5], rtol=0, atol=0)
    # and from position 5 on, every output sees the change
    assert (after[:, 5:] - before[:, 5:]).abs().amax(dim=-1).min() > 1e-4


def test_left_padding_does_not_change_the_last_position():
    model = eval_model()
    history = np.array([3, 7, 1, 12])
    alone = left_padded([history], 20, 4)  # no padding at all
    padded = left_padded([history], 20, 8)  # four padded slots
    assert padded[0, :4].tolist() == [0, 0, 0, 0]
    with torch.no_grad():
        last_alone = model(torch.from_numpy(alone))[0, -1]
        last_padded = model(torch.from_numpy(padded))[0, -1]
    torch.testing.assert_close(last_padded, last_alone, rtol=1e-5, atol=1e-5)
    # in a batch with longer and shorter histories, and on its own, the scores are the same
    others = [np.arange(8), np.array([5])]
    batch = score_sasrec(model, [others[0], history, others[1]])
    single = score_sasrec(model, [history])
    np.testing.assert_allclose(batch[1], single[0], rtol=1e-5, atol=1e-5)
    # only the last maxlen items are read
    long = np.arange(15) % 20
    np.testing.assert_allclose(score_sasrec(model, [long]), score_sasrec(model, [long[-8:]]), rtol=1e-5, atol=1e-5)


def test_left_padded_shifts_ids_and_keeps_the_last_maxlen_items():
    tokens = left_padded([np.array([4, 0, 2]), np.arange(6)], n_items=6, maxlen=4)
    assert tokens.tolist() == [[0, 5, 1, 3], [3, 4, 5, 6]]
    with pytest.raises(ValueError, match="history 1 is empty"):
        left_padded([np.array([1]), np.array([], dtype=np.int64)], n_items=6, maxlen=4)
    with pytest.raises(ValueError, match="outside"):
        left_padded([np.array([6])], n_items=6, maxlen=4)


def test_training_windows_hold_every_transition_once_in_time_order():
    # 6 items, 5 transitions, maxlen 3: windows [pad, 0, 1] -> [., 1, 2] and [2, 3, 4] -> [3, 4, 5];
    # a 1-item sequence has no transition; tokens are ids + 1
    sequences = [np.arange(6), np.array([9]), np.array([7, 8])]
    tokens, targets = training_windows(sequences, n_items=10, maxlen=3)
    assert tokens.tolist() == [[0, 1, 2], [3, 4, 5], [0, 0, 8]]
    assert targets.tolist() == [[IGNORE, 1, 2], [3, 4, 5], [IGNORE, IGNORE, 8]]
    with pytest.raises(ValueError, match="two or more items"):
        training_windows([np.array([1])], n_items=10, maxlen=3)


# --------------------------------------------------------------------------------------------------
# Training


def test_learns_a_deterministic_cycle_to_full_next_item_accuracy():
    train = cycle_sequences(40, 6)
    model, rows = train_sasrec(train, CYCLE, None, None, replace(TINY, epochs=12))
    assert rows[-1]["train_loss"] < 0.1 < rows[0]["train_loss"]
    # histories of 1 to 5 items: the context lengths seen in training
    histories = [h for n in range(1, 6) for h in cycle_sequences(6, n, seed=n)]
    predicted = score_sasrec(model, histories).argmax(axis=1)
    expected = np.array([(h[-1] + 1) % CYCLE for h in histories])
    assert (predicted == expected).mean() == 1.0


def test_same_seed_same_run_and_the_best_validation_epoch_is_kept():
    train = cycle_sequences(24, 6)
    histories = cycle_sequences(10, 4, seed=2)
    targets = np.array([(h[-1] + 1) % CYCLE for h in histories])
    config = replace(TINY, dropout=0.2, lr=3e-3, epochs=4)
    rng_before = torch.get_rng_state()
    first, rows_first = train_sasrec(train, CYCLE, histories, targets, config)
    assert torch.equal(torch.get_rng_state(), rng_before)  # the caller's torch RNG is untouched
    second, rows_second = train_sasrec(train, CYCLE, histories, targets, config)
    strip = ("seconds", "tokens_per_s")
    assert [{k: v for k, v in r.items() if k not in strip} for r in rows_first] == [
        {k: v for k, v in r.items() if k not in strip} for r in rows_second
    ]
    for name, value in first.state_dict().items():
        assert torch.equal(value, second.state_dict()[name]), name
    _, rows_other = train_sasrec(train, CYCLE, histories, targets, replace(config, seed=1))
    assert rows_other[0]["train_loss"] != rows_first[0]["train_loss"]

    assert [r["epoch"] for r in rows_first] == [1, 2, 3, 4]
    assert sum(r["best"] for r in rows_first) == 1
    best = max(rows_first, key=lambda r: r["valid_ndcg10"])
    assert best["best"]
    kept = metrics_from_scores(score_sasrec(first, histories), targets, ks=(10,))["NDCG@10"]
    assert kept == pytest.approx(best["valid_ndcg10"], abs=1e-12)


def test_a_huge_learning_rate_raises_naming_the_epoch():
    with pytest.raises(FloatingPointError, match=r"at epoch 1, batch [0-9]+: training diverged"):
        train_sasrec(cycle_sequences(64, 6), CYCLE, None, None, replace(TINY, lr=1e30, epochs=3))


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
        train_sasrec(cycle_sequences(16, 5), CYCLE, None, None, replace(TINY, epochs=5))


# --------------------------------------------------------------------------------------------------
# Scores and settings


def test_scores_are_a_float32_users_by_items_matrix():
    model = eval_model(n_items=13)
    histories = [np.array([0]), np.arange(12), np.array([5, 5, 5])]
    scores = score_sasrec(model, histories, batch=2)
    assert scores.shape == (3, 13) and scores.dtype == np.float32 and np.isfinite(scores).all()
    assert score_sasrec(model, histories[:0]).shape == (0, 13)
    model.train()
    score_sasrec(model, histories)
    assert model.training  # scoring restores the mode it found


@pytest.mark.parametrize(
    "field, value", [("d_model", 10), ("n_blocks", 0), ("dropout", 1.0), ("lr", 0.0), ("epochs", -1), ("maxlen", 2.5)]
)
def test_config_refuses_bad_settings(field, value):
    overrides = {"n_heads": 4} if field == "d_model" else {}
    with pytest.raises(ValueError, match=field if field != "d_model" else "divisible"):
        SASRecConfig(**{field: value, **overrides})


def test_validation_targets_must_match_histories():
    with pytest.raises(ValueError, match="3 validation targets for 2 histories"):
        train_sasrec(cycle_sequences(4, 4), CYCLE, cycle_sequences(2, 3), np.array([1, 2, 3]), TINY)
    with pytest.raises(ValueError, match="both"):
        train_sasrec(cycle_sequences(4, 4), CYCLE, cycle_sequences(2, 3), None, TINY)
