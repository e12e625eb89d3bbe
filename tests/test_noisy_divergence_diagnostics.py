"""Paper 09's noise diagnostics (issue 40): read on each run's own noisy probe as well as the clean one, the attention
mass from clean queries onto noise keys (by the explicit attention's own probabilities), the noise-token embedding
norm ratio and the per-block gradient norms; the classifier's features use them."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
import torch

from neurips26.common.ensemble import Ensemble
from neurips26.common.transformer import apply_rope
from neurips26.noisy_divergence import classifier
from neurips26.noisy_divergence.model import DIAG, DIAG_NOISY, LM, LMConfig, noise_attention_mass, uniform_noise_mass
from neurips26.noisy_divergence.streams import probe_stream
from neurips26.noisy_divergence.training import (
    TrainSettings,
    block_gradient_norms,
    embedding_noise_ratio,
    train_ensemble,
)

SHAPE = dict(vocab_size=40, d_model=16, n_layers=2, n_heads=2, head_dim=8, d_ff=24, context=16)


def test_noise_mass_is_the_attention_probability_clean_queries_put_on_noise_keys():
    model = LM(LMConfig(**SHAPE, seed=1))
    tokens = torch.randint(0, 40, (2, 10), generator=torch.Generator().manual_seed(0))
    mask = torch.zeros(2, 10, dtype=torch.bool)
    mask[:, [2, 5]] = True
    block, x = model.blocks[0], model.embed(tokens)
    cos, sin = model.rope_cos[:10], model.rope_sin[:10]
    with torch.no_grad():
        h = block.input_norm(x)
        q = block.attn.q_proj(h).view(2, 10, 2, 8).transpose(1, 2)
        k = block.attn.k_proj(h).view(2, 10, 2, 8).transpose(1, 2)
        q, k = apply_rope(q, cos, sin, False), apply_rope(k, cos, sin, False)
        logits = q @ k.transpose(-1, -2) / math.sqrt(8)
        probs = torch.softmax(logits.masked_fill(~torch.ones(10, 10, dtype=torch.bool).tril(), float("-inf")), -1)
        per_query = probs[..., [2, 5]].sum(-1).mean(1)  # (B, T)
        clean = ~mask
        expected = per_query[clean].mean()
    assert float(noise_attention_mass(block, x, cos, sin, mask)) == pytest.approx(float(expected), rel=1e-5)
    assert float(noise_attention_mass(block, x, cos, sin, torch.zeros(2, 10, dtype=torch.bool))) == 0.0
    _, diag = model(tokens, mask)
    _, plain = model(tokens)
    assert diag.shape == (2, len(DIAG_NOISY)) and plain.shape == (2, len(DIAG))
    assert torch.allclose(diag[:, : len(DIAG)], plain) and float(diag[0, -1]) == pytest.approx(
        float(expected), rel=1e-5
    )


def test_block_gradient_norms_and_the_embedding_ratio_are_per_member():
    ens = Ensemble([LM(LMConfig(**SHAPE, seed=s)) for s in (0, 1)])
    for name, p in ens.params.items():
        p.grad = torch.full_like(p, 2.0 if name.startswith("blocks.1.") else 1.0)
    norms = block_gradient_norms(ens.params, 2, 2)
    sizes = [sum(p[0].numel() for n, p in ens.params.items() if n.startswith(f"blocks.{i}.")) for i in (0, 1)]
    assert norms[0].tolist() == pytest.approx([math.sqrt(sizes[0]), 2 * math.sqrt(sizes[1])])
    embedding = torch.ones(2, 40, 16)
    embedding[1, 1:6] *= 3.0  # member 1's noise rows three times the others
    ids = torch.zeros(2, 40, dtype=torch.bool)
    ids[:, 1:6] = True
    assert embedding_noise_ratio(embedding, ids).tolist() == pytest.approx([1.0, 3.0])


def test_training_records_the_noise_diagnostics_on_each_runs_noisy_probe():
    """Before issue 40 the diagnostics were read on one clean validation batch only: no noise mass, no embedding
    ratio, no per-block gradient norm."""
    rng = np.random.default_rng(0)
    streams = [rng.integers(0, 40, size=400).astype(np.uint16) for _ in range(2)]
    probe_tokens = np.stack([s[:36].reshape(3, 12) for s in streams]).astype(np.int64)
    probe_mask = np.isin(probe_tokens, [1, 2, 3])
    settings = TrainSettings(
        seq_len=12, batch_size=3, steps=4, warmup=1, lr=3e-3, diag_every=2, eval_every=4, eval_tokens=48
    )
    results, _ = train_ensemble(
        [LM(LMConfig(**SHAPE, seed=s)) for s in (0, 1)],
        [0, 1],
        streams,
        rng.integers(0, 40, size=200).astype(np.uint16),
        settings,
        log=lambda _: None,
        device="cpu",
        noisy_probes=(probe_tokens, probe_mask),
        noise_ids=[np.array([1, 2, 3]), np.array([1, 2, 3])],
    )
    diag = pd.DataFrame(results[0].diag)
    assert {"noise_mass", "max_logit_noisy", "block_grad_norm"} <= set(diag.columns) and len(diag) == 2 * 2
    assert diag["noise_mass"].between(0, 1).all() and (diag["block_grad_norm"] > 0).all()
    uniform = uniform_noise_mass(torch.from_numpy(probe_mask[0]))
    assert diag["noise_mass_ratio"].to_numpy() == pytest.approx(diag["noise_mass"].to_numpy() / float(uniform))
    recorded = [row for row in results[1].steps if "embed_noise_ratio" in row]
    assert [row["step"] for row in recorded] == [2, 4] and all(row["embed_noise_ratio"] > 0 for row in recorded)


def test_the_classifier_features_are_changes_from_the_first_diagnostic_step():
    """Issue 40's review: the noise mass and embedding ratio entered as levels, which read whether a run trained on
    noise; they enter as log growth from the run's first diagnostic step, and the constant gradient depth is gone."""
    diag = pd.DataFrame(
        [
            {"step": step, "layer": layer, "max_logit": 2.0 + layer, "resid_rms": 1.0,
             "noise_mass_ratio": 0.5 * (layer + step), "block_grad_norm": (1.0 + layer) * step}
            for step in (10, 20)
            for layer in range(3)
        ]
    )  # fmt: skip
    steps = pd.DataFrame({"step": [10, 20], "logit_max": [1.0, 2.0], "update_norm": [1.0, 1.0],
                          "embed_noise_ratio": [3.0, 6.0]})  # fmt: skip
    features = classifier.features_at(diag, steps, 20)
    assert {"noise_mass_growth", "embed_noise_growth", "grad_growth"} <= set(classifier.RECORDED)
    assert not {"noise_mass", "embed_noise_ratio", "grad_depth"} & set(classifier.RECORDED)
    # the second review: the noise features (and the update norm's growth) read the run's cell; recorded, not classified
    assert "grad_growth" in classifier.FEATURES and not set(classifier.CELL_FEATURES) & set(classifier.FEATURES)
    assert features["noise_mass_growth"] == pytest.approx(math.log(22 / 12))
    assert features["embed_noise_growth"] == pytest.approx(math.log(2.0))
    assert features["grad_growth"] == pytest.approx(math.log(2.0))


