r"""The parts of a Qwen3-style pre-norm decoder, shared by the papers that build one: rotary position
embeddings, grouped-query attention with per-head RMSNorm of q and k, the SwiGLU MLP and the block.

One implementation, two parameter layouts (:class:`Layout`), so that each paper keeps the parameter names
of the code it follows (and of its stored models):

* :data:`LITGPT` (``bbo_pile``, litgpt's ``GPT``): one fused projection ``qkv`` to the query heads then the
  key and value groups, output ``proj``, ``norm_q`` / ``norm_k``; MLP ``fc_1`` (gate), ``fc_2`` (up),
  ``proj`` (down); block norms ``norm_1`` / ``norm_2``;
* :data:`HF` (``symm_optim``, Hugging Face's ``Qwen3ForCausalLM``): separate ``q_proj``, ``k_proj``,
  ``v_proj``, ``o_proj``, ``q_norm`` / ``k_norm``; MLP ``gate_proj``, ``up_proj``, ``down_proj``; block
  norms ``input_norm`` / ``post_attention_norm``.

The fused and the separate projections are not the same floating-point computation (one matrix product
against three), so the layout also says which is run. Modules are registered in the same order in both
layouts (projections, output projection, q/k norms; attention norm, attention, MLP norm, MLP; gate, up,
down), the order in which a paper's seeded initialisation visits them. A layout also keeps the order of
the rotary embedding's operations in its paper's first code (:func:`apply_rope`'s ``rotate_first``), so
that gradients, not only outputs, stay bitwise what they were.

Rotary embeddings are litgpt's / HF's "rotate half" layout over the whole head: pair ``i`` turns by
``position * base^(-2i / head_size)``, the angles computed in float64 and their cos / sin rounded to
float32. Attention is ``torch.nn.functional.scaled_dot_product_attention``: causal by default, or under
an explicit boolean ``mask``; with a key/value cache (``cache``, ``write_at``) one new token per row is
written into the cache and attends to the slots the mask allows (per-row positions, so that right-padded
prompts of different lengths decode as one batch). Attention may also run without rotary tables, q/k
norms or the causal mask, with biased projections (SASRec's attention, ``seqrec_audit``).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import torch
import torch.nn.functional as F
from torch import nn

__all__ = [
    "ATTENTION_STATS",
    "HF",
    "LITGPT",
    "Attention",
    "Block",
    "Layout",
    "SwiGLU",
    "apply_rope",
    "explicit_causal_attention",
    "seeded_normal_init_",
    "rope_tables",
]


@dataclass(frozen=True)
class Layout:
    """Module names of one parameter layout; ``qkv`` is one name (fused projection) or three (q, k, v)."""

    qkv: str | tuple[str, str, str]
    out: str
    q_norm: str = ""  # names a layout does not use may stay empty (an attention-only layout)
    k_norm: str = ""
    gate: str = ""
    up: str = ""
    down: str = ""
    attn_norm: str = ""
    mlp_norm: str = ""
    rotate_first: bool = True  # apply_rope's op order in the code the layout comes from

    @property
    def fused(self) -> bool:
        return isinstance(self.qkv, str)


LITGPT = Layout("qkv", "proj", "norm_q", "norm_k", "fc_1", "fc_2", "proj", "norm_1", "norm_2")
HF = Layout(
    ("q_proj", "k_proj", "v_proj"),
    "o_proj",
    "q_norm",
    "k_norm",
    "gate_proj",
    "up_proj",
    "down_proj",
    "input_norm",
    "post_attention_norm",
    rotate_first=False,
)


def rope_tables(positions: torch.Tensor, head_size: int, base: float) -> tuple[torch.Tensor, torch.Tensor]:
    """cos, sin (*positions.shape, head_size) of litgpt's ``build_rope_cache``: frequency
    ``base^(-2i/head_size)`` for pair i, repeated over both halves of the head."""
    inv_freq = base ** (-torch.arange(0, head_size, 2, dtype=torch.float64, device=positions.device) / head_size)
    angles = positions.to(torch.float64)[..., None] * inv_freq
    angles = torch.cat([angles, angles], dim=-1)
    return angles.cos().float(), angles.sin().float()


def apply_rope(x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor, rotate_first: bool = True) -> torch.Tensor:
    """Rotate (B, H, T, hs) by the tables (T, hs) or (B, 1, T, hs) in the "rotate half" layout:
    ``x cos + rotate_half(x) sin``. ``rotate_first`` builds ``rotate_half(x)`` before ``x cos`` (the same
    values either way; the order in which backward sums the gradient of x differs in rounding)."""
    half = x.shape[-1] // 2
    if rotate_first:
        rotated = torch.cat([-x[..., half:], x[..., :half]], dim=-1)
        return x * cos + rotated * sin
    return x * cos + torch.cat([-x[..., half:], x[..., :half]], dim=-1) * sin


class Attention(nn.Module):
    """``n_heads`` query heads over ``n_kv_heads`` key/value groups of width ``head_size`` (query head h
    reads group ``h // (n_heads / n_kv_heads)``). ``qk_norm_eps=None``: no q/k RMSNorm; ``dropout`` on the
    attention probabilities in training mode."""

    def __init__(
        self,
        d_model: int,
        n_heads: int,
        n_kv_heads: int,
        head_size: int,
        *,
        layout: Layout = LITGPT,
        qk_norm_eps: float | None = 1e-6,
        bias: bool = False,
        dropout: float = 0.0,
    ):
        super().__init__()
        if n_heads % n_kv_heads:
            raise ValueError(f"n_heads={n_heads} is not a multiple of n_kv_heads={n_kv_heads}")
        self.layout, self.dropout = layout, dropout
        self.n_heads, self.n_kv_heads, self.head_size = n_heads, n_kv_heads, head_size
        q_width, kv_width = n_heads * head_size, n_kv_heads * head_size
        if layout.fused:
            setattr(self, layout.qkv, nn.Linear(d_model, q_width + 2 * kv_width, bias=bias))
        else:
            for name, width in zip(layout.qkv, (q_width, kv_width, kv_width)):
                setattr(self, name, nn.Linear(d_model, width, bias=bias))
        setattr(self, layout.out, nn.Linear(q_width, d_model, bias=bias))
        self.qk_norm = qk_norm_eps is not None
        if self.qk_norm:
            setattr(self, layout.q_norm, nn.RMSNorm(head_size, eps=qk_norm_eps))
            setattr(self, layout.k_norm, nn.RMSNorm(head_size, eps=qk_norm_eps))

    def _heads(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """q (B, H, T, hs), k and v (B, G, T, hs), q and k normalised per head."""
        batch, width, _ = x.shape
        layout, hs, heads, groups = self.layout, self.head_size, self.n_heads, self.n_kv_heads
        if layout.fused:
            q, k, v = getattr(self, layout.qkv)(x).split([heads * hs, groups * hs, groups * hs], dim=-1)
        else:
            q, k, v = (getattr(self, name)(x) for name in layout.qkv)
        q, k = q.view(batch, width, heads, hs), k.view(batch, width, groups, hs)
        if self.qk_norm:
            q, k = getattr(self, layout.q_norm)(q), getattr(self, layout.k_norm)(k)
        return q.transpose(1, 2), k.transpose(1, 2), v.view(batch, width, groups, hs).transpose(1, 2)

    def forward(self, x, cos=None, sin=None, cache=None, write_at=None, mask=None, stats=None):
        """Without ``cache``: attention over x (B, T, d), causal unless ``mask`` (bool, True = may attend)
        is given; returns (y, (k, v)). With ``cache`` (K, V) of shape (B, G, capacity, hs): x is one token
        per row (B, 1, d) written at slot ``write_at`` (B,) and attending to the slots ``mask`` (B, 1, 1,
        capacity) allows. ``cos``, ``sin``: rotary tables, or None for no rotary embedding. ``stats`` True or
        False (causal, no cache or mask): explicit-math attention (:func:`explicit_causal_attention`) returning
        (y, its statistics, or None when False) in place of (k, v)."""
        batch, width, _ = x.shape
        q, k, v = self._heads(x)
        if cos is not None:
            rotate_first = self.layout.rotate_first
            q, k = apply_rope(q, cos, sin, rotate_first), apply_rope(k, cos, sin, rotate_first)
        gqa = self.n_kv_heads < self.n_heads
        if stats is not None:
            if cache is not None or mask is not None:
                raise ValueError("explicit attention (stats) is causal attention without cache or mask")
            y, kv = explicit_causal_attention(q, k, v, stats=bool(stats))
        elif cache is None:
            dropout = self.dropout if self.training else 0.0
            if mask is None:
                y = F.scaled_dot_product_attention(q, k, v, is_causal=True, dropout_p=dropout, enable_gqa=gqa)
            else:
                y = F.scaled_dot_product_attention(q, k, v, attn_mask=mask, dropout_p=dropout, enable_gqa=gqa)
            kv = (k, v)
        else:
            keys, values = cache
            rows = torch.arange(batch, device=x.device)
            keys[rows, :, write_at] = k[:, :, 0]
            values[rows, :, write_at] = v[:, :, 0]
            y = F.scaled_dot_product_attention(q, keys, values, attn_mask=mask, enable_gqa=gqa)
            kv = cache
        out = getattr(self, self.layout.out)
        return out(y.transpose(1, 2).reshape(batch, width, self.n_heads * self.head_size)), kv


ATTENTION_STATS = ("max_logit", "entropy", "q_rms", "k_rms")


def explicit_causal_attention(
    q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, stats: bool = True
) -> tuple[torch.Tensor, torch.Tensor | None]:
    """Causal attention by explicit math, ``softmax(q k^T / sqrt(hs)) v``, for q (B, H, T, hs) and k, v
    (B, G, T, hs); returns (y (B, H, T, hs), stats (4,) or None): :data:`ATTENTION_STATS`, i.e. the largest |logit|
    ``q.k / sqrt(hs)`` over heads and allowed positions (the quantity whose growth precedes divergence in
    Wortsman et al. 2023, "Small-scale proxies for large-scale Transformer training instabilities"), the mean
    entropy of the attention rows (nats), and the RMS of q and of k as attention sees them (after norms and
    rotary embedding). The statistics are tensors, not side effects, so that the path runs under ``vmap``
    (matmul and softmax have batching rules where SDPA falls back member by member on the CPU); they are computed
    only when asked (they cost several passes over the T x T scores)."""
    heads, groups, width, hs = q.shape[1], k.shape[1], q.shape[2], q.shape[3]
    if groups != heads:
        k, v = k.repeat_interleave(heads // groups, dim=1), v.repeat_interleave(heads // groups, dim=1)
    logits = (q @ k.transpose(-1, -2)) / math.sqrt(hs)
    future = torch.full((width, width), float("-inf"), device=q.device).triu(1)
    probs = torch.softmax(logits + future, dim=-1)
    y = probs @ v
    if not stats:
        return y, None
    with torch.no_grad():
        allowed = torch.isfinite(future)
        max_logit = (logits.abs() * allowed).amax()
        entropy = -(probs * torch.log(probs.clamp_min(1e-30))).sum(-1).mean()
        q_rms, k_rms = q.square().mean().sqrt(), k.square().mean().sqrt()
        return y, torch.stack([max_logit, entropy, q_rms, k_rms])


class SwiGLU(nn.Module):
    """``down(silu(gate x) * up x)``, no biases (litgpt's ``LLaMAMLP``, HF's ``Qwen3MLP``)."""

    def __init__(self, d_model: int, hidden: int, layout: Layout = LITGPT):
        super().__init__()
        self.layout = layout
        setattr(self, layout.gate, nn.Linear(d_model, hidden, bias=False))
        setattr(self, layout.up, nn.Linear(d_model, hidden, bias=False))
        setattr(self, layout.down, nn.Linear(hidden, d_model, bias=False))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        layout = self.layout
        gate, up, down = getattr(self, layout.gate), getattr(self, layout.up), getattr(self, layout.down)
        return down(F.silu(gate(x)) * up(x))


class Block(nn.Module):
    """Pre-norm block ``x + drop(Attn(RMSNorm(x)))``, then ``x + drop(MLP(RMSNorm(x)))``; ``mlp`` builds
    the MLP (default :class:`SwiGLU` of width ``mlp_hidden``), for example a mixture of experts. ``qk_norm=False``
    leaves out the attention's q/k RMSNorm (the ablation of studies of attention-logit growth)."""

    def __init__(
        self,
        d_model: int,
        n_heads: int,
        n_kv_heads: int,
        head_size: int,
        mlp_hidden: int,
        *,
        layout: Layout = LITGPT,
        norm_eps: float = 1e-6,
        dropout: float = 0.0,
        mlp: Callable[[], nn.Module] | None = None,
        qk_norm: bool = True,
    ):
        super().__init__()
        self.layout = layout
        setattr(self, layout.attn_norm, nn.RMSNorm(d_model, eps=norm_eps))
        self.attn = Attention(
            d_model,
            n_heads,
            n_kv_heads,
            head_size,
            layout=layout,
            qk_norm_eps=norm_eps if qk_norm else None,
            dropout=dropout,
        )
        setattr(self, layout.mlp_norm, nn.RMSNorm(d_model, eps=norm_eps))
        self.mlp = mlp() if mlp is not None else SwiGLU(d_model, mlp_hidden, layout)
        self.drop = nn.Dropout(dropout)

    def forward(self, x, cos=None, sin=None, cache=None, write_at=None, mask=None, stats=None):
        """Returns (x, the attention's (k, v) or cache, or its statistics with ``stats``), as
        :meth:`Attention.forward`."""
        h, kv = self.attn(getattr(self, self.layout.attn_norm)(x), cos, sin, cache, write_at, mask, stats)
        x = x + self.drop(h)
        return x + self.drop(self.mlp(getattr(self, self.layout.mlp_norm)(x))), kv


@torch.no_grad()
def seeded_normal_init_(model: nn.Module, std: float, seed: int) -> None:
    """Draw every ``nn.Linear`` and ``nn.Embedding`` weight of ``model`` from N(0, std^2), in module order, from a
    generator seeded by ``seed`` (the global random state is left alone); norms keep their ones, biases their init."""
    generator = torch.Generator().manual_seed(seed)
    for module in model.modules():
        if isinstance(module, (nn.Linear, nn.Embedding)):
            module.weight.normal_(0.0, std, generator=generator)
