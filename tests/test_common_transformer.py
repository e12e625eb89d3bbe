"""neurips26.common.transformer: the decoder parts of bbo_pile and symm_optim, checked against copies of
the code each paper had before they were shared (kept only here): same initial weights from the same
seed, same outputs, same gradients, bit for bit."""

from __future__ import annotations

import math

import pytest
import torch
import torch.nn.functional as F
from torch import nn

from neurips26.bbo_pile.model import Decoder, DecoderConfig
from neurips26.common.transformer import HF, LITGPT, Attention, Block, apply_rope, rope_tables
from neurips26.symm_optim.model import LM
from neurips26.symm_optim.settings import LMConfig

# ---------------------------------------------------------------- bbo_pile's decoder before the refactor


class OldLitAttention(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.c = c
        hs, heads, groups = c.head_size, c.n_heads, c.n_query_groups
        self.qkv = nn.Linear(c.d_model, (heads + 2 * groups) * hs, bias=False)
        self.proj = nn.Linear(heads * hs, c.d_model, bias=False)
        self.norm_q = nn.RMSNorm(hs, eps=c.norm_eps)
        self.norm_k = nn.RMSNorm(hs, eps=c.norm_eps)

    def forward(self, x, cos, sin):
        c = self.c
        batch, width, _ = x.shape
        hs, heads, groups = c.head_size, c.n_heads, c.n_query_groups
        q, k, v = self.qkv(x).split([heads * hs, groups * hs, groups * hs], dim=-1)
        q = self.norm_q(q.view(batch, width, heads, hs)).transpose(1, 2)
        k = self.norm_k(k.view(batch, width, groups, hs)).transpose(1, 2)
        v = v.view(batch, width, groups, hs).transpose(1, 2)
        half = hs // 2

        def rope(t):
            rotated = torch.cat([-t[..., half:], t[..., :half]], dim=-1)
            return t * cos + rotated * sin

        q, k = rope(q), rope(k)
        dropout = c.dropout if self.training else 0.0
        y = F.scaled_dot_product_attention(q, k, v, is_causal=True, dropout_p=dropout, enable_gqa=groups < heads)
        return self.proj(y.transpose(1, 2).reshape(batch, width, heads * hs))


class OldLitMLP(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.fc_1 = nn.Linear(c.d_model, c.mlp_hidden, bias=False)
        self.fc_2 = nn.Linear(c.d_model, c.mlp_hidden, bias=False)
        self.proj = nn.Linear(c.mlp_hidden, c.d_model, bias=False)

    def forward(self, x):
        return self.proj(F.silu(self.fc_1(x)) * self.fc_2(x))


class OldLitBlock(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.norm_1 = nn.RMSNorm(c.d_model, eps=c.norm_eps)
        self.attn = OldLitAttention(c)
        self.norm_2 = nn.RMSNorm(c.d_model, eps=c.norm_eps)
        self.mlp = OldLitMLP(c)
        self.drop = nn.Dropout(c.dropout)

    def forward(self, x, cos, sin):
        x = x + self.drop(self.attn(self.norm_1(x), cos, sin))
        return x + self.drop(self.mlp(self.norm_2(x)))


class OldDecoder(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.config = c
        with torch.random.fork_rng(devices=[]):
            self.wte = nn.Embedding(c.vocab_size, c.d_model)
            self.blocks = nn.ModuleList(OldLitBlock(c) for _ in range(c.n_layers))
            self.norm_f = nn.RMSNorm(c.d_model, eps=c.norm_eps)
        generator = torch.Generator().manual_seed(c.seed)
        with torch.no_grad():
            for name, module in self.named_modules():
                if isinstance(module, (nn.Linear, nn.Embedding)):
                    projection = name.endswith(("attn.proj", "mlp.proj"))
                    std = 1 / math.sqrt(c.d_model) / c.n_layers if projection else math.sqrt(2 / (5 * c.d_model))
                    nn.init.normal_(module.weight, 0.0, std, generator=generator)

    def forward(self, tokens):
        cos, sin = rope_tables(torch.arange(tokens.shape[1]), self.config.head_size, self.config.rope_base)
        x = self.wte(tokens)
        for block in self.blocks:
            x = block(x, cos, sin)
        return self.norm_f(x) @ self.wte.weight.T


# ---------------------------------------------------------------- symm_optim's LM before the refactor


class OldHFAttention(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.c = c
        self.q_proj = nn.Linear(c.d_model, c.n_heads * c.head_dim, bias=False)
        self.k_proj = nn.Linear(c.d_model, c.n_kv_heads * c.head_dim, bias=False)
        self.v_proj = nn.Linear(c.d_model, c.n_kv_heads * c.head_dim, bias=False)
        self.o_proj = nn.Linear(c.n_heads * c.head_dim, c.d_model, bias=False)
        self.q_norm = nn.RMSNorm(c.head_dim, eps=c.norm_eps)
        self.k_norm = nn.RMSNorm(c.head_dim, eps=c.norm_eps)

    def forward(self, x, cos, sin):
        c = self.c
        batch, width, _ = x.shape
        q = self.q_norm(self.q_proj(x).view(batch, width, c.n_heads, c.head_dim)).transpose(1, 2)
        k = self.k_norm(self.k_proj(x).view(batch, width, c.n_kv_heads, c.head_dim)).transpose(1, 2)
        v = self.v_proj(x).view(batch, width, c.n_kv_heads, c.head_dim).transpose(1, 2)
        half = c.head_dim // 2

        def rope(t):
            return t * cos + torch.cat([-t[..., half:], t[..., :half]], dim=-1) * sin

        q, k = rope(q), rope(k)
        y = F.scaled_dot_product_attention(q, k, v, is_causal=True, enable_gqa=c.n_kv_heads < c.n_heads)
        return self.o_proj(y.transpose(1, 2).reshape(batch, width, c.n_heads * c.head_dim))


class OldHFMLP(nn.Module):
    def __init__(self, d_model, d_ff):
        super().__init__()
        self.gate_proj = nn.Linear(d_model, d_ff, bias=False)
        self.up_proj = nn.Linear(d_model, d_ff, bias=False)
        self.down_proj = nn.Linear(d_ff, d_model, bias=False)

    def forward(self, x):
        return self.down_proj(F.silu(self.gate_proj(x)) * self.up_proj(x))


class OldMoE(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.top_k = c.top_k
        self.router = nn.Linear(c.d_model, c.n_experts, bias=False)
        self.experts = nn.ModuleList(OldHFMLP(c.d_model, c.d_ff) for _ in range(c.n_experts))

    def forward(self, x):
        probs = torch.softmax(self.router(x), dim=-1)
        top = probs.topk(self.top_k, dim=-1)
        gates = torch.zeros_like(probs).scatter(-1, top.indices, top.values)
        outputs = torch.stack([expert(x) for expert in self.experts], dim=-1)
        return (outputs * gates[..., None, :]).sum(-1)


class OldHFBlock(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.input_norm = nn.RMSNorm(c.d_model, eps=c.norm_eps)
        self.attn = OldHFAttention(c)
        self.post_attention_norm = nn.RMSNorm(c.d_model, eps=c.norm_eps)
        self.mlp = OldMoE(c) if c.is_moe else OldHFMLP(c.d_model, c.d_ff)

    def forward(self, x, cos, sin):
        x = x + self.attn(self.input_norm(x), cos, sin)
        return x + self.mlp(self.post_attention_norm(x))


class OldLM(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.config = c
        with torch.random.fork_rng(devices=[]):
            self.embed = nn.Embedding(c.vocab_size, c.d_model)
            self.blocks = nn.ModuleList(OldHFBlock(c) for _ in range(c.n_layers))
            self.norm = nn.RMSNorm(c.d_model, eps=c.norm_eps)
            self.lm_head = nn.Linear(c.d_model, c.vocab_size, bias=False)
        generator = torch.Generator().manual_seed(c.seed)
        with torch.no_grad():
            for module in self.modules():
                if isinstance(module, (nn.Linear, nn.Embedding)):
                    module.weight.normal_(0.0, c.init_std, generator=generator)

    def forward(self, tokens):
        inv_freq = self.config.rope_base ** (
            -torch.arange(0, self.config.head_dim, 2, dtype=torch.float64) / self.config.head_dim
        )
        angles = torch.arange(tokens.shape[1], dtype=torch.float64)[:, None] * inv_freq
        angles = torch.cat([angles, angles], dim=-1)
        cos, sin = angles.cos().float(), angles.sin().float()
        x = self.embed(tokens)
        for block in self.blocks:
            x = block(x, cos, sin)
        return self.lm_head(self.norm(x))


# ---------------------------------------------------------------- the comparisons


def assert_same(new: nn.Module, old: nn.Module, tokens: torch.Tensor, vocab: int, seed: int = 0) -> None:
    """Same parameter names, order and values; same logits; same gradients of a cross-entropy."""
    new_state, old_state = new.state_dict(), old.state_dict()
    assert list(new_state) == list(old_state)
    for name in new_state:
        assert torch.equal(new_state[name], old_state[name]), name
    logits = []
    for model in (new, old):
        torch.manual_seed(seed)  # dropout draws
        out = model(tokens[:, :-1])
        F.cross_entropy(out.reshape(-1, vocab), tokens[:, 1:].reshape(-1)).backward()
        logits.append(out.detach())
    assert torch.equal(logits[0], logits[1])
    for (name, a), (_, b) in zip(new.named_parameters(), old.named_parameters(), strict=True):
        assert torch.equal(a.grad, b.grad), name


BBO = dict(vocab_size=23, d_model=32, n_layers=2, n_heads=4, n_query_groups=2, head_size=8, mlp_hidden=48, context=64)


@pytest.mark.parametrize("changes", [{}, {"n_query_groups": 4}, {"n_query_groups": 1, "seed": 5}, {"dropout": 0.2}])
def test_bbo_pile_decoder_equals_its_code_before_sharing(changes):
    config = DecoderConfig(**(BBO | changes))
    tokens = torch.randint(0, 23, (3, 17), generator=torch.Generator().manual_seed(1))
    assert_same(Decoder(config).train(), OldDecoder(config).train(), tokens, 23)


SYMM = dict(vocab_size=61, d_model=32, n_layers=2, n_heads=4, n_kv_heads=2, head_dim=8, d_ff=48, context=32, seed=3)


@pytest.mark.parametrize("changes", [{}, {"n_kv_heads": 4}, {"n_experts": 4, "top_k": 2, "seed": 7}])
def test_symm_optim_lm_equals_its_code_before_sharing(changes):
    config = LMConfig(**(SYMM | changes))
    tokens = torch.randint(0, 61, (3, 17), generator=torch.Generator().manual_seed(2))
    assert_same(LM(config).train(), OldLM(config).train(), tokens, 61)


def test_layouts_name_the_parameters_of_their_papers():
    lit = Attention(16, 4, 2, 4, layout=LITGPT)
    hf = Attention(16, 4, 2, 4, layout=HF)
    assert list(lit.state_dict()) == ["qkv.weight", "proj.weight", "norm_q.weight", "norm_k.weight"]
    assert list(hf.state_dict()) == [
        "q_proj.weight",
        "k_proj.weight",
        "v_proj.weight",
        "o_proj.weight",
        "q_norm.weight",
        "k_norm.weight",
    ]
    bare = Attention(16, 4, 4, 4, layout=LITGPT, qk_norm_eps=None, bias=True)
    assert list(bare.state_dict()) == ["qkv.weight", "qkv.bias", "proj.weight", "proj.bias"]


def test_rope_orders_give_the_same_values():
    x = torch.randn(2, 3, 5, 8, generator=torch.Generator().manual_seed(0))
    cos, sin = rope_tables(torch.arange(5), 8, 1e6)
    assert torch.equal(apply_rope(x, cos, sin, True), apply_rope(x, cos, sin, False))


def test_attention_refuses_heads_that_do_not_divide_into_groups():
    with pytest.raises(ValueError, match="n_heads=4 is not a multiple of n_kv_heads=3"):
        Attention(16, 4, 3, 4)


def test_a_block_without_qk_norm_has_no_qk_norm_weights_and_keeps_the_rest():
    torch.manual_seed(0)
    normed = Block(16, 4, 2, 4, 32)
    torch.manual_seed(0)
    bare = Block(16, 4, 2, 4, 32, qk_norm=False)
    assert set(normed.state_dict()) - set(bare.state_dict()) == {"attn.norm_q.weight", "attn.norm_k.weight"}
    assert not bare.attn.qk_norm and normed.attn.qk_norm
    # with the q/k norms at their initial unit weights the two differ only by normalising q and k
    x = torch.randn(2, 5, 16, generator=torch.Generator().manual_seed(1))
    cos, sin = rope_tables(torch.arange(5), 4, 1e4)
    bare.load_state_dict({k: v for k, v in normed.state_dict().items() if "norm_q" not in k and "norm_k" not in k})
    y_normed, _ = normed(x, cos, sin)
    y_bare, _ = bare(x, cos, sin)
    assert y_normed.shape == y_bare.shape == x.shape and not torch.allclose(y_normed, y_bare)
