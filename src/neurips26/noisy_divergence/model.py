r"""Small Llama-style decoder LMs that report the activation statistics of the divergence study (Zhang et al. 2026,
arXiv 2602.02400, train Llama-3-style models; the diagnostics follow Wortsman et al. 2023, "Small-scale proxies for
large-scale Transformer training instabilities": attention-logit growth and output-logit divergence).

The blocks are :mod:`neurips26.common.transformer`'s in its Hugging Face layout (pre-RMSNorm, rotary attention,
SwiGLU, no biases), with the q/k RMSNorm on or off (``qk_norm``; the paper's mitigation is "QK-layernorm": we
normalise q and k per head by RMSNorm, not LayerNorm) and the explicit-math attention path that returns its
statistics. Untied embedding and head, a final RMSNorm, N(0, init_std^2) initialisation of every linear and the
embedding from a generator seeded by ``LMConfig.seed`` (the global random state is left alone).

``forward(tokens, key_mask, diagnostics, attention) -> (logits, diag)``: ``diag`` is (n_layers, len(DIAG)) per
sequence batch: per layer the attention statistics (``ATTENTION_STATS``: max |logit|, mean entropy, q and k RMS) and
the RMS of the residual stream after the block; empty when ``diagnostics`` is False. With a ``key_mask`` (B, T) of
noise positions, ``diag`` gains a last column (``DIAG_NOISY``): the attention mass that clean queries put on noise
keys, averaged over heads and clean queries (the attention probabilities are recomputed from the block's own q and
k, by the same explicit math, on diagnostic steps only). With diagnostics the attention runs by
explicit math (its scores are needed); without, by ``attention``: ``explicit`` (the same math, statistics left out:
the path of our smoke and quick runs, whose numbers were produced by it) or ``sdpa``
(``torch.nn.functional.scaled_dot_product_attention``, a fused kernel that never holds the T x T scores: the path
of paper-scale training). Everything is a tensor output, so an ensemble's forward under ``vmap`` returns each
member's statistics.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch
from torch import nn

from neurips26.common.transformer import ATTENTION_STATS, HF, Block, apply_rope, rope_tables, seeded_normal_init_

from .paths import ATTENTIONS

__all__ = [
    "ATTENTIONS",
    "DIAG",
    "DIAG_NOISY",
    "LM",
    "LMConfig",
    "n_parameters",
    "noise_attention_mass",
    "uniform_noise_mass",
]

DIAG = (*ATTENTION_STATS, "resid_rms")
DIAG_NOISY = (*DIAG, "noise_mass")


@torch.no_grad()
def noise_attention_mass(block: Block, x: torch.Tensor, cos, sin, key_mask: torch.Tensor) -> torch.Tensor:
    """Mean over heads and clean queries of the causal attention probability that ``block`` puts on noise keys
    (``key_mask`` (B, T) True at noise), for the block's input ``x`` (B, T, d): its own normed input, q and k
    (q/k norm and rotary embedding included) and softmax(q k^T / sqrt(hs)) as the explicit path computes it. NaN
    without a clean query."""
    attn = block.attn
    q, k, _ = attn._heads(getattr(block, block.layout.attn_norm)(x))
    if cos is not None:
        q = apply_rope(q, cos, sin, block.layout.rotate_first)
        k = apply_rope(k, cos, sin, block.layout.rotate_first)
    if k.shape[1] != q.shape[1]:
        k = k.repeat_interleave(q.shape[1] // k.shape[1], dim=1)
    width = q.shape[2]
    future = torch.full((width, width), float("-inf"), device=q.device).triu(1)
    probs = torch.softmax((q @ k.transpose(-1, -2)) / math.sqrt(q.shape[-1]) + future, dim=-1)
    noise = key_mask.to(probs.dtype)
    on_noise = (probs * noise[:, None, None, :]).sum(-1).mean(1)  # (B, T): per query, mean over heads
    clean = 1.0 - noise
    return (on_noise * clean).sum() / clean.sum()


def uniform_noise_mass(key_mask: torch.Tensor) -> torch.Tensor:
    """What :func:`noise_attention_mass` gives for uniform causal attention, from the mask (..., B, T) alone: the
    mean over clean queries t of the share of noise among keys 0..t (NaN without a clean query). The measured mass
    divided by it says how much more than its share of the keys attention puts on noise."""
    noise = key_mask.to(torch.float64)
    share = noise.cumsum(-1) / torch.arange(1, noise.shape[-1] + 1, dtype=torch.float64, device=noise.device)
    clean = 1.0 - noise
    return (share * clean).sum((-2, -1)) / clean.sum((-2, -1))


@dataclass(frozen=True)
class LMConfig:
    vocab_size: int
    d_model: int
    n_layers: int
    n_heads: int
    head_dim: int
    d_ff: int
    context: int
    qk_norm: bool = False
    init_std: float = 0.02
    norm_eps: float = 1e-6
    rope_base: float = 10000.0
    seed: int = 0

    def __post_init__(self) -> None:
        for name in ("vocab_size", "d_model", "n_layers", "n_heads", "head_dim", "d_ff", "context"):
            if int(getattr(self, name)) < 1:
                raise ValueError(f"LMConfig.{name} must be >= 1, got {getattr(self, name)}")
        if self.head_dim % 2:
            raise ValueError(f"head_dim must be even for rotary embeddings, got {self.head_dim}")


class LM(nn.Module):
    """``forward(tokens (B, T), key_mask=None, diagnostics=True, attention="explicit") -> (logits (B, T, V), diag
    (n_layers, len(DIAG)), with a key mask (n_layers, len(DIAG_NOISY)), or empty)``."""

    def __init__(self, config: LMConfig):
        super().__init__()
        self.config = c = config
        with torch.random.fork_rng(devices=[]):
            self.embed = nn.Embedding(c.vocab_size, c.d_model)
            self.blocks = nn.ModuleList(
                Block(
                    c.d_model,
                    c.n_heads,
                    c.n_heads,
                    c.head_dim,
                    c.d_ff,
                    layout=HF,
                    norm_eps=c.norm_eps,
                    qk_norm=c.qk_norm,
                )
                for _ in range(c.n_layers)
            )
            self.norm = nn.RMSNorm(c.d_model, eps=c.norm_eps)
            self.lm_head = nn.Linear(c.d_model, c.vocab_size, bias=False)
        seeded_normal_init_(self, c.init_std, c.seed)
        cos, sin = rope_tables(torch.arange(c.context), c.head_dim, c.rope_base)
        self.register_buffer("rope_cos", cos, persistent=False)
        self.register_buffer("rope_sin", sin, persistent=False)

    def forward(
        self,
        tokens: torch.Tensor,
        key_mask: torch.Tensor | None = None,
        diagnostics: bool = True,
        attention: str = "explicit",
    ) -> tuple[torch.Tensor, torch.Tensor]:
        if attention not in ATTENTIONS:
            raise ValueError(f"attention must be one of {ATTENTIONS}, got {attention!r}")
        if tokens.dim() != 2:
            raise ValueError(f"tokens must be (batch, positions), got shape {tuple(tokens.shape)}")
        width = tokens.shape[1]
        if width > self.config.context:
            raise ValueError(f"sequence length {width} exceeds the model's context {self.config.context}")
        cos, sin = self.rope_cos[:width], self.rope_sin[:width]
        kind = tokens.device.type
        if kind in ("cpu", "cuda") and torch.is_autocast_enabled(kind):
            # rotary tables in the autocast dtype, so that q and k stay in it as v does (SDPA wants one dtype)
            dtype = torch.get_autocast_dtype(kind)
            cos, sin = cos.to(dtype), sin.to(dtype)
        x = self.embed(tokens)
        # Block's stats: True or False run explicit math (with or without statistics), None runs SDPA
        explicit = diagnostics if diagnostics or attention == "explicit" else None
        rows = []
        for block in self.blocks:
            noisy = diagnostics and key_mask is not None
            mass = noise_attention_mass(block, x, cos, sin, key_mask)[None] if noisy else None
            x, stats = block(x, cos, sin, stats=explicit)
            if diagnostics:
                with torch.no_grad():
                    rows.append(torch.cat([stats, x.square().mean().sqrt()[None], *([] if mass is None else [mass])]))
        logits = self.lm_head(self.norm(x))
        return logits, torch.stack(rows) if diagnostics else logits.new_zeros(0)


def n_parameters(model: LM) -> dict[str, int]:
    """Parameter counts: ``embedding`` (embedding and head) and ``non_embedding`` (blocks and final norm)."""
    vocab = sum(p.numel() for n, p in model.named_parameters() if n.startswith(("embed.", "lm_head.")))
    total = sum(p.numel() for p in model.parameters())
    return {"embedding": vocab, "non_embedding": total - vocab, "total": total}
