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

The attention, MLP and block are :mod:`neurips26.common.transformer`'s, in its litgpt layout (``LITGPT``:
the parameter names above, one fused ``qkv`` projection).

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

import torch
from torch import nn

from neurips26.common.transformer import LITGPT, Block, apply_rope, rope_tables
from neurips26.common.validation import integer, number, validate

__all__ = ["Decoder", "DecoderConfig", "apply_rope", "n_parameters", "rope_tables"]


@dataclass(frozen=True)
class DecoderConfig:
    """Sizes of the decoder. The defaults are bbo-pile's ``qwen3_2M.yaml`` with our vocabulary size
    and a quick-scale context; ``context`` is the number of positions the rotary tables cover."""

    vocab_size: int = integer(2, default=1185)
    d_model: int = integer(1, default=128)
    n_layers: int = integer(1, default=7)
    n_heads: int = integer(1, default=8)
    n_query_groups: int = integer(1, default=4)
    head_size: int = integer(1, default=64)
    mlp_hidden: int = integer(1, default=384)
    context: int = integer(1, default=4096)
    dropout: float = number(0.0, 1.0, high_open=True, default=0.0)
    rope_base: float = number(0.0, low_open=True, default=1e6)
    norm_eps: float = number(0.0, low_open=True, default=1e-6)
    seed: int = integer(0, default=0)

    def __post_init__(self):
        validate(self)
        if self.n_heads % self.n_query_groups:
            raise ValueError(
                f"DecoderConfig.n_heads={self.n_heads} is not a multiple of n_query_groups={self.n_query_groups}"
            )
        if self.head_size % 2:
            raise ValueError(f"DecoderConfig.head_size must be even for rotary embeddings, got {self.head_size}")


class Decoder(nn.Module):
    """The causal decoder of the module docstring; ``forward(tokens (B, T)) -> logits (B, T, V)``."""

    def __init__(self, config: DecoderConfig = DecoderConfig()):
        super().__init__()
        if not isinstance(config, DecoderConfig):
            raise TypeError(f"Decoder needs a DecoderConfig, got {type(config).__name__}")
        self.config = config
        with torch.random.fork_rng(devices=[]):  # torch's default init draws from the global RNG
            self.wte = nn.Embedding(config.vocab_size, config.d_model)
            self.blocks = nn.ModuleList(
                Block(
                    config.d_model,
                    config.n_heads,
                    config.n_query_groups,
                    config.head_size,
                    config.mlp_hidden,
                    layout=LITGPT,
                    norm_eps=config.norm_eps,
                    dropout=config.dropout,
                )
                for _ in range(config.n_layers)
            )
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
