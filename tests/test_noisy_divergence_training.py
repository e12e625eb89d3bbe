"""Paper 09's model and batched training: explicit attention equals SDPA, each ensemble member equals its run alone,
divergence is recorded as an outcome (one member, or all through the common loop's flag), a killed run resumes to
the same result, and the job's device holds everything."""

from __future__ import annotations

import logging
import math

import numpy as np
import pytest
import torch
import torch.nn.functional as F

from fake_gpu import fake_gpu
from neurips26.common import faults, loop
from neurips26.common.transformer import HF, Attention, explicit_causal_attention
from neurips26.noisy_divergence.model import DIAG, LM, LMConfig, n_parameters
from neurips26.noisy_divergence.training import TrainSettings, lr_at, train_ensemble

SHAPE = dict(vocab_size=40, d_model=16, n_layers=2, n_heads=2, head_dim=8, d_ff=24, context=16)
SETTINGS = TrainSettings(
    seq_len=12, batch_size=3, steps=8, warmup=2, lr=3e-3, diag_every=3, eval_every=4, eval_tokens=48
)


def _stream(n, seed):
    return np.random.default_rng(seed).integers(0, 40, size=n).astype(np.uint16)


def quiet(_):
    return None


def test_explicit_attention_equals_sdpa_and_reports_the_largest_logit():
    torch.manual_seed(0)
    q, k, v = torch.randn(2, 4, 7, 8), torch.randn(2, 2, 7, 8), torch.randn(2, 2, 7, 8)
    y, stats = explicit_causal_attention(q, k, v)
    expected = F.scaled_dot_product_attention(q, k, v, is_causal=True, enable_gqa=True)
    assert torch.allclose(y, expected, atol=1e-6)
    kk = k.repeat_interleave(2, dim=1)
    logits = q @ kk.transpose(-1, -2) / math.sqrt(8)
    causal = torch.ones(7, 7, dtype=torch.bool).tril()
    assert stats[0] == pytest.approx(float(logits.abs()[..., causal].max()))  # masked logits are left out
    q_zero_last, k_future = q.clone(), k.clone()
    q_zero_last[:, :, 6] = 0.0  # the only query that may see key 6
    k_future[:, :, 6] = 100 * q[:, ::2, 0]  # a huge key that position 0's query would meet, were it not in its future
    _, masked_stats = explicit_causal_attention(q_zero_last, k_future, v)
    assert float(masked_stats[0]) < 10  # the future logit (about 100 x |q|^2 / sqrt(8)) is left out
    probs = torch.softmax(logits.masked_fill(~causal, float("-inf")), -1)
    entropy = -(probs * probs.clamp_min(1e-30).log()).sum(-1).mean()
    assert stats[1] == pytest.approx(float(entropy), rel=1e-5)


def test_attention_with_statistics_gives_the_same_output_as_the_default_path():
    torch.manual_seed(1)
    attn = Attention(16, 2, 2, 8, layout=HF)
    x = torch.randn(3, 5, 16)
    y, _ = attn(x)
    y_stats, stats = attn(x, stats=True)
    assert torch.allclose(y, y_stats, atol=1e-6) and stats.shape == (4,)
    y_plain, none = attn(x, stats=False)
    assert torch.allclose(y, y_plain, atol=1e-6) and none is None
    with pytest.raises(ValueError, match="without cache or mask"):
        attn(x, mask=torch.ones(5, 5, dtype=torch.bool), stats=True)


def test_model_is_causal_seeded_and_reports_per_layer_diagnostics():
    model = LM(LMConfig(**SHAPE, seed=3))
    state = torch.random.get_rng_state()
    again = LM(LMConfig(**SHAPE, seed=3))
    assert torch.equal(torch.random.get_rng_state(), state)  # the global random state is left alone
    assert all(torch.equal(a, b) for a, b in zip(model.state_dict().values(), again.state_dict().values()))
    tokens = torch.randint(0, 40, (2, 10))
    logits, diag = model(tokens)
    assert logits.shape == (2, 10, 40) and diag.shape == (2, len(DIAG))
    changed = tokens.clone()
    changed[:, 6:] = (changed[:, 6:] + 1) % 40
    assert torch.allclose(model(changed)[0][:, :6], logits[:, :6], atol=1e-6)  # no position sees the future
    assert not any("q_norm" in n for n, _ in model.named_parameters())
    with_qk = LM(LMConfig(**SHAPE, qk_norm=True))
    assert any("q_norm" in n for n, _ in with_qk.named_parameters())
    assert n_parameters(model)["embedding"] == 2 * 40 * 16
    with pytest.raises(ValueError, match="exceeds the model's context 16"):
        model(torch.zeros(1, 17, dtype=torch.long))


