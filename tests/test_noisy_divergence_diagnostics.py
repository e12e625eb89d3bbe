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
from neurips26.noisy_divergence.model import DIAG, DIAG_NOISY, LM, LMConfig, noise_attention_mass
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
    recorded = [row for row in results[1].steps if "embed_noise_ratio" in row]
    assert [row["step"] for row in recorded] == [2, 4] and all(row["embed_noise_ratio"] > 0 for row in recorded)


def test_the_classifier_features_read_the_noise_diagnostics():
    diag = pd.DataFrame(
        [
            {"step": step, "layer": layer, "max_logit": 2.0 + layer, "resid_rms": 1.0,
             "noise_mass": 0.01 * (layer + step), "block_grad_norm": (1.0 + layer) * step}
            for step in (10, 20)
            for layer in range(3)
        ]
    )  # fmt: skip
    steps = pd.DataFrame({"step": [10, 20], "logit_max": [1.0, 2.0], "update_norm": [1.0, 1.0],
                          "embed_noise_ratio": [1.0, 2.0]})  # fmt: skip
    features = classifier.features_at(diag, steps, 20)
    assert {"noise_mass", "embed_noise_ratio", "grad_depth", "grad_growth"} <= set(classifier.FEATURES)
    assert features["noise_mass"] == pytest.approx(0.01 * 22)
    assert features["embed_noise_ratio"] == pytest.approx(math.log(2.0))
    assert features["grad_depth"] == 1.0 and features["grad_growth"] == pytest.approx(math.log(2.0))
