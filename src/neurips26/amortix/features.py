"""Tokens and attention biases of a decoration state, and padded batches of them (numpy, no torch).

Position 0 of every graph is a virtual token (the STOP choice and the graph summary); positions 1..n are atoms.
Node features (GraphXForm, arXiv:2411.01667): element, formal charge, aromaticity, hydrogens left, degree, is-scaffold,
is-attachable. Pair features: bond type (none/single/double/triple/aromatic) and shortest-path distance,
turned into per-head attention biases by the policy (Graphormer-style).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from neurips26.amortix.environment import State

MAX_DISTANCE = 8  # distances beyond share one bias
MAX_COUNT = 4  # hydrogens and degree are clipped at 4
# distance codes: 0..MAX_DISTANCE atoms, MAX_DISTANCE + 1 virtual-token pairs, MAX_DISTANCE + 2 padding
VIRTUAL_DISTANCE = MAX_DISTANCE + 1
N_DISTANCE_CODES = MAX_DISTANCE + 3
N_BOND_CODES = 6  # 0 none, 1-3 orders, 4 aromatic, 5 virtual/padding
NODE_FEATURES = ("element", "charge", "aromatic", "hydrogens", "degree", "scaffold", "attachable")


def node_cardinalities(n_elements: int) -> dict[str, int]:
    """Number of codes per node feature (code 0 is padding for every feature, the virtual token has its own)."""
    return {
        "element": n_elements + 2,
        "charge": 5,
        "aromatic": 3,
        "hydrogens": MAX_COUNT + 2,
        "degree": MAX_COUNT + 2,
        "scaffold": 3,
        "attachable": 3,
    }


@dataclass(frozen=True)
class GraphFeatures:
    """One state: node codes (n+1, 7) with the virtual token first, bond codes and distance codes (n+1, n+1)."""

    nodes: np.ndarray
    bonds: np.ndarray
    distances: np.ndarray


def state_features(state: State, element_index: dict[str, int]) -> GraphFeatures:
    n = state.n
    nodes = np.empty((n + 1, len(NODE_FEATURES)), dtype=np.int64)
    nodes[0] = 1  # the virtual token's code in every feature
    nodes[1:, 0] = [element_index[e] + 2 for e in state.elements[:n]]
    nodes[1:, 1] = np.clip(state.charges[:n], -1, 1) + 3
    nodes[1:, 2] = state.aromatic[:n] + 1
    nodes[1:, 3] = np.minimum(state.free[:n], MAX_COUNT) + 1
    nodes[1:, 4] = np.minimum(state.degree(), MAX_COUNT) + 1
    nodes[1:, 5] = state.is_scaffold() + 1
    nodes[1:, 6] = (state.free[:n] > 0) + 1
    bonds = np.full((n + 1, n + 1), 5, dtype=np.int64)
    bonds[1:, 1:] = state.bonds[:n, :n]
    distances = np.full((n + 1, n + 1), VIRTUAL_DISTANCE, dtype=np.int64)
    distances[1:, 1:] = np.minimum(state.distances[:n, :n], MAX_DISTANCE)
    return GraphFeatures(nodes, bonds, distances)


@dataclass(frozen=True)
class Batch:
    """Padded graphs: nodes (B, L, 7), bonds and distances (B, L, L), valid (B, L) true for real tokens."""

    nodes: np.ndarray
    bonds: np.ndarray
    distances: np.ndarray
    valid: np.ndarray


def collate(graphs: list[GraphFeatures]) -> Batch:
    size = max(g.nodes.shape[0] for g in graphs)
    count = len(graphs)
    nodes = np.zeros((count, size, len(NODE_FEATURES)), dtype=np.int64)
    bonds = np.full((count, size, size), 5, dtype=np.int64)
    distances = np.full((count, size, size), MAX_DISTANCE + 2, dtype=np.int64)
    valid = np.zeros((count, size), dtype=bool)
    for k, g in enumerate(graphs):
        m = g.nodes.shape[0]
        nodes[k, :m] = g.nodes
        bonds[k, :m, :m] = g.bonds
        distances[k, :m, :m] = g.distances
        valid[k, :m] = True
    return Batch(nodes, bonds, distances, valid)