def test_learning_rate_warms_up_then_decays_to_its_floor():
    s = TrainSettings(seq_len=4, batch_size=1, steps=100, warmup=10, lr=1.0, min_lr_frac=0.1)
    assert lr_at(0, s) == pytest.approx(0.1) and lr_at(9, s) == pytest.approx(1.0)
    assert lr_at(10, s) == pytest.approx(1.0) and lr_at(99, s) == pytest.approx(0.1)


def test_each_member_of_the_ensemble_equals_its_run_alone():
    streams = [_stream(800, 0), _stream(900, 1), _stream(700, 2)]
    seeds = [5, 6, 7]
    models = [LM(LMConfig(**SHAPE, seed=s)) for s in seeds]
    batched, _ = train_ensemble(models, seeds, streams, _stream(200, 9), SETTINGS, log=quiet, device="cpu")
    for i in range(3):
        alone_model = LM(LMConfig(**SHAPE, seed=seeds[i]))
        (alone,), _ = train_ensemble(
            [alone_model], [seeds[i]], [streams[i]], _stream(200, 9), SETTINGS, log=quiet, device="cpu"
        )
        for a, b in zip(alone.steps, batched[i].steps):
            assert a["train_loss"] == pytest.approx(b["train_loss"], rel=1e-5, abs=1e-6)
            assert a["grad_norm"] == pytest.approx(b["grad_norm"], rel=1e-4)
        for a, b in zip(alone.diag, batched[i].diag):
            for key in DIAG:
                assert a[key] == pytest.approx(b[key], rel=1e-4, abs=1e-6)
        for p, q in zip(alone_model.parameters(), models[i].parameters()):
            assert torch.allclose(p, q, atol=1e-5)
    assert len(batched[0].steps) == SETTINGS.steps and batched[0].steps[-1]["val_loss"] == batched[0].final_val_loss
    assert {row["step"] for row in batched[0].diag} == {3, 6, 8}  # every diag_every steps and the last


def test_a_member_gone_non_finite_is_recorded_and_frozen_while_the_others_train_on():
    models = [LM(LMConfig(**SHAPE, seed=s)) for s in (0, 1)]
    with torch.no_grad():
        models[1].lm_head.weight[0, 0] = float("nan")
    results, outcome = train_ensemble(
        models, [0, 1], [_stream(800, 0), _stream(800, 1)], _stream(200, 9), SETTINGS, log=quiet, device="cpu"
    )
    assert results[1].non_finite_step == 1 and len(results[1].steps) == 1 and math.isnan(results[1].final_val_loss)
    assert results[0].non_finite_step is None and len(results[0].steps) == SETTINGS.steps
    assert outcome.diverged is None and outcome.steps == SETTINGS.steps
    alone = LM(LMConfig(**SHAPE, seed=0))
    (solo,), _ = train_ensemble([alone], [0], [_stream(800, 0)], _stream(200, 9), SETTINGS, log=quiet, device="cpu")
    assert solo.final_val_loss == pytest.approx(results[0].final_val_loss, rel=1e-5)


def test_when_every_member_diverges_the_loop_records_it_instead_of_raising():
    models = [LM(LMConfig(**SHAPE, seed=s)) for s in (0, 1)]
    with torch.no_grad():
        for m in models:
            m.embed.weight[:] = float("inf")
    results, outcome = train_ensemble(
        models, [0, 1], [_stream(800, 0), _stream(800, 1)], _stream(200, 9), SETTINGS, log=quiet, device="cpu"
    )
    assert all(r.non_finite_step == 1 for r in results)
    assert isinstance(outcome.diverged, loop.Diverged) and outcome.stopped_early and outcome.steps == 0


def test_a_raised_learning_rate_blows_the_loss_up_without_an_error():
    hot = TrainSettings(
        seq_len=12, batch_size=3, steps=30, warmup=2, lr=30.0, diag_every=5, eval_every=10, eval_tokens=48
    )
    (result,), _ = train_ensemble(
        [LM(LMConfig(**SHAPE))], [0], [_stream(800, 0)], _stream(200, 9), hot, log=quiet, device="cpu"
    )
    losses = [r["train_loss"] for r in result.steps]
    assert result.non_finite_step is not None or max(losses[5:]) > 2 * losses[0]


class Killed(RuntimeError):
    pass


