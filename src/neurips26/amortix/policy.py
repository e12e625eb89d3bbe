"""The graph transformer policy (GraphXForm, arXiv:2411.01667): ReZero blocks whose attention carries a
per-head bias from the bond type and the shortest-path distance of every atom pair, and three heads for the
hierarchical action (anchor atom or STOP; new element or ring-closure partner; bond order)."""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch
from torch import nn
from torch.nn import functional as F

from neurips26.amortix.features import N_BOND_CODES, N_DISTANCE_CODES, Batch, node_cardinalities

NEG = -1e9  # logit of a masked choice (finite, so a row with one allowed entry stays well defined)


@dataclass(frozen=True)
class PolicyConfig:
    """Defaults are the paper's model (10 ReZero blocks, d = 512, 16 heads); quick scale overrides them."""

    n_elements: int
    n_decoration: int
    d_model: int = 512
    n_layers: int = 10
    n_heads: int = 16
    ff_mult: int = 4

    def __post_init__(self) -> None:
        if self.d_model % self.n_heads:
            raise ValueError(f"d_model {self.d_model} must be divisible by n_heads {self.n_heads}")


class ReZeroBlock(nn.Module):
    """x + a * attention(x, bias); x + a * feed-forward(x), with one learned gate a initialised at 0."""

    def __init__(self, d_model: int, n_heads: int, ff_mult: int) -> None:
        super().__init__()
        self.n_heads = n_heads
        self.qkv = nn.Linear(d_model, 3 * d_model)
        self.out = nn.Linear(d_model, d_model)
        self.ff = nn.Sequential(nn.Linear(d_model, ff_mult * d_model), nn.GELU(), nn.Linear(ff_mult * d_model, d_model))
        self.gate = nn.Parameter(torch.zeros(1))

    def forward(self, x: torch.Tensor, bias: torch.Tensor) -> torch.Tensor:
        batch, length, width = x.shape
        q, k, v = self.qkv(x).view(batch, length, 3, self.n_heads, width // self.n_heads).permute(2, 0, 3, 1, 4)
        attended = F.scaled_dot_product_attention(q, k, v, attn_mask=bias)
        x = x + self.gate * self.out(attended.transpose(1, 2).reshape(batch, length, width))
        return x + self.gate * self.ff(x)


def mlp(d_in: int, d_hidden: int, d_out: int) -> nn.Sequential:
    return nn.Sequential(nn.Linear(d_in, d_hidden), nn.GELU(), nn.Linear(d_hidden, d_out))


class GraphTransformerPolicy(nn.Module):
    def __init__(self, config: PolicyConfig) -> None:
        super().__init__()
        self.config = config
        d, layers, heads = config.d_model, config.n_layers, config.n_heads
        self.node_embeddings = nn.ModuleList(
            nn.Embedding(cardinality, d) for cardinality in node_cardinalities(config.n_elements).values()
        )
        self.bond_bias = nn.Embedding(N_BOND_CODES, layers * heads)
        self.distance_bias = nn.Embedding(N_DISTANCE_CODES, layers * heads)
        nn.init.zeros_(self.bond_bias.weight)
        nn.init.zeros_(self.distance_bias.weight)
        self.blocks = nn.ModuleList(ReZeroBlock(d, heads, config.ff_mult) for _ in range(layers))
        self.anchor_head = mlp(d, d, 1)
        self.stop_head = mlp(d, d, 1)
        self.target_query = mlp(d, d, d)
        self.element_head = nn.Linear(d, config.n_decoration)
        self.ring_key = nn.Linear(d, d)
        self.element_embedding = nn.Embedding(config.n_decoration, d)
        self.partner_projection = nn.Linear(d, d)
        self.order_head = mlp(2 * d, d, 3)

    def encode(self, batch: dict[str, torch.Tensor]) -> torch.Tensor:
        """Token embeddings (B, L, d) after the transformer; position 0 is the virtual token."""
        nodes = batch["nodes"]
        x = sum(embedding(nodes[..., k]) for k, embedding in enumerate(self.node_embeddings))
        layers, heads = self.config.n_layers, self.config.n_heads
        pair = self.bond_bias(batch["bonds"]) + self.distance_bias(batch["distances"])  # (B, L, L, layers*heads)
        pair = pair.permute(0, 3, 1, 2).reshape(nodes.shape[0], layers, heads, *batch["bonds"].shape[1:])
        padding = torch.where(batch["valid"], 0.0, float("-inf"))[:, None, None, :]
        for layer, block in enumerate(self.blocks):
            x = block(x, pair[:, layer] + padding)
        return x

    def anchor_logits(self, h: torch.Tensor) -> torch.Tensor:
        """(B, L): STOP from the virtual token, then one logit per atom."""
        return torch.cat([self.stop_head(h[:, :1]), self.anchor_head(h[:, 1:])], dim=1).squeeze(-1)

    def target_logits(self, h: torch.Tensor, anchor: torch.Tensor) -> torch.Tensor:
        """(B, V + L - 1): a new atom of each decoration element, then a ring closure to each atom."""
        rows = torch.arange(h.shape[0], device=h.device)
        query = self.target_query(h[rows, anchor + 1])
        ring = torch.einsum("bd,bld->bl", query, self.ring_key(h[:, 1:])) / math.sqrt(h.shape[-1])
        return torch.cat([self.element_head(query), ring], dim=1)

    def order_logits(self, h: torch.Tensor, anchor: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
        """(B, 3): bond orders 1, 2, 3 between the anchor and the chosen element or ring partner."""
        rows = torch.arange(h.shape[0], device=h.device)
        n_elements = self.config.n_decoration
        is_new = target < n_elements
        element = self.element_embedding(target.clamp(max=n_elements - 1))
        partner = self.partner_projection(h[rows, (target - n_elements).clamp(min=0) + 1])
        chosen = torch.where(is_new[:, None], element, partner)
        return self.order_head(torch.cat([h[rows, anchor + 1], chosen], dim=-1))


def batch_tensors(batch: Batch, device: torch.device | str = "cpu") -> dict[str, torch.Tensor]:
    return {
        name: torch.from_numpy(getattr(batch, name)).to(device) for name in ("nodes", "bonds", "distances", "valid")
    }


def device_of(policy: nn.Module) -> torch.device:
    return next(policy.parameters()).device


def masked_log_softmax(logits: torch.Tensor, mask: torch.Tensor, temperature: float = 1.0) -> torch.Tensor:
    return torch.log_softmax(torch.where(mask, logits / temperature, NEG), dim=-1)


def policy_state(policy: GraphTransformerPolicy) -> dict:
    """What a checkpoint holds: the architecture and the weights (on the CPU, loadable anywhere)."""
    return {"config": dict(policy.config.__dict__), "state_dict": {k: v.cpu() for k, v in policy.state_dict().items()}}


def load_policy_state(path) -> dict:
    """A saved policy_state, read without pickle (the config's plain values and the weights)."""
    return torch.load(path, weights_only=True)


def seed_policies_state(policies: list[GraphTransformerPolicy], seeds: list[int]) -> dict:
    """What an RL job's policy file holds: one policy_state per seed of its seed group, in the order of `seeds`."""
    if len(policies) != len(seeds):
        raise ValueError(f"{len(policies)} policies for seeds {list(seeds)}")
    return {"seeds": [int(s) for s in seeds], "policies": [policy_state(p) for p in policies]}


def load_seed_policy_state(path, seed: int) -> dict:
    """Seed `seed`'s policy_state from an RL job's policy file (seed_policies_state); ValueError when the file
    holds other seeds."""
    saved = torch.load(path, weights_only=True)
    if seed not in saved["seeds"]:
        raise ValueError(f"{path} holds the policies of seeds {saved['seeds']}, not seed {seed}")
    return saved["policies"][saved["seeds"].index(seed)]


def policy_from_state(state: dict, device: torch.device | str = "cpu") -> GraphTransformerPolicy:
    policy = GraphTransformerPolicy(PolicyConfig(**state["config"]))
    policy.load_state_dict(state["state_dict"])
    return policy.to(device)


def new_policy(sizes: dict, n_elements: int, n_decoration: int) -> GraphTransformerPolicy:
    """A freshly initialised policy with the config's sizes (d_model, n_layers, n_heads)."""
    return GraphTransformerPolicy(PolicyConfig(n_elements=n_elements, n_decoration=n_decoration, **sizes))
