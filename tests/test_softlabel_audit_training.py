"""Seed- and condition-batched training of paper 15 (softlabel_audit): each member learns its own targets, members
of one seed are paired across conditions, dynamics, resume, refusals."""

import numpy as np
import pytest
import torch
import torch.nn.functional as F

from neurips26.common import loop
from neurips26.softlabel_audit import training
from neurips26.softlabel_audit.training import Member, TrainSettings, image_tensor, soft_cross_entropy, train_members

N, K = 48, 10


def _data(seed=0):
    rng = np.random.default_rng(seed)
    x = rng.random((N, 28, 28), dtype=np.float32)
    gold = rng.integers(0, K, N)
    return x, gold


def _one_hot(labels):
    return np.eye(K, dtype=np.float32)[labels]


def test_soft_cross_entropy_is_cross_entropy_on_one_hot_targets_and_log_k_on_uniform_logits():
    logits = torch.randn(2, 5, K, generator=torch.Generator().manual_seed(0))
    labels = torch.tensor([[0, 1, 2, 3, 4], [9, 8, 7, 6, 5]])
    ce = torch.stack([F.cross_entropy(logits[i], labels[i]) for i in range(2)])
    torch.testing.assert_close(soft_cross_entropy(logits, F.one_hot(labels, K).float()), ce)
    soft = torch.softmax(torch.randn(5, K), -1)
    log_k = torch.tensor(np.log(K), dtype=torch.float32)
    torch.testing.assert_close(soft_cross_entropy(torch.zeros(5, K), soft), log_k)


def test_image_tensor_puts_channels_first_and_refuses_values_outside_0_1():
    grey = np.zeros((2, 28, 28), np.float32)
    colour = np.zeros((2, 32, 32, 3), np.float32)
    colour[..., 2] = 1.0
    assert image_tensor(grey).shape == (2, 1, 28, 28)
    out = image_tensor(colour)
    assert out.shape == (2, 3, 32, 32) and out[:, 2].min() == 1 and out[:, :2].max() == 0
    with pytest.raises(ValueError, match=r"\[0, 1\]"):
        image_tensor(grey + 2)
    with pytest.raises(ValueError, match="shape"):
        image_tensor(np.zeros((28, 28), np.float32))


def test_each_member_learns_its_own_targets():
    x, gold = _data()
    members = [Member("all_zero", 0), Member("all_three", 0)]
    targets = np.stack([_one_hot(np.zeros(N, int)), _one_hot(np.full(N, 3))])
    res = train_members(x, gold, targets, members, "convnet_tiny", TrainSettings(epochs=4, batch=16, lr=1e-2))
    probs = training.predict_proba(res, x)
    assert probs.shape == (2, N, K)
    assert probs[0, :, 0].min() > 0.9 and probs[1, :, 3].min() > 0.9
    # the target's argmax is what each member learnt; its gold label (random) is not
    assert res.dynamics.target_prob[:, -1].min() > 0.9
    assert list(res.log.columns) == ["condition", "seed", "epoch", "loss"] and len(res.log) == 2 * 4


def test_members_of_one_seed_are_paired_across_conditions_and_seeds_differ():
    x, gold = _data()
    soft = np.full((N, K), 1.0 / K, np.float32)
    members = [Member("a", 0), Member("b", 0), Member("a", 1)]
    targets = np.stack([_one_hot(gold), _one_hot(gold), _one_hot(gold)])
    targets[1] = 0.5 * targets[1] + 0.5 * soft  # b differs from a only in its targets
    res = train_members(x, gold, targets, members, "convnet_tiny", TrainSettings(epochs=2, batch=16))
    first = {name: w[0] for name, w in res.ensemble.params.items()}
    seed1 = {name: w[2] for name, w in res.ensemble.params.items()}
    assert any(not torch.equal(first[k], seed1[k]) for k in first)
    # same targets, same seed: identical run whatever else is in the ensemble
    again = train_members(x, gold, targets[[0]], [Member("a", 0)], "convnet_tiny", TrainSettings(epochs=2, batch=16))
    for name, w in again.ensemble.params.items():
        torch.testing.assert_close(w[0], first[name], rtol=0, atol=0)
    np.testing.assert_array_equal(again.dynamics.gold_prob[0], res.dynamics.gold_prob[0])
    assert not np.array_equal(res.dynamics.gold_prob[0], res.dynamics.gold_prob[1])


