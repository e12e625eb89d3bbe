"""Paper 02's speed-ups (issue 41) compute what they replace: the length-bucketed step's loss and gradient equal the
whole batch's, padded to its longest walk; the buckets partition the batch and cut its padding; the held-out loss
and the cached decoding step ignore the slots after a walk, as before."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from neurips26.analogtobi.model import GPT
from neurips26.analogtobi.tokens import END
from neurips26.analogtobi.training import (
    TrainSettings,
    _eval_loss,
    bucketed_loss_backward,
    length_buckets,
    train_gpt,
    walk_lengths,
    walk_loss,
)
from test_analogtobi_model import IDS
from test_analogtobi_model import rows as model_rows
from test_analogtobi_model import tiny as model_tiny


def rows(n=32, context=160, seed=0):
    return model_rows(n, context, seed, families=("Opamp", "Mirror", "LDO"), max_devices=10)


def tiny(context=160, seed=0):
    return model_tiny(context, seed)


def test_the_bucketed_loss_and_gradient_equal_the_whole_batchs():
    data = rows(32)
    lengths = walk_lengths(data, IDS[END])
    assert lengths.min() < lengths.max()  # walks of several lengths: the buckets differ from the batch
    assert len(length_buckets(lengths)) > 1
    batch = torch.as_tensor(data[:, : int(lengths.max())])
    whole = GPT(tiny())
    reference = walk_loss(whole, batch, IDS[END])
    reference.backward()
    bucketed = GPT(tiny())
    loss = bucketed_loss_backward(bucketed, batch, lengths, IDS[END])
    torch.testing.assert_close(loss, reference.detach(), rtol=1e-6, atol=1e-6)
    for (name, a), b in zip(whole.named_parameters(), bucketed.parameters()):
        torch.testing.assert_close(b.grad, a.grad, rtol=1e-5, atol=1e-7, msg=name)


def test_buckets_partition_the_batch_sorted_and_cut_the_padding():
    lengths = np.array([5] * 16 + [100] * 16)[np.random.default_rng(0).permutation(32)]
    buckets = length_buckets(lengths, overhead=128)
    assert sorted(np.concatenate(buckets).tolist()) == list(range(32))
    assert [sorted(set(lengths[b].tolist())) for b in buckets] == [[5], [100]]
    assert len(length_buckets(lengths, overhead=10**9)) == 1  # a pass dearer than any padding: one batch
    one = length_buckets(np.array([7]))
    assert [b.tolist() for b in one] == [[0]]
    padded = sum(len(b) * lengths[b].max() for b in buckets)
    assert padded == lengths.sum() < len(lengths) * lengths.max()
    with pytest.raises(ValueError, match="non-empty"):
        length_buckets(np.array([]))


def test_the_held_out_loss_ignores_the_padding_after_each_walk():
    data = rows(12)
    model = GPT(tiny()).eval()
    wide = torch.as_tensor(data)
    reference = walk_loss(model, wide, IDS[END]).item()  # one batch over the whole context
    assert _eval_loss(model, wide.int(), IDS[END], 64) == pytest.approx(reference, rel=1e-5)
    assert _eval_loss(model, wide.int(), IDS[END], 5) == pytest.approx(reference, rel=1e-5)


def test_training_with_buckets_follows_the_unbucketed_run(monkeypatch):
    """A short run with buckets ends at the weights of the same run with one bucket per step (float tolerance)."""
    from neurips26.analogtobi import training

    data = rows(24)
    settings = TrainSettings(steps=6, batch_size=8, lr=3e-3, warmup=2, eval_every=3)
    bucketed, log_b, _ = train_gpt(data, data[:4], tiny(), settings, end=IDS[END])
    monkeypatch.setattr(training, "BUCKET_OVERHEAD_TOKENS", 10**9)
    whole, log_w, _ = train_gpt(data, data[:4], tiny(), settings, end=IDS[END])
    for a, b in zip(whole.state_dict().values(), bucketed.state_dict().values()):
        torch.testing.assert_close(b, a, rtol=1e-4, atol=1e-5)
    assert [r["loss"] for r in log_b] == pytest.approx([r["loss"] for r in log_w], rel=1e-4)


def test_the_cached_decoding_step_attends_to_the_filled_slots_as_the_full_pass_does():
    model = GPT(tiny(context=64)).eval()
    tokens = torch.as_tensor(rows(3, context=64)[:, :30])
    full = model(tokens)
    cache = model.new_cache(3, 64)  # capacity beyond the walk: the empty slots must not count
    stepped = torch.stack([model.decode_step(tokens[:, p], p, cache) for p in range(30)], dim=1)
    torch.testing.assert_close(stepped, full, rtol=1e-5, atol=1e-5)