def test_a_run_killed_after_a_checkpoint_resumes_to_the_uninterrupted_result(tmp_path, monkeypatch, caplog):
    def run():
        models = [LM(LMConfig(**SHAPE, seed=s)) for s in (0, 1)]
        results, _ = train_ensemble(
            models,
            [0, 1],
            [_stream(800, 0), _stream(800, 1)],
            _stream(200, 9),
            SETTINGS,
            log=quiet,
            loop_settings=settings,
            device="cpu",
        )
        return models, results

    settings = loop.LoopSettings(checkpoint=tmp_path / ".ckpt", fingerprint="job", every_steps=3)
    whole, _ = train_ensemble(
        [LM(LMConfig(**SHAPE, seed=s)) for s in (0, 1)],
        [0, 1],
        [_stream(800, 0), _stream(800, 1)],
        _stream(200, 9),
        SETTINGS,
        log=quiet,
        device="cpu",
    )
    done = []

    def kill():
        done.append(1)
        if len(done) == 5:
            raise Killed

    monkeypatch.setattr(faults, "step_done", kill)
    with pytest.raises(Killed):
        run()
    assert settings.checkpoint.exists()
    monkeypatch.setattr(faults, "step_done", lambda: None)
    with caplog.at_level(logging.INFO, logger="neurips26.loop"):
        _, resumed = run()
    assert any("resuming from checkpoint" in r.getMessage() and "at step 3" in r.getMessage() for r in caplog.records)
    untimed = [[{k: v for k, v in row.items() if k != "step_seconds"} for row in r.steps] for r in resumed]
    expected = [[{k: v for k, v in row.items() if k != "step_seconds"} for row in r.steps] for r in whole]
    assert str(untimed) == str(expected)  # str: NaN == NaN
    assert [r.diag for r in resumed] == [r.diag for r in whole]


@pytest.mark.gpu_rule("noisy_divergence_train")
@pytest.mark.gpu_rule("noisy_divergence_pilot")  # its script trains through train_ensemble on loop.job_device()
def test_training_keeps_models_optimizers_and_batches_on_the_jobs_device():
    models = [LM(LMConfig(**SHAPE, seed=s)) for s in (0, 1)]
    two = TrainSettings(
        seq_len=12, batch_size=2, steps=2, warmup=1, lr=1e-3, diag_every=1, eval_every=1, eval_tokens=24
    )
    with fake_gpu() as device:
        results, _ = train_ensemble(models, [0, 1], [_stream(400, 0), _stream(400, 1)], _stream(100, 1), two, log=quiet)
    assert all(len(r.steps) == 2 for r in results)
    assert all(p.device == device for m in models for p in m.parameters())


@pytest.mark.parametrize(
    "change, message",
    [
        (dict(streams=[_stream(10, 0)]), "shorter than one window"),
        (dict(settings=TrainSettings(seq_len=20, batch_size=1, steps=2, warmup=0, lr=1e-3)), "exceeds the model's"),
        (dict(streams=[np.full(300, 45, dtype=np.uint16)]), "beyond the vocabulary of 40"),
    ],
)
def test_bad_inputs_are_refused_before_training(change, message):
    args = dict(streams=[_stream(400, 0)], settings=SETTINGS)
    args.update(change)
    with pytest.raises(ValueError, match=message):
        train_ensemble(
            [LM(LMConfig(**SHAPE))], [0], args["streams"], _stream(100, 1), args["settings"], log=quiet, device="cpu"
        )


def test_diagnostics_are_read_on_the_clean_probe_batch_shared_by_every_member():
    streams = [_stream(800, 0), np.full(800, 3, dtype=np.uint16)]  # member 1 trains on one repeated token
    val = _stream(200, 9)
    models = [LM(LMConfig(**SHAPE, seed=s)) for s in (0, 1)]
    results, _ = train_ensemble(models, [0, 1], streams, val, SETTINGS, log=quiet, device="cpu")
    probe = torch.from_numpy(val[: 3 * 12].astype(np.int64).reshape(3, 12))  # batch_size windows of seq_len
    for model, result in zip(models, results):
        with torch.no_grad():
            logits, diag = model(probe)
        last = [row for row in result.diag if row["step"] == SETTINGS.steps]
        for layer, row in enumerate(last):
            assert row["max_logit"] == pytest.approx(float(diag[layer, 0]), rel=1e-5)
        assert result.steps[-1]["logit_max"] == pytest.approx(float(logits.abs().max()), rel=1e-5)


