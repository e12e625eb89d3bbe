"""The work of a job in a unit proportional to its compute, for the plan of a scale (rules' PLAN_WORK,
neurips26.common.plan): the plan divides it by the rate measured at quick scale.

Plain arithmetic without imports: the functions are called while the workflow is parsed.
"""

from __future__ import annotations

__all__ = ["decoder_params", "decoder_work"]


def decoder_params(
    d_model: int,
    n_layers: int,
    n_heads: int,
    n_kv_heads: int,
    head_dim: int,
    d_ff: int,
    vocab: int,
    active_experts: int = 1,
) -> int:
    """Weights a token passes through in a decoder with grouped-query attention and a gated (SwiGLU) MLP:
    per layer q and o (d x heads x head_dim each), k and v (d x kv_heads x head_dim each) and the active experts'
    three d x d_ff matrices; plus the output head (d x vocab). Norms and the input embedding (a lookup) are left
    out."""
    attention = 2 * d_model * n_heads * head_dim + 2 * d_model * n_kv_heads * head_dim
    mlp = 3 * d_model * d_ff * active_experts
    return n_layers * (attention + mlp) + d_model * vocab


def decoder_work(tokens: int, **sizes: int) -> float:
    """Tokens trained on times the weights each passes through (about a sixth of the training FLOPs)."""
    return float(tokens) * decoder_params(**sizes)
