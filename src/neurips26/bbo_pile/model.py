r"""The BBO-Pile foundation model: a Qwen3-style causal decoder (bbo-pile trains litgpt's ``GPT`` with
``configs/qwen3_{2M,...,80M}.yaml``).

The architecture follows the 2M config (``n_embd=128, n_layer=7, n_head=8, head_size=64,
n_query_groups=4, intermediate_size=384``) and litgpt's Qwen3 code path:

* token embedding ``E`` (vocab x d), no embedding scaling, no positional embedding;
* ``n_layers`` pre-norm blocks ``x + Attn(RMSNorm(x))`` then ``x + SwiGLU(RMSNorm(x))`` (RMSNorm eps
  1e-6, no biases anywhere);
* attention: one projection to ``n_heads`` query heads and ``n_query_groups`` key/value heads of
  width ``head_size`` (grouped-query attention: query head ``h`` reads key/value group
  ``h // (n_heads / n_query_groups)``), per-head RMSNorm of q and k (``norm_qk``), rotary position
  embeddings of the whole head (base 1e6, litgpt's/HF's "rotate half" layout), causal
  ``scaled_dot_product_attention``, an output projection back to ``d``;
* SwiGLU MLP (litgpt's ``LLaMAMLP``): ``proj(silu(fc_1 x) * fc_2 x)``;
* a final RMSNorm and logits ``h E^T`` (tied input/output embeddings).

Initialisation is bbo-pile's ``pretrain.initialize_weights`` (GPT-NeoX): every linear and the
embedding N(0, sqrt(2 / (5 d))), the two output projections (``attn.proj``, ``mlp.proj``)
N(0, 1 / (sqrt(d) L)), norms 1. The weights are drawn from a generator seeded by
``DecoderConfig.seed``, so building a model leaves the global torch RNG untouched.

Deliberate differences: fp32 instead of bf16-mixed; optional dropout (0 by default, as in Qwen3) on
the attention probabilities and on each residual branch; a small key/value cache
(:meth:`Decoder.prefill`, :meth:`Decoder.decode_step`) with per-row positions, so that right-padded
prompts of different lengths decode as one batch (litgpt's cache assumes one shared position).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

__all__ = ["Decoder", "DecoderConfig", "n_parameters"]


def _is_int(value, low: int) -> bool:
    return not isinstance(value, bool) and isinstance(value, (int, np.integer)) and value >= low


@dataclass(frozen=True)
class DecoderConfig:
    """Sizes of the decoder. The defaults are bbo-pile's ``qwen3_2M.yaml`` with our vocabulary size
    and a quick-scale context; ``context`` is the number of positions the rotary tables cover."""

    vocab_size: int = 1185
    d_model: int = 128
    n_layers: int = 7
    n_heads: int = 8
    n_query_groups: int = 4
    head_size: int = 64
    mlp_hidden: int = 384
    context: int = 4096
    dropout: float = 0.0
    rope_base: float = 1e6
    norm_eps: float = 1e-6
    seed: int = 0

    def __post_init__(self):
        for name in (
            "vocab_size",
            "d_model",
            "n_layers",
            "n_heads",
            "n_query_groups",
            "head_size",
            "mlp_hidden",
            "context",
        ):
            if not _is_int(getattr(self, name), 1):
                raise ValueError(f"DecoderConfig.{name} must be a positive integer, got {getattr(self, name)!r}")
        if not _is_int(self.seed, 0):
            raise ValueError(f"DecoderConfig.seed must be an integer >= 0, got {self.seed!r}")
        if self.vocab_size < 2:
            raise ValueError(f"DecoderConfig.vocab_size must be >= 2, got {self.vocab_size}")
        if self.n_heads % self.n_query_groups:
            raise ValueError(
                f"DecoderConfig.n_heads={self.n_heads} is not a multiple of n_query_groups={self.n_query_groups}"
            )
        if self.head_size % 2:
            raise ValueError(f"DecoderConfig.head_size must be even for rotary embeddings, got {self.head_size}")
        if not (isinstance(self.dropout, (int, float)) and 0.0 <= self.dropout < 1.0):
            raise ValueError(f"DecoderConfig.dropout must lie in [0, 1), got {self.dropout!r}")
        for name in ("rope_base", "norm_eps"):
            value = getattr(self, name)
            if not (isinstance(value, (int, float)) and math.isfinite(value) and value > 0):
                raise ValueError(f"DecoderConfig.{name} must be a positive number, got {value!r}")


def rope_tables(positions: torch.Tensor, head_size: int, base: float) -> tuple[torch.Tensor, torch.Tensor]:
    """cos, sin (*positions.shape, head_size) of litgpt's ``build_rope_cache``: frequency
    ``base^(-2i/head_size)`` for pair i, repeated over both halves of the head."""
    inv_freq = base ** (-torch.arange(0, head_size, 2, dtype=torch.float64, device=positions.device) / head_size)
    angles = positions.to(torch.float64)[..., None] * inv_freq
    angles = torch.cat([angles, angles], dim=-1)
    return angles.cos().float(), angles.sin().float()


def apply_rope(x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor) -> torch.Tensor:
    """Rotate (B, H, T, hs) by the tables (T, hs) or (B, 1, T, hs) in the "rotate half" layout."""
    half = x.shape[-1] // 2
    rotated = torch.cat([-x[..., half:], x[..., :half]], dim=-1)
    return x * cos + rotated * sin


class Attention(nn.Module):
    def __init__(self, config: DecoderConfig):
        super().__init__()
        self.config = config
        hs, heads, groups = config.head_size, config.n_heads, config.n_query_groups
        self.qkv = nn.Linear(config.d_model, (heads + 2 * groups) * hs, bias=False)
        self.proj = nn.Linear(heads * hs, config.d_model, bias=False)
        self.norm_q = nn.RMSNorm(hs, eps=config.norm_eps)
        self.norm_k = nn.RMSNorm(hs, eps=config.norm_eps)

    def forward(self, x, cos, sin, cache=None, write_at=None, mask=None):
        """Without ``cache``: causal attention over x (B, T, d); returns (y, (k, v)). With ``cache``
        (K, V) of shape (B, G, capacity, hs): x is one token per row (B, 1, d) written at slot
        ``write_at`` (B,) and attending to the slots ``mask`` (B, 1, 1, capacity) allows."""
        c = self.config
        batch, width, _ = x.shape
        hs, heads, groups = c.head_size, c.n_heads, c.n_query_groups
        q, k, v = self.qkv(x).split([heads * hs, groups * hs, groups * hs], dim=-1)
        q = self.norm_q(q.view(batch, width, heads, hs)).transpose(1, 2)
        k = self.norm_k(k.view(batch, width, groups, hs)).transpose(1, 2)
        v = v.view(batch, width, groups, hs).transpose(1, 2)
        q, k = apply_rope(q, cos, sin), apply_rope(k, cos, sin)
        dropout = c.dropout if self.training else 0.0
        if cache is None:
            y = F.scaled_dot_product_attention(q, k, v, is_causal=True, dropout_p=dropout, enable_gqa=groups < heads)
            kv = (k, v)
        else:
            keys, values = cache
            rows = torch.arange(batch, device=x.device)
            keys[rows, :, write_at] = k[:, :, 0]
            values[rows, :, write_at] = v[:, :, 0]
            y = F.scaled_dot_product_attention(q, keys, values, attn_mask=mask, enable_gqa=groups < heads)
            kv = cache
        return self.proj(y.transpose(1, 2).reshape(batch, width, heads * hs)), kv


class SwiGLU(nn.Module):
    """litgpt's ``LLaMAMLP``."""

    def __init__(self, config: DecoderConfig):
        super().__init__()
        self.fc_1 = nn.Linear(config.d_model, config.mlp_hidden, bias=False)
        self.fc_2 = nn.Linear(config.d_model, config.mlp_hidden, bias=False)
        self.proj = nn.Linear(config.mlp_hidden, config.d_model, bias=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.proj(F.silu(self.fc_1(x)) * self.fc_2(x))


class Block(nn.Module):
    def __init__(self, config: DecoderConfig):
        super().__init__()
        self.norm_1 = nn.RMSNorm(config.d_model, eps=config.norm_eps)
        self.attn = Attention(config)
        self.norm_2 = nn.RMSNorm(config.d_model, eps=config.norm_eps)
        self.mlp = SwiGLU(config)
        self.drop = nn.Dropout(config.dropout)

    def forward(self, x, cos, sin, cache=None, write_at=None, mask=None):
        h, kv = self.attn(self.norm_1(x), cos, sin, cache, write_at, mask)
        x = x + self.drop(h)
        return x + self.drop(self.mlp(self.norm_2(x))), kv


class Decoder(nn.Module):
    """The causal decoder of the module docstring; ``forward(tokens (B, T)) -> logits (B, T, V)``."""

    def __init__(self, config: DecoderConfig = DecoderConfig()):
        super().__init__()
        if not isinstance(config, DecoderConfig):
            raise TypeError(f"Decoder needs a DecoderConfig, got {type(config).__name__}")
        self.config = config
        with torch.random.fork_rng(devices=[]):  # torch's default init draws from the global RNG
            self.wte = nn.Embedding(config.vocab_size, config.d_model)
            self.blocks = nn.ModuleList(Block(config) for _ in range(config.n_layers))
            self.norm_f = nn.RMSNorm(config.d_model, eps=config.norm_eps)
        self._init_weights()

    @torch.no_grad()
    def _init_weights(self) -> None:
        generator = torch.Generator().manual_seed(self.config.seed)
        d, n_layers = self.config.d_model, self.config.n_layers
        for name, module in self.named_modules():
            if isinstance(module, (nn.Linear, nn.Embedding)):
                projection = name.endswith(("attn.proj", "mlp.proj"))
                std = 1 / math.sqrt(d) / n_layers if projection else math.sqrt(2 / (5 * d))
                nn.init.normal_(module.weight, 0.0, std, generator=generator)

    @property
    def device(self) -> torch.device:
        return self.wte.weight.device

    def logits(self, hidden: torch.Tensor) -> torch.Tensor:
        """Tied output layer: ``norm_f(h) E^T``."""
        return self.norm_f(hidden) @ self.wte.weight.T

    def _check(self, tokens: torch.Tensor, last_position: int) -> None:
        if tokens.dim() != 2:
            raise ValueError(f"tokens must be (batch, positions), got shape {tuple(tokens.shape)}")
        if last_position >= self.config.context:
            raise ValueError(f"position {last_position} is beyond the model's context {self.config.context}")

    def forward(self, tokens: torch.Tensor) -> torch.Tensor:
        self._check(tokens, tokens.shape[1] - 1)
        cos, sin = self._tables(torch.arange(tokens.shape[1], device=tokens.device))
        x = self.wte(tokens)
        for block in self.blocks:
            x, _ = block(x, cos, sin)
        return self.logits(x)

    def _tables(self, positions: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        return rope_tables(positions, self.config.head_size, self.config.rope_base)

    @torch.no_grad()
    def prefill(self, tokens: torch.Tensor, extra: int, last: torch.Tensor) -> tuple[torch.Tensor, list]:
        """Causal pass over right-padded prompts (B, T) whose last real tokens sit at ``last`` (B,);
        returns the logits (B, V) there and a cache of capacity ``T + extra`` per layer for
        :meth:`decode_step`. Slots past a row's prompt hold padding and are overwritten before any
        query can see them."""
        self._check(tokens, tokens.shape[1] + extra - 1)
        cos, sin = self._tables(torch.arange(tokens.shape[1], device=tokens.device))
        x, cache = self.wte(tokens), []
        for block in self.blocks:
            x, (k, v) = block(x, cos, sin)
            pad = k.new_zeros(*k.shape[:2], extra, k.shape[-1])
            cache.append((torch.cat([k, pad], dim=2), torch.cat([v, pad], dim=2)))
        return self.logits(x[torch.arange(len(x), device=x.device), last]), cache

    @torch.no_grad()
    def decode_step(self, token: torch.Tensor, position: torch.Tensor, cache: list) -> torch.Tensor:
        """Logits (B, V) after appending ``token`` (B,) at ``position`` (B,) of each row, attending
        to that row's slots ``0..position``; the cache is updated in place."""
        capacity = cache[0][0].shape[2]
        if int(position.max()) >= capacity:
            raise ValueError(f"position {int(position.max())} is beyond the cache capacity {capacity}")
        self._check(token[:, None], int(position.max()))
        cos, sin = self._tables(position[:, None, None])  # (B, 1, 1, hs)
        mask = (torch.arange(capacity, device=token.device) <= position[:, None])[:, None, None]
        x = self.wte(token[:, None])
        for block, layer_cache in zip(self.blocks, cache):
            x, _ = block(x, cos, sin, layer_cache, position, mask)
        return self.logits(x)[:, 0]


def n_parameters(model: Decoder, non_embedding: bool = True) -> int:
    """Number of parameters; ``non_embedding`` drops the (tied) embedding matrix, Kaplan et al.'s N
    in ``C = 6 N D`` (the output layer is that same matrix, so it is dropped too)."""
    total = sum(p.numel() for p in model.parameters())
    return total - model.wte.weight.numel() if non_embedding else total
