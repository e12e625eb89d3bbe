"""Paper 05 (BBO-Pile): the Qwen3-style decoder, its pre-training loop and the compute scaling fit."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
import torch.nn.functional as F

from neurips26.bbo_pile.model import Decoder, DecoderConfig, apply_rope, n_parameters, rope_tables
from neurips26.bbo_pile.scaling import compute_frontier, fit_power_law, holdout_check
from neurips26.bbo_pile.training import (
    TrainSettings,
    learning_rate,
    pack_sequences,
    sequence_nll,
    token_loss,
    train_decoder,
)

TINY = dict(vocab_size=23, d_model=32, n_layers=2, n_heads=4, n_query_groups=2, head_size=8, mlp_hidden=48, context=64)


def tiny(**changes) -> Decoder:
    return Decoder(DecoderConfig(**(TINY | changes))).eval()


def test_logits_have_one_row_per_position_and_token():
    tokens = torch.randint(0, 23, (3, 11), generator=torch.Generator().manual_seed(0))
    assert tiny()(tokens).shape == (3, 11, 23)


def test_changing_a_later_token_leaves_earlier_logits_unchanged():
    model = tiny()
    tokens = torch.randint(0, 23, (2, 12), generator=torch.Generator().manual_seed(1))
    changed = tokens.clone()
    changed[:, 7] = (changed[:, 7] + 5) % 23
    before, after = model(tokens), model(changed)
    torch.testing.assert_close(before[:, :7], after[:, :7], rtol=0, atol=1e-6)
    assert (before[:, 7:] - after[:, 7:]).abs().amax() > 1e-3


@pytest.mark.parametrize("groups", [1, 2, 4])
def test_grouped_query_attention_matches_repeated_key_value_heads(groups):
    """Query head h reads key/value group h // (n_heads / n_query_groups): a by-hand attention with
    explicitly repeated k, v heads and a causal softmax gives the same output."""
    model = tiny(n_query_groups=groups)
    attn, c = model.blocks[0].attn, model.config
    x = torch.randn(2, 9, c.d_model, generator=torch.Generator().manual_seed(2))
    cos, sin = rope_tables(torch.arange(9), c.head_size, c.rope_base)
    with torch.no_grad():
        got, _ = attn(x, cos, sin)
        q, k, v = attn.qkv(x).split([4 * 8, groups * 8, groups * 8], dim=-1)
        q = apply_rope(attn.norm_q(q.view(2, 9, 4, 8)).transpose(1, 2), cos, sin)
        k = apply_rope(attn.norm_k(k.view(2, 9, groups, 8)).transpose(1, 2), cos, sin)
        v = v.view(2, 9, groups, 8).transpose(1, 2)
        k, v = k.repeat_interleave(4 // groups, dim=1), v.repeat_interleave(4 // groups, dim=1)
        scores = q @ k.transpose(-1, -2) / math.sqrt(8)
        scores = scores.masked_fill(~torch.ones(9, 9, dtype=torch.bool).tril(), -math.inf)
        want = attn.proj((scores.softmax(-1) @ v).transpose(1, 2).reshape(2, 9, 32))
    torch.testing.assert_close(got, want, rtol=1e-5, atol=1e-6)


def test_rotary_scores_depend_only_on_the_position_difference():
    q, k = torch.randn(1, 1, 1, 8), torch.randn(1, 1, 1, 8)

    def score(pq, pk):
        cq, sq = rope_tables(torch.tensor([pq]), 8, 1e6)
        ck, sk = rope_tables(torch.tensor([pk]), 8, 1e6)
        return float((apply_rope(q, cq, sq) * apply_rope(k, ck, sk)).sum())

    assert score(10, 7) == pytest.approx(score(3, 0), rel=1e-5)
    assert score(10, 7) != pytest.approx(score(10, 3), rel=1e-3)


def test_output_layer_is_the_input_embedding():
    model = tiny()
    assert not any(p.shape == (23, 32) and p is not model.wte.weight for p in model.parameters())
    tokens = torch.tensor([[1, 2, 3]])
    with torch.no_grad():
        before = model(tokens)
        model.wte.weight[9] += 1.0  # token 9 is not in the input: only its output column moves
        after = model(tokens)
    assert torch.equal(before[..., :9], after[..., :9])
    assert not torch.allclose(before[..., 9], after[..., 9])


def test_parameter_count_by_hand():
    d, hs, heads, groups, m, layers, vocab = 32, 8, 4, 2, 48, 2, 23
    per_layer = d * (heads + 2 * groups) * hs + heads * hs * d + 3 * d * m + 2 * d + 2 * hs
    model = tiny()
    assert n_parameters(model) == layers * per_layer + d
    assert n_parameters(model, non_embedding=False) == layers * per_layer + d + vocab * d


def test_cached_decoding_matches_a_full_pass_for_prompts_of_different_lengths():
    model = tiny()
    tokens = torch.randint(0, 23, (3, 12), generator=torch.Generator().manual_seed(3))
    lengths = torch.tensor([4, 7, 9])
    _, cache = model.prefill(tokens[:, :9], 3, lengths - 1)
    for step in range(3):
        got = model.decode_step(tokens[torch.arange(3), lengths + step], lengths + step, cache)
        for b in range(3):
            want = model(tokens[b : b + 1, : lengths[b] + step + 1])[0, -1]
            torch.testing.assert_close(got[b], want, rtol=1e-5, atol=1e-5)


def test_initial_weights_come_from_the_config_seed_without_touching_the_global_rng():
    state = torch.random.get_rng_state()
    a, b, c = tiny(seed=5), tiny(seed=5), tiny(seed=6)
    assert torch.equal(torch.random.get_rng_state(), state)
    assert torch.equal(a.wte.weight, b.wte.weight) and not torch.equal(a.wte.weight, c.wte.weight)


@pytest.mark.parametrize(
    "field, value", [("n_heads", 0), ("n_query_groups", 3), ("head_size", 7), ("dropout", 1.0), ("context", 2.5)]
)
def test_bad_config_names_the_field(field, value):
    with pytest.raises(ValueError, match=field):
        DecoderConfig(**(TINY | {field: value}))


# --------------------------------------------------------------------------------------------------
# Training


def test_packing_keeps_trajectories_whole_and_pads_the_rest():
    rows = pack_sequences([np.array([1, 5, 6]), np.array([1, 7]), np.array([1, 8, 9, 9])], 5, pad=0)
    np.testing.assert_array_equal(rows, [[1, 5, 6, 1, 7], [1, 8, 9, 9, 0]])


def test_packing_a_trajectory_longer_than_the_context_names_both_lengths():
    with pytest.raises(ValueError, match="7 tokens, longer than the context 5"):
        pack_sequences([np.arange(1, 8)], 5, pad=0)


def test_learning_rate_warmup_then_cosine_by_hand():
    s = TrainSettings(tokens_budget=1, lr=1e-3, min_lr=1e-4, warmup=4)
    assert learning_rate(1, s, 14) == pytest.approx(2.5e-4)
    assert learning_rate(4, s, 14) == pytest.approx(1e-3)
    assert learning_rate(9, s, 14) == pytest.approx(1e-4 + 0.5 * 9e-4)  # half way: cos(pi/2) = 0
    assert learning_rate(14, s, 14) == pytest.approx(1e-4)
    assert learning_rate(20, s, 14) == pytest.approx(1e-4)


def counting_rows(n_rows: int, seed: int) -> np.ndarray:
    """Trajectories BOS(=1), then a start token and the cyclic successors 2..22: each next token is
    determined by the previous one except the start."""
    rng = np.random.default_rng(seed)
    seqs = []
    for _ in range(n_rows * 3):
        start = rng.integers(0, 21)
        seqs.append(np.concatenate([[1], 2 + (start + np.arange(rng.integers(5, 11))) % 21]))
    return pack_sequences(seqs, 32, pad=0)[:n_rows]


@pytest.fixture(scope="module")
def trained():
    settings = TrainSettings(tokens_budget=150 * 8 * 20, batch=8, lr=3e-3, min_lr=3e-4, warmup=5, eval_every=20, seed=3)
    config = DecoderConfig(**TINY)
    model, rows = train_decoder(counting_rows(64, 0), counting_rows(8, 1), config, settings, pad=0)
    return model, rows, settings


def test_training_lowers_validation_loss_on_a_learnable_sequence_task(trained):
    _, rows, _ = trained
    valid = torch.from_numpy(counting_rows(8, 1))
    with torch.no_grad():
        loss, count = token_loss(Decoder(DecoderConfig(**TINY)), valid, pad=0)  # the same initial weights
    initial = float(loss) / count
    assert initial > 0.9 * math.log(23)
    # one start token in about 8 is uniform over 21 and the length is random: about 0.6 nats remain
    assert rows[-1]["val_loss"] < 0.35 * initial
    assert rows[-1]["val_loss"] < rows[0]["val_loss"]


def test_training_stops_once_the_token_budget_is_reached_and_counts_6_n_d(trained):
    model, rows, settings = trained
    last = rows[-1]
    assert settings.tokens_budget <= last["tokens"] < settings.tokens_budget + settings.batch * 31
    for row in rows:
        assert row["flops"] == 6.0 * n_parameters(model) * row["tokens"]
    assert [r["step"] for r in rows[:-1]] == list(range(20, 20 * len(rows[:-1]) + 1, 20))


def test_same_seed_gives_the_same_rows(trained):
    _, rows, settings = trained
    _, again = train_decoder(counting_rows(64, 0), counting_rows(8, 1), DecoderConfig(**TINY), settings, pad=0)
    timing = {"seconds", "tokens_per_s"}
    assert [{k: v for k, v in r.items() if k not in timing} for r in rows] == [
        {k: v for k, v in r.items() if k not in timing} for r in again
    ]


def test_rows_wider_than_the_model_context_are_refused():
    with pytest.raises(ValueError, match="context 8"):
        train_decoder(
            counting_rows(4, 0),
            counting_rows(2, 1),
            DecoderConfig(**TINY | {"context": 8}),
            TrainSettings(tokens_budget=10, batch=2),
            pad=0,
        )


def test_sequence_nll_is_the_cross_entropy_of_the_scored_tokens(trained):
    model = trained[0]
    seqs = [np.array([1, 5, 6, 7, 8]), np.array([1, 9, 10])]
    masks = [np.array([0, 0, 1, 1, 0], bool), np.array([0, 1, 1], bool)]
    with torch.no_grad():
        logp = [torch.log_softmax(model(torch.tensor(s[None, :-1]))[0].double(), -1) for s in seqs]
    nll = [-float(logp[0][1, 6]), -float(logp[0][2, 7]), -float(logp[1][0, 9]), -float(logp[1][1, 10])]
    assert sequence_nll(model, seqs, masks) == pytest.approx(np.mean(nll), rel=1e-6)
    np.testing.assert_allclose(
        sequence_nll(model, seqs, masks, reduce="sequence"), [np.mean(nll[:2]), np.mean(nll[2:])], rtol=1e-6
    )
    with pytest.raises(ValueError, match="position 0"):
        sequence_nll(model, seqs[:1], [np.ones(5, bool)])


def test_cross_entropy_ignores_padding_targets(trained):
    """A row's loss is unchanged by extra padding at its end (padding targets are not counted)."""
    model = trained[0]
    row = torch.tensor([[1, 4, 5, 6, 0, 0]])
    loss, count = token_loss(model, row, pad=0)
    short, short_count = token_loss(model, row[:, :4], pad=0)
    assert count == short_count == 3
    torch.testing.assert_close(loss, short)
    with torch.no_grad():
        want = F.cross_entropy(model(row[:, :3])[0], row[0, 1:4], reduction="sum")
    torch.testing.assert_close(loss, want)


