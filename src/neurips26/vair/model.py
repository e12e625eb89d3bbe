r"""The small decoder trained here to solve and to grade: the shared pre-norm block
(:mod:`neurips26.common.transformer`, Hugging Face layout: rotary attention with q/k RMSNorm, SwiGLU, no biases),
an untied embedding and head, a final RMSNorm, every linear and the embedding drawn N(0, init_std^2) from a
generator seeded by ``DecoderConfig.seed`` (the global random state is left alone), as the sibling decoders of
``symm_optim`` and ``noisy_divergence``.

``forward(tokens, residual=False, patch=None, at=None) -> (logits (B, T, V), residual (B, L+1, T, d) or empty)``
(with ``at`` (B, K) positions, logits (B, K, V) at those positions only: the head where it is read). The
residual stream is indexed by layer, 0 the embedding output and l the output of block l, the hidden states a probe
reads (arXiv 2606.01462 probes "the hidden state at the last solution token" per layer). ``patch`` overwrites the
residual stream at given layers and positions with given vectors (activation patching): layer l's state is replaced
before block l+1 reads it, so every later position and layer sees the patched vectors.

Attention runs by explicit math (``stats=False``): under ``vmap`` over an ensemble's members it batches, where the
fused kernel falls back member by member on the CPU. ``fused=True`` runs the fused kernel
(``scaled_dot_product_attention``), the faster path for one member outside ``vmap`` (evaluation: about twice as fast
on our 2-core CPU); the two agree to float rounding.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
import torch.nn.functional as F
from torch import nn

from neurips26.common.transformer import HF, Block, rope_tables, seeded_normal_init_

__all__ = [
    "SIZES",
    "Decoder",
    "DecoderConfig",
    "Patch",
    "check_positions",
    "config_for",
    "ensemble_logits",
    "n_parameters",
]


@dataclass(frozen=True)
class DecoderConfig:
    vocab_size: int
    context: int
    d_model: int = 64
    n_layers: int = 2
    n_heads: int = 4
    d_ff: int = 192
    init_std: float = 0.02
    norm_eps: float = 1e-6
    rope_base: float = 10000.0
    seed: int = 0

    def __post_init__(self) -> None:
        for name in ("vocab_size", "context", "d_model", "n_layers", "n_heads", "d_ff"):
            if int(getattr(self, name)) < 1:
                raise ValueError(f"DecoderConfig.{name} must be >= 1, got {getattr(self, name)}")
        if self.d_model % self.n_heads or (self.d_model // self.n_heads) % 2:
            raise ValueError(
                f"d_model {self.d_model} must split into {self.n_heads} heads of even width (rotary embeddings)"
            )

    @property
    def head_dim(self) -> int:
        return self.d_model // self.n_heads


# named sizes (DiT's registry of models); vocab_size, context and seed come from the data and the run
SIZES: dict[str, dict[str, int]] = {
    "tiny": {"d_model": 32, "n_layers": 2, "n_heads": 2, "d_ff": 64},  # smoke and tests
    "small": {"d_model": 64, "n_layers": 3, "n_heads": 4, "d_ff": 192},
    "base": {"d_model": 128, "n_layers": 3, "n_heads": 4, "d_ff": 384},
}


def config_for(size: str, vocab_size: int, context: int, seed: int = 0) -> DecoderConfig:
    """The named size ``size`` of :data:`SIZES` for a vocabulary, context and initialisation seed."""
    if size not in SIZES:
        raise ValueError(f"unknown model size {size!r}; known: {sorted(SIZES)}")
    return DecoderConfig(vocab_size=vocab_size, context=context, seed=seed, **SIZES[size])


@dataclass(frozen=True)
class Patch:
    """Overwrite the residual stream of layers ``layers`` (indices into the L+1 states) at ``positions`` (B, P) with
    ``vectors`` (B, len(layers), P, d)."""

    layers: tuple[int, ...]
    positions: torch.Tensor
    vectors: torch.Tensor


def check_positions(positions: torch.Tensor, lengths: torch.Tensor | int) -> None:
    """ValueError naming the (row, position) pairs of ``positions`` (B, P) outside ``0 .. lengths[row] - 1``."""
    limit = torch.as_tensor(lengths).reshape(-1, 1) if torch.is_tensor(lengths) else lengths
    outside = (positions < 0) | (positions >= limit)
    if bool(outside.any()):
        rows, cols = torch.nonzero(outside, as_tuple=True)
        pairs = [(int(r), int(positions[r, c])) for r, c in zip(rows[:5], cols[:5])]
        raise ValueError(f"patch positions outside the sequence: (row, position) {pairs} ({int(outside.sum())} in all)")


class Decoder(nn.Module):
    """``forward(tokens (B, T), residual=False, patch=None, at=None) -> (logits (B, T, V) or (B, K, V) at ``at``,
    residual (B, L+1, T, d) or an empty tensor)`` (module docstring)."""

    def __init__(self, config: DecoderConfig):
        super().__init__()
        self.config = c = config
        with torch.random.fork_rng(devices=[]):  # modules built without drawing from the global state
            self.embed = nn.Embedding(c.vocab_size, c.d_model)
            block = (c.d_model, c.n_heads, c.n_heads, c.head_dim, c.d_ff)
            self.blocks = nn.ModuleList(Block(*block, layout=HF, norm_eps=c.norm_eps) for _ in range(c.n_layers))
            self.norm, self.lm_head = nn.RMSNorm(c.d_model, eps=c.norm_eps), nn.Linear(c.d_model, c.vocab_size, False)
        seeded_normal_init_(self, c.init_std, c.seed)
        tables = rope_tables(torch.arange(c.context), c.head_dim, c.rope_base)
        for name, table in zip(("rope_cos", "rope_sin"), tables):
            self.register_buffer(name, table, persistent=False)

    def forward(
        self,
        tokens: torch.Tensor,
        residual: bool = False,
        patch: Patch | None = None,
        at: torch.Tensor | None = None,
        fused: bool = False,
    ) -> tuple[torch.Tensor, torch.Tensor]:
        if tokens.dim() != 2:
            raise ValueError(f"tokens must be (batch, positions), got shape {tuple(tokens.shape)}")
        width = tokens.shape[1]
        if width > self.config.context:
            raise ValueError(f"sequence length {width} exceeds the model's context {self.config.context}")
        writes = self._writes(patch, tokens.shape) if patch is not None else {}
        cos, sin = self.rope_cos[:width], self.rope_sin[:width]
        x = self.embed(tokens)
        states = []
        for layer in range(self.config.n_layers + 1):
            if layer in writes:
                index, vectors = writes[layer]
                x = x.scatter(1, index, vectors)
            if residual:
                states.append(x)
            if layer < self.config.n_layers:
                x, _ = self.blocks[layer](x, cos, sin, stats=None if fused else False)
        if at is not None:  # the head only where it is read: (B, K) positions -> logits (B, K, V)
            x = x.gather(1, at[..., None].expand(-1, -1, x.shape[-1]))
        logits = self.lm_head(self.norm(x))
        return logits, torch.stack(states, 1) if residual else logits.new_zeros(0)

    def _writes(self, patch: Patch, shape: torch.Size) -> dict[int, tuple[torch.Tensor, torch.Tensor]]:
        """Per patched layer, the scatter index (B, P, d) and the vectors (B, P, d); ValueError for a layer or
        position outside the model or the sequence."""
        batch, width = shape
        d, n_states = self.config.d_model, self.config.n_layers + 1
        bad_layers = [layer for layer in patch.layers if not 0 <= layer < n_states]
        if bad_layers or len(set(patch.layers)) != len(patch.layers):
            raise ValueError(f"patch layers {list(patch.layers)} must be distinct and in 0..{n_states - 1}")
        positions = patch.positions
        if positions.dim() != 2 or positions.shape[0] != batch:
            raise ValueError(f"patch positions must be (batch={batch}, P), got {tuple(positions.shape)}")
        expected = (batch, len(patch.layers), positions.shape[1], d)
        if tuple(patch.vectors.shape) != expected:
            raise ValueError(f"patch vectors must be {expected}, got {tuple(patch.vectors.shape)}")
        check_positions(positions, width)
        index = positions[..., None].expand(-1, -1, d)
        return {layer: (index, patch.vectors[:, i]) for i, layer in enumerate(patch.layers)}


def _rms_norm(x: torch.Tensor, weight: torch.Tensor, eps: float) -> torch.Tensor:
    """``nn.RMSNorm`` over the last dimension with a per-member weight (S, d) broadcast over x (S, ..., d): torch's
    own arithmetic (``x * rsqrt(mean(x^2) + eps) * weight``)."""
    shape = (weight.shape[0],) + (1,) * (x.dim() - 2) + (weight.shape[-1],)
    return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + eps) * weight.view(shape)


def _rotate(x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor) -> torch.Tensor:
    """``apply_rope`` of the HF layout (``x cos`` first, then ``rotate_half(x) sin``)."""
    half = x.shape[-1] // 2
    return x * cos + torch.cat([-x[..., half:], x[..., :half]], dim=-1) * sin


def ensemble_logits(
    params: dict[str, torch.Tensor], config: DecoderConfig, tokens: torch.Tensor, at: torch.Tensor
) -> torch.Tensor:
    """The logits (S, B, K, V) at positions ``at`` (S, B, K) of S members' :class:`Decoder` on their own ``tokens``
    (S, B, T), from the ensemble's stacked parameters ``params`` (``Ensemble.params``): the arithmetic of
    ``Ensemble(...)(tokens, False, None, at)`` written out for the batch of members (the training step's forward),
    with the members' q/k/v and gate/up projections each one batched matmul and the attention the fused causal
    kernel over members x rows (``vmap`` must run it by explicit math: the same values to float rounding)."""
    c = config
    members, batch, width = tokens.shape
    if width > c.context:
        raise ValueError(f"sequence length {width} exceeds the model's context {c.context}")
    d, heads, hs = c.d_model, c.n_heads, c.head_dim
    tables = rope_tables(torch.arange(width, device=tokens.device), hs, c.rope_base)
    cos, sin = (t.to(tokens.device) for t in tables)
    embed = params["embed.weight"]  # (S, V, d)
    offsets = torch.arange(members, device=tokens.device).view(-1, 1, 1) * embed.shape[1]
    x = F.embedding(tokens + offsets, embed.reshape(-1, d)).view(members, batch * width, d)
    for layer in range(c.n_layers):
        p = f"blocks.{layer}."
        h = _rms_norm(x, params[p + "input_norm.weight"], c.norm_eps)
        w_qkv = torch.cat([params[p + f"attn.{n}_proj.weight"] for n in "qkv"], 1)  # (S, 3 H hs, d)
        q, k, v = torch.bmm(h, w_qkv.transpose(1, 2)).view(members, batch, width, 3, heads, hs).unbind(3)
        q = _rms_norm(q, params[p + "attn.q_norm.weight"], c.norm_eps)
        k = _rms_norm(k, params[p + "attn.k_norm.weight"], c.norm_eps)
        q, k, v = (t.transpose(2, 3).reshape(members * batch, heads, width, hs) for t in (q, k, v))
        y = F.scaled_dot_product_attention(_rotate(q, cos, sin), _rotate(k, cos, sin), v, is_causal=True)
        y = y.view(members, batch, heads, width, hs).transpose(2, 3).reshape(members, batch * width, heads * hs)
        x = x + torch.bmm(y, params[p + "attn.o_proj.weight"].transpose(1, 2))
        h = _rms_norm(x, params[p + "post_attention_norm.weight"], c.norm_eps)
        w_gu = torch.cat([params[p + "mlp.gate_proj.weight"], params[p + "mlp.up_proj.weight"]], 1)
        gate, up = torch.bmm(h, w_gu.transpose(1, 2)).chunk(2, -1)
        x = x + torch.bmm(F.silu(gate) * up, params[p + "mlp.down_proj.weight"].transpose(1, 2))
    index = (at + torch.arange(batch, device=at.device).view(1, -1, 1) * width).reshape(members, -1)
    read = _rms_norm(x.gather(1, index[..., None].expand(-1, -1, d)), params["norm.weight"], c.norm_eps)
    return torch.bmm(read, params["lm_head.weight"].transpose(1, 2)).view(members, batch, at.shape[-1], -1)


def n_parameters(model: Decoder) -> int:
    return sum(p.numel() for p in model.parameters())