def test_the_uniform_attention_noise_mass_is_the_noise_share_of_each_clean_querys_keys():
    mask = torch.tensor([[False, True, False, False]])
    # clean queries 0, 2, 3 see 0/1, 1/3 and 1/4 of their keys as noise
    assert float(uniform_noise_mass(mask)) == pytest.approx((0 + 1 / 3 + 1 / 4) / 3)
    model = LM(LMConfig(**SHAPE, seed=1))
    with torch.no_grad():
        model.blocks[0].attn.q_proj.weight.zero_()  # every score 0: uniform causal attention
    x = model.embed(torch.randint(0, 40, (2, 10), generator=torch.Generator().manual_seed(0)))
    noise = torch.rand(2, 10, generator=torch.Generator().manual_seed(1)) < 0.4
    cos, sin = model.rope_cos[:10], model.rope_sin[:10]
    mass = noise_attention_mass(model.blocks[0], x, cos, sin, noise)
    assert float(mass) == pytest.approx(float(uniform_noise_mass(noise)), rel=1e-5)


def test_every_run_is_measured_on_one_noisy_probe_apart_from_its_training_windows():
    """Issue 40's review: each run's probe was windows of its own stream (a clean run's marked ids 1-5, rare in clean
    text) drawn by the generator of its first training batch; the probe is now the validation stream noised by the
    reference setting, the same for every run, drawn by a generator of its own."""
    rng = np.random.default_rng(0)
    val = np.concatenate([np.concatenate([[0], rng.integers(6, 64, size=30)]) for _ in range(40)]).astype(np.uint16)
    noise = {
        "seed": 0,
        "allow_special": False,
        "special_ids": [0],
        "eot_id": 0,
        "reference_setting": "insert-k5-a0.5-d0.5",
    }
    probe = probe_stream(val, noise, 64)
    tokens, mask = probe.probe(4, 16, seed=0)
    again, mask_again = probe_stream(val, noise, 64).probe(4, 16, seed=0)
    assert np.array_equal(tokens, again) and np.array_equal(mask, mask_again)
    assert (
        mask.any() and np.isin(tokens[mask], np.arange(1, 6)).all() and np.array_equal(probe.noise_ids, np.arange(1, 6))
    )
    first_batch = np.random.default_rng(0).integers(0, len(probe.tokens) - 16, size=4)  # training.py's first windows
    assert not np.array_equal(np.stack([probe.tokens[a : a + 16] for a in first_batch]), tokens)