def test_micro_batches_accumulate_to_the_gradient_of_the_whole_batch():
    """Three micro-batches of one window draw the same windows and take the same steps as one batch of three,
    within float32 tolerance (the sums are ordered differently)."""
    streams, val = [_stream(600, 0), _stream(600, 1)], _stream(100, 9)
    runs = {}
    for micro in (3, 1):
        models = [LM(LMConfig(**SHAPE, seed=s)) for s in (0, 1)]
        settings = TrainSettings(**{**SETTINGS.__dict__, "micro_batch": micro, "diag_every": 100})
        runs[micro], _ = train_ensemble(models, [0, 1], streams, val, settings, log=quiet, device="cpu")
    for whole, parts in zip(runs[3], runs[1]):
        for a, b in zip(whole.steps, parts.steps):
            assert b["train_loss"] == pytest.approx(a["train_loss"], rel=1e-5)
            assert b["grad_norm"] == pytest.approx(a["grad_norm"], rel=1e-4)
        assert parts.final_val_loss == pytest.approx(whole.final_val_loss, rel=1e-5)


def test_sdpa_and_bf16_train_close_to_the_explicit_float32_path():
    streams, val = [_stream(600, 0)], _stream(100, 9)
    losses = {}
    for precision, attention in (("fp32", "explicit"), ("fp32", "sdpa"), ("bf16", "sdpa")):
        settings = TrainSettings(**{**SETTINGS.__dict__, "precision": precision, "attention": attention})
        results, _ = train_ensemble([LM(LMConfig(**SHAPE))], [0], streams, val, settings, log=quiet, device="cpu")
        losses[precision, attention] = [row["train_loss"] for row in results[0].steps]
    assert losses["fp32", "sdpa"] == pytest.approx(losses["fp32", "explicit"], rel=1e-5)
    assert losses["bf16", "sdpa"] == pytest.approx(losses["fp32", "explicit"], rel=2e-2)


def test_the_model_without_diagnostics_gives_the_same_logits_by_sdpa():
    model = LM(LMConfig(**SHAPE, seed=2))
    tokens = torch.from_numpy(_stream(32, 4).astype(np.int64)).view(2, 16)
    with torch.no_grad():
        explicit, _ = model(tokens, diagnostics=False)
        fused, _ = model(tokens, diagnostics=False, attention="sdpa")
        with_stats, diag = model(tokens, diagnostics=True, attention="sdpa")  # diagnostics take the explicit path
    torch.testing.assert_close(fused, explicit, rtol=1e-5, atol=1e-5)
    assert torch.equal(with_stats, explicit) and diag.shape[0] == SHAPE["n_layers"]


@pytest.mark.parametrize(
    "change, message",
    [
        (dict(micro_batch=2), "micro_batch 2 must divide batch_size 3"),
        (dict(micro_batch=4), "micro_batch 4 must divide batch_size 3"),
        (dict(precision="fp16"), "precision must be one of"),
        (dict(attention="flash"), "attention must be one of"),
    ],
)
def test_settings_that_a_job_cannot_run_are_refused(change, message):
    with pytest.raises(ValueError, match=message):
        TrainSettings(**{**SETTINGS.__dict__, **change})


@pytest.mark.gpu_rule("noisy_divergence_train")
def test_paper_scale_options_keep_everything_on_the_jobs_device():
    """Micro-batches, bf16 and SDPA (the paper block's path) on the fake accelerator."""
    models = [LM(LMConfig(**SHAPE, seed=s)) for s in (0, 1)]
    settings = TrainSettings(
        seq_len=12, batch_size=4, steps=2, warmup=1, lr=1e-3, diag_every=1, eval_every=1, eval_tokens=24,
        micro_batch=2, precision="bf16", attention="sdpa",
    )  # fmt: skip
    with fake_gpu() as device:
        results, _ = train_ensemble(
            models, [0, 1], [_stream(400, 0), _stream(400, 1)], _stream(100, 1), settings, log=quiet
        )
    assert all(len(r.steps) == 2 for r in results)
    assert all(p.device == device for m in models for p in m.parameters())


def test_the_precision_names_the_config_checks_accept_are_the_ones_training_runs():
    """The parse-time check reads the torch-free names; the training step maps each to its autocast dtype."""
    from neurips26.noisy_divergence.paths import PRECISION_NAMES
    from neurips26.noisy_divergence.training import PRECISIONS

    assert sorted(PRECISIONS) == sorted(PRECISION_NAMES)
    assert PRECISIONS["fp32"] is None and PRECISIONS["bf16"] is torch.bfloat16
