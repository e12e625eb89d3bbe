r"""Small Qwen3-style language models, dense and sparse (MoE), for the optimizer comparison of Lau and Su
(2026). The reference trains Hugging Face ``Qwen3ForCausalLM`` (``train_qwen3.py``) and
``OlmoeForCausalLM`` (``train_olmoe.py``); this module rebuilds their forward pass at small size:

* untied token embedding ``embed`` (V x d) and LM head ``lm_head`` (V x d): the paper gives the two
  vocabulary-indexed matrices their own optimizers, so they cannot share weights
  (``tie_word_embeddings=False`` in the reference);
* ``n_layers`` pre-norm blocks ``x + Attn(RMSNorm(x))``, ``x + MLP(RMSNorm(x))``, RMSNorm eps 1e-6, no
  biases; a final RMSNorm before the head;
* attention with ``n_heads`` query heads and ``n_kv_heads`` key/value heads of width ``head_dim``
  (grouped-query), per-head RMSNorm of q and k, rotary embeddings (base 1e6, "rotate half"), causal;
  separate ``q_proj, k_proj, v_proj, o_proj`` matrices as in HF (each is a "hidden" matrix for Muon);
* SwiGLU MLP ``down_proj(silu(gate_proj x) * up_proj x)``: ``gate_proj, up_proj`` are d_ff x d (rows are
  neurons), ``down_proj`` d x d_ff (columns are neurons), the orientation the paper's row/column rules use;
* MoE (``n_experts > 0``): a router ``router`` (E x d, no bias) whose softmax over all experts is cut to
  the top ``top_k`` weights without renormalising (OLMoE's ``norm_topk_prob=False``), each expert a
  SwiGLU of width ``d_ff``; no auxiliary load-balancing loss (``router_aux_loss_coef=0`` in the repo).

The attention, MLP and block are :mod:`neurips26.common.transformer`'s in its Hugging Face layout (``HF``:
the parameter names above, separate q/k/v projections).

Initialisation is the repo's ``reinit_for_lm``: every linear and the embedding N(0, 0.02^2), norms 1,
drawn from a generator seeded by ``LMConfig.seed`` (the global RNG is left alone).

Deliberate differences: fp32, no KV cache, and the experts are evaluated densely and weighted by the
(mostly zero) gates, which equals sparse dispatch in value and gradient and is cheaper than gathering at
4 experts (at 64 it is not: paper scale would want grouped GEMMs). Gemma 3's variant (embedding scaling,
sandwich norms, GeGLU) is not built.
"""

from __future__ import annotations

import torch
from torch import nn

from neurips26.common.transformer import HF, Block, rope_tables, seeded_normal_init_
from neurips26.common.transformer import SwiGLU as _SwiGLU

from .settings import LMConfig

__all__ = ["LM", "LMConfig", "kind_of", "n_parameters"]


class SwiGLU(_SwiGLU):
    """The SwiGLU MLP in HF's names (``gate_proj``, ``up_proj``, ``down_proj``): an expert of :class:`SparseMoE`."""

    def __init__(self, d_model: int, d_ff: int):
        super().__init__(d_model, d_ff, HF)


class SparseMoE(nn.Module):
    """OLMoE's block: softmax router over all experts, top-k gates kept as they are (not renormalised)."""

    def __init__(self, c: LMConfig):
        super().__init__()
        self.top_k = c.top_k
        self.router = nn.Linear(c.d_model, c.n_experts, bias=False)
        self.experts = nn.ModuleList(SwiGLU(c.d_model, c.d_ff) for _ in range(c.n_experts))

    def gates(self, x: torch.Tensor) -> torch.Tensor:
        """(..., E) routing weights: softmax probabilities on each token's top-k experts, 0 elsewhere."""
        probs = torch.softmax(self.router(x), dim=-1)
        top = probs.topk(self.top_k, dim=-1)
        return torch.zeros_like(probs).scatter(-1, top.indices, top.values)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        gates = self.gates(x)
        outputs = torch.stack([expert(x) for expert in self.experts], dim=-1)  # (..., d, E)
        return (outputs * gates[..., None, :]).sum(-1)


def _block(c: LMConfig) -> Block:
    return Block(
        c.d_model,
        c.n_heads,
        c.n_kv_heads,
        c.head_dim,
        c.d_ff,
        layout=HF,
        norm_eps=c.norm_eps,
        mlp=(lambda: SparseMoE(c)) if c.is_moe else None,
    )


class LM(nn.Module):
    """``forward(tokens (B, T)) -> logits (B, T, V)``."""

    def __init__(self, config: LMConfig):
        super().__init__()
        if not isinstance(config, LMConfig):
            raise TypeError(f"LM needs an LMConfig, got {type(config).__name__}")
        self.config = config
        with torch.random.fork_rng(devices=[]):
            self.embed = nn.Embedding(config.vocab_size, config.d_model)
            self.blocks = nn.ModuleList(_block(config) for _ in range(config.n_layers))
            self.norm = nn.RMSNorm(config.d_model, eps=config.norm_eps)
            self.lm_head = nn.Linear(config.d_model, config.vocab_size, bias=False)
        seeded_normal_init_(self, config.init_std, config.seed)
        cos, sin = rope_tables(torch.arange(config.context), config.head_dim, config.rope_base)
        self.register_buffer("rope_cos", cos, persistent=False)
        self.register_buffer("rope_sin", sin, persistent=False)

    def forward(self, tokens: torch.Tensor) -> torch.Tensor:
        if tokens.dim() != 2:
            raise ValueError(f"tokens must be (batch, positions), got shape {tuple(tokens.shape)}")
        width = tokens.shape[1]
        if width > self.config.context:
            raise ValueError(f"sequence length {width} exceeds the model's context {self.config.context}")
        cos, sin = self.rope_cos[:width], self.rope_sin[:width]
        x = self.embed(tokens)
        for block in self.blocks:
            x, _ = block(x, cos, sin)
        return self.lm_head(self.norm(x))


def kind_of(name: str, param: torch.Tensor) -> str:
    """The optimizer role of a parameter of :class:`LM` (``optimizers.KINDS``), by name as the repo's
    ``build_transformer_mixed_optimizer`` routes them."""
    if param.ndim < 2:
        return "vector"
    if name == "embed.weight":
        return "embedding"
    if name == "lm_head.weight":
        return "lm_head"
    if name.endswith("router.weight"):
        return "router"
    if name.endswith(("gate_proj.weight", "up_proj.weight")):
        return "mlp_gate_up"
    if name.endswith("down_proj.weight"):
        return "mlp_down"
    return "hidden"


def n_parameters(model: LM) -> dict[str, int]:
    """Parameter counts per role (and ``total``)."""
    counts: dict[str, int] = {}
    for name, p in model.named_parameters():
        counts[kind_of(name, p)] = counts.get(kind_of(name, p), 0) + p.numel()
    counts["total"] = sum(counts.values())
    return counts