# --------------------------------------------------------------------------------------------------
# Scaling


def test_power_law_fit_recovers_exact_synthetic_coefficients():
    flops = np.logspace(12, 16, 7)
    law = fit_power_law(flops, 3.0 * flops**-0.07)
    assert law.a == pytest.approx(3.0, rel=1e-9) and law.b == pytest.approx(-0.07, rel=1e-9)
    a, b, r2 = law
    assert r2 == pytest.approx(1.0, abs=1e-12)
    assert law.predict(1e20) == pytest.approx(a * 1e20**b)


def test_frontier_by_hand():
    rows = {
        "small": [{"flops": 1.0, "val_loss": 3.0}, {"flops": 2.0, "val_loss": 2.5}, {"flops": 4.0, "val_loss": 2.4}],
        "big": [{"flops": 2.0, "val_loss": 2.8}, {"flops": 4.0, "val_loss": 2.2}, {"flops": 8.0, "val_loss": 2.3}],
    }
    frontier = compute_frontier(rows)
    assert list(zip(frontier["run"], frontier["flops"])) == [("small", 1.0), ("small", 2.0), ("big", 4.0)]
    final = compute_frontier(rows, points="final")  # (4, 2.4) then (8, 2.3): neither dominated
    assert list(zip(final["run"], final["flops"])) == [("small", 4.0), ("big", 8.0)]
    rows["big"][-1]["val_loss"] = 2.45  # now dominated by the cheaper small run
    assert list(compute_frontier(rows, points="final")["run"]) == ["small"]


def test_holdout_error_by_hand():
    """Runs on L = 10 C^-0.5 except the largest, 10% above the law at C = 100."""
    rows = {
        "r1": [{"flops": 1.0, "val_loss": 10.0}],
        "r2": [{"flops": 4.0, "val_loss": 5.0}],
        "r3": [{"flops": 16.0, "val_loss": 2.5}],
        "big": [{"flops": 100.0, "val_loss": 1.1}],
    }
    check = holdout_check(rows)
    assert check["holdout"] == "big" and check["n_fit"] == 3 and check["n_holdout"] == 1
    assert check["a"] == pytest.approx(10.0) and check["b"] == pytest.approx(-0.5)
    assert check["predicted_loss"] == pytest.approx(1.0)
    assert check["relative_error"] == pytest.approx((1.0 - 1.1) / 1.1)
    assert check["mae"] == pytest.approx(0.1) and check["rmse"] == pytest.approx(0.1)
    assert check["r2"] == 0.0  # one held-out point: bbo-pile's compute_r2 returns 0
