"""Paper 07's models: causal Qwen3-style LM with untied embedding/head, OLMoE-style top-k routing, parameter roles."""

from __future__ import annotations

import pytest
import torch

from neurips26.symm_optim.model import LM, LMConfig, kind_of, n_parameters

DENSE = LMConfig(vocab_size=50, d_model=16, n_layers=2, n_heads=4, n_kv_heads=2, head_dim=4, d_ff=24, context=12)
MOE = LMConfig(
    vocab_size=50,
    d_model=16,
    n_layers=1,
    n_heads=2,
    n_kv_heads=1,
    head_dim=8,
    d_ff=12,
    context=12,
    n_experts=4,
    top_k=2,
)


def test_logits_are_causal_and_the_embedding_is_untied():
    model = LM(DENSE)
    tokens = torch.randint(0, 50, (3, 10), generator=torch.Generator().manual_seed(0))
    logits = model(tokens)
    assert logits.shape == (3, 10, 50)
    changed = tokens.clone()
    changed[:, 6:] = (changed[:, 6:] + 1) % 50
    assert torch.allclose(model(changed)[:, :6], logits[:, :6], atol=1e-6)
    assert not torch.allclose(model(changed)[:, 6:], logits[:, 6:])
    assert model.embed.weight.data_ptr() != model.lm_head.weight.data_ptr()


def test_same_seed_same_weights_and_the_global_rng_is_untouched():
    torch.manual_seed(5)
    before = torch.rand(1)
    torch.manual_seed(5)
    a, b = LM(DENSE), LM(DENSE)
    assert torch.equal(torch.rand(1), before)
    assert all(torch.equal(p, q) for p, q in zip(a.parameters(), b.parameters()))
    assert abs(float(a.embed.weight.detach().std()) - 0.02) < 0.003  # the reference's N(0, 0.02^2) init


def test_every_parameter_gets_its_role():
    kinds = {name: kind_of(name, p) for name, p in LM(MOE).named_parameters()}
    assert kinds["embed.weight"] == "embedding" and kinds["lm_head.weight"] == "lm_head"
    assert kinds["blocks.0.mlp.router.weight"] == "router"
    assert kinds["blocks.0.mlp.experts.3.gate_proj.weight"] == "mlp_gate_up"
    assert kinds["blocks.0.mlp.experts.3.down_proj.weight"] == "mlp_down"
    assert kinds["blocks.0.attn.q_proj.weight"] == "hidden" and kinds["norm.weight"] == "vector"
    counts = n_parameters(LM(MOE))
    assert counts["router"] == 4 * 16 and counts["total"] == sum(p.numel() for p in LM(MOE).parameters())


def test_router_keeps_the_softmax_weights_of_the_top_k_experts():
    moe = LM(MOE).blocks[0].mlp
    x = torch.randn(5, 7, 16, generator=torch.Generator().manual_seed(1))
    gates = moe.gates(x)
    probs = torch.softmax(moe.router(x), dim=-1)
    assert ((gates > 0).sum(-1) == 2).all()
    kept = gates > 0
    assert torch.allclose(gates[kept], probs[kept])  # not renormalised (OLMoE's norm_topk_prob=False)
    assert torch.equal(kept, probs >= probs.topk(2, dim=-1).values[..., -1:])
    manual = sum(gates[..., e : e + 1] * moe.experts[e](x) for e in range(4))
    assert torch.allclose(moe(x), manual, atol=1e-6)


def test_bad_sizes_are_refused():
    with pytest.raises(ValueError, match="n_heads=3 is not a multiple of n_kv_heads=2"):
        LMConfig(n_heads=3, n_kv_heads=2)
    with pytest.raises(ValueError, match="top_k must lie in"):
        LMConfig(n_experts=4, top_k=5)
    with pytest.raises(ValueError, match="needs n_experts"):
        LMConfig(top_k=2)
    with pytest.raises(ValueError, match="exceeds the model's context 12"):
        LM(DENSE)(torch.zeros(1, 13, dtype=torch.long))
