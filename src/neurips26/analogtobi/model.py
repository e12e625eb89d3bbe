r"""The circuit generator of AnalogToBi (Kim et al. 2026, arXiv 2603.08720, Sec. 3.3; reference ``GPT_Pretrain.py``,
a nanoGPT): a decoder-only transformer over walk tokens, next-token cross-entropy.

Built from :mod:`neurips26.common.transformer`'s pre-norm block (litgpt layout, no q/k norm, dropout on attention
and residual branches) with a tied embedding and output layer, as nanoGPT ties them. Deliberate differences from
nanoGPT: rotary position embeddings instead of learned ones, RMSNorm instead of LayerNorm, a SwiGLU MLP instead of
GELU (the shared block); the paper size (6 layers, width 384, 6 heads, context 1024, dropout 0.2) is the paper
scale's config. Weights are drawn N(0, 0.02^2) from a generator seeded by ``GPTConfig.seed`` (nanoGPT's init), the
global random state is left alone.

:meth:`GPT.decode_step` appends one token per row with a key/value cache, so that sampling costs one token's
forward per step (every row of a sampling batch sits at the same position), attending to the slots filled so far.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import nn

from neurips26.common.transformer import LITGPT, Block, rope_tables, seeded_normal_init_
from neurips26.common.validation import integer, number, validate

__all__ = ["GPT", "GPTConfig", "n_parameters"]


@dataclass(frozen=True)
class GPTConfig:
    vocab_size: int = integer(2, default=512)
    d_model: int = integer(1, default=128)
    n_layers: int = integer(1, default=2)
    n_heads: int = integer(1, default=4)
    mlp_hidden: int = integer(1, default=384)
    context: int = integer(2, default=512)
    dropout: float = number(0.0, 1.0, high_open=True, default=0.0)
    rope_base: float = number(0.0, low_open=True, default=10000.0)
    seed: int = integer(0, default=0)

    def __post_init__(self):
        validate(self)
        if self.d_model % self.n_heads or (self.d_model // self.n_heads) % 2:
            raise ValueError(
                f"GPTConfig: d_model={self.d_model} must split into n_heads={self.n_heads} heads of even width"
            )

    @property
    def head_size(self) -> int:
        return self.d_model // self.n_heads


class GPT(nn.Module):
    """``forward(tokens (B, T)) -> logits (B, T, V)``."""

    def __init__(self, config: GPTConfig):
        super().__init__()
        self.config = c = config
        with torch.random.fork_rng(devices=[]):
            self.wte = nn.Embedding(c.vocab_size, c.d_model)
            self.blocks = nn.ModuleList(
                Block(
                    c.d_model,
                    c.n_heads,
                    c.n_heads,
                    c.head_size,
                    c.mlp_hidden,
                    layout=LITGPT,
                    dropout=c.dropout,
                    qk_norm=False,
                )
                for _ in range(c.n_layers)
            )
            self.norm_f = nn.RMSNorm(c.d_model, eps=1e-6)
        seeded_normal_init_(self, 0.02, c.seed)
        self.drop = nn.Dropout(c.dropout)

    @property
    def device(self) -> torch.device:
        return self.wte.weight.device

    def _tables(self, positions: torch.Tensor):
        return rope_tables(positions, self.config.head_size, self.config.rope_base)

    def _check(self, last_position: int) -> None:
        if last_position >= self.config.context:
            raise ValueError(f"position {last_position} is beyond the model's context {self.config.context}")

    def forward(self, tokens: torch.Tensor) -> torch.Tensor:
        self._check(tokens.shape[1] - 1)
        cos, sin = self._tables(torch.arange(tokens.shape[1], device=tokens.device))
        x = self.drop(self.wte(tokens))
        for block in self.blocks:
            x, _ = block(x, cos, sin)
        return self.norm_f(x) @ self.wte.weight.T

    @torch.no_grad()
    def new_cache(self, batch: int, capacity: int) -> list[tuple[torch.Tensor, torch.Tensor]]:
        """An empty key/value cache of ``capacity`` positions per layer for :meth:`decode_step`."""
        self._check(capacity - 1)
        c = self.config
        shape = (batch, c.n_heads, capacity, c.head_size)
        return [(self.wte.weight.new_zeros(shape), self.wte.weight.new_zeros(shape)) for _ in self.blocks]

    @torch.no_grad()
    def decode_step(self, token: torch.Tensor, position: int, cache: list) -> torch.Tensor:
        """Logits (B, V) after appending ``token`` (B,) at ``position`` of every row (attending to slots
        0..position); the cache is updated in place."""
        capacity = cache[0][0].shape[2]
        if position >= capacity:
            raise ValueError(f"position {position} is beyond the cache capacity {capacity}")
        where = torch.full((len(token),), position, device=token.device)
        cos, sin = self._tables(where[:, None, None])
        x = self.wte(token[:, None])
        # attention over the filled slots 0..position only: views of the cache (the block writes the new key and
        # value through them), equal to masking the empty slots after them, at a fraction of the cost early on
        for block, (keys, values) in zip(self.blocks, cache):
            x, _ = block(x, cos, sin, (keys[:, :, : position + 1], values[:, :, : position + 1]), where)
        return (self.norm_f(x) @ self.wte.weight.T)[:, 0]


def n_parameters(model: GPT) -> int:
    return sum(p.numel() for p in model.parameters())