def test_epoch_end_dynamics_are_the_final_predictions_of_the_gold_and_target_labels():
    x, gold = _data()
    targets = np.stack([_one_hot((gold + 1) % K), _one_hot(gold)])
    members = [Member("shifted", 0), Member("original", 1)]
    settings = TrainSettings(epochs=2, batch=16, dynamics="epoch_end")
    res = train_members(x, gold, targets, members, "convnet_tiny", settings)
    probs = training.predict_proba(res, x)
    items = np.arange(N)
    np.testing.assert_allclose(res.dynamics.gold_prob[:, -1], probs[:, items, gold], rtol=1e-5)
    np.testing.assert_allclose(res.dynamics.target_prob[0, -1], probs[0, items, (gold + 1) % K], rtol=1e-5)
    np.testing.assert_array_equal(res.dynamics.correct[:, -1], probs.argmax(-1) == gold)
    frame = res.dynamics.frame()
    assert len(frame) == 2 * 2 * N and set(frame["epoch"]) == {1, 2}


def test_training_pass_dynamics_fill_every_item_of_every_epoch():
    x, gold = _data()
    res = train_members(x, gold, _one_hot(gold)[None], [Member("o", 0)], "convnet_tiny", TrainSettings(2, 10))
    d = res.dynamics
    assert d.gold_prob.shape == (1, 2, N) and (d.gold_prob > 0).all() and (d.gold_prob < 1).all()
    np.testing.assert_array_equal(d.gold_prob, d.target_prob)  # target argmax = gold for one-hot gold targets


def test_a_resumed_run_equals_an_uninterrupted_one(tmp_path):
    x, gold = _data()
    targets = np.stack([_one_hot(gold), _one_hot((gold + 2) % K)])
    members = [Member("a", 0), Member("b", 1)]
    settings = TrainSettings(epochs=2, batch=16)
    ckpt = loop.LoopSettings(checkpoint=tmp_path / "ckpt.pt", every_steps=1)
    whole = train_members(x, gold, targets, members, "convnet_tiny", settings, loop_settings=ckpt)
    assert (tmp_path / "ckpt.pt").exists()  # written after epoch 1, kept until the job calls loop.finish
    resumed = train_members(x, gold, targets, members, "convnet_tiny", settings, loop_settings=ckpt)
    assert resumed.loop.resumed_from == 1
    for name, w in whole.ensemble.params.items():
        torch.testing.assert_close(resumed.ensemble.params[name], w, rtol=0, atol=0)
    np.testing.assert_array_equal(resumed.dynamics.gold_prob, whole.dynamics.gold_prob)
    assert resumed.log.equals(whole.log)


def test_a_non_finite_loss_names_the_member(monkeypatch):
    x, gold = _data()

    def broken(logits, targets):
        return soft_cross_entropy(logits, targets) * torch.tensor([1.0, float("nan")])

    monkeypatch.setattr(training, "soft_cross_entropy", broken)
    targets = np.stack([_one_hot(gold)] * 2)
    with pytest.raises(loop.Diverged, match=r"condition='b', seed=3"):
        train_members(x, gold, targets, [Member("a", 0), Member("b", 3)], "convnet_tiny", TrainSettings(1, 16))


@pytest.mark.parametrize(
    ("mutate", "message"),
    [
        (lambda t, g: (t * 2, g), "sum to 2"),
        (lambda t, g: (t - 0.05, g), "non-negative"),
        (lambda t, g: (t, g + K), "integers in 0..9"),
        (lambda t, g: (t[:, :-1], g), "targets must be"),
    ],
)
def test_bad_targets_and_labels_are_refused(mutate, message):
    x, gold = _data()
    targets, gold = mutate(np.stack([_one_hot(gold)]), gold)
    with pytest.raises(ValueError, match=message):
        train_members(x, gold, targets, [Member("a", 0)], "convnet_tiny", TrainSettings(1, 16))


def test_repeated_members_and_bad_settings_are_refused():
    x, gold = _data()
    targets = np.stack([_one_hot(gold)] * 2)
    with pytest.raises(ValueError, match="members repeat"):
        train_members(x, gold, targets, [Member("a", 0)] * 2, "convnet_tiny", TrainSettings(1, 16))
    with pytest.raises(ValueError, match="dynamics"):
        TrainSettings(1, 16, dynamics="logits")
