r"""Bipartite walks of a circuit (AnalogToBi, Kim et al. 2026, arXiv 2603.08720, Alg. 1; reference
``dfs_cover_all_edges_iterative``): from ``VSS``, cross every device-net edge at least once, preferring (i) an
unwalked edge at the current node, (ii) then, through a walked edge, a node not yet visited, (iii) else the shortest
path (BFS) to a node with an unwalked edge; finally the shortest path back to ``VSS``. Each step emits the edge's label
and the node reached, so the tokens read ``VSS e d e n ... VSS``; a walk is prefixed by its circuit-type token and
ends with ``TRUNCATE``. Neighbour order is shuffled by the generator (the reference's first walk is unshuffled)."""

from __future__ import annotations

from collections import deque

import numpy as np

from .netlist import Circuit
from .tokens import END

__all__ = ["walk", "walk_tokens"]


def _adjacency(circuit: Circuit) -> dict[str, list[tuple[str, str, int]]]:
    adj: dict[str, list[tuple[str, str, int]]] = {}
    for k, (device, net, label) in enumerate(circuit.edges()):
        adj.setdefault(device, []).append((net, label, k))
        adj.setdefault(net, []).append((device, label, k))
    return adj


def _path(adj, start: str, goal) -> list[tuple[str, str]]:
    """Shortest (label, node) steps from ``start`` to the first node with ``goal(node)`` (BFS)."""
    previous: dict[str, tuple[str, str] | None] = {start: None}
    queue = deque([start])
    while queue:
        node = queue.popleft()
        if goal(node) and node != start:
            steps = []
            while previous[node] is not None:
                before, label = previous[node]
                steps.append((label, node))
                node = before
            return steps[::-1]
        for other, label, _ in adj[node]:
            if other not in previous:
                previous[other] = (node, label)
                queue.append(other)
    raise ValueError(f"no path from {start}: the circuit is not connected")


def walk(circuit: Circuit, rng: np.random.Generator) -> list[str]:
    """One walk ``VSS e d e n ... VSS`` crossing every edge (module docstring)."""
    adj = _adjacency(circuit)
    if "VSS" not in adj:
        raise ValueError("the circuit has no VSS")
    for node in adj:
        order = rng.permutation(len(adj[node]))
        adj[node] = [adj[node][i] for i in order]
    walked: set[int] = set()
    visited = {"VSS"}
    tokens, node = ["VSS"], "VSS"
    total = len({k for edges in adj.values() for *_, k in edges})
    while len(walked) < total:
        step = next(((o, lab, k) for o, lab, k in adj[node] if k not in walked), None)
        if step is None:
            step = next(((o, lab, k) for o, lab, k in adj[node] if o not in visited), None)
        if step is not None:
            other, label, k = step
            walked.add(k)
            visited.add(other)
            tokens += [label, other]
            node = other
            continue
        for label, other in _path(adj, node, lambda n: any(k not in walked for *_, k in adj[n])):
            tokens += [label, other]
            visited.add(other)
            node = other
    if node != "VSS":
        for label, other in _path(adj, node, lambda n: n == "VSS"):
            tokens += [label, other]
    return tokens


def walk_tokens(circuit: Circuit, circuit_type: str | None, rng: np.random.Generator) -> list[str]:
    """``[CIRCUIT_<type>] VSS ... VSS TRUNCATE``."""
    head = [f"CIRCUIT_{circuit_type}"] if circuit_type else []
    return [*head, *walk(circuit, rng), END]


def circuit_of(tokens: list[str], source: str = "<walk>") -> Circuit:
    """The circuit a walk describes, devices in order of first appearance, each pin on the net its edge names
    (a passive's two terminals on its two nets). Only for walks that pass the ERC (``erc.erc_level == 0``):
    :class:`ValueError` otherwise."""
    from .erc import erc_level
    from .netlist import FAMILIES, PASSIVE, Device
    from .tokens import edge_pins, kind_of, split_device

    if erc_level(tokens) != 0:
        raise ValueError(f"{source}: the walk fails the ERC (level {erc_level(tokens)}), it describes no circuit")
    body = [t for t in tokens if kind_of(t) not in ("type", "end")]
    pins: dict[str, dict[str, str]] = {}
    passive_nets: dict[str, list[str]] = {}
    for i in range(1, len(body) - 1, 2):
        if kind_of(body[i]) != "edge":
            continue
        a, b = body[i - 1], body[i + 1]
        device, net = (a, b) if kind_of(a) == "device" else (b, a)
        family = split_device(device)[0]
        if family in PASSIVE:
            nets = passive_nets.setdefault(device, [])
            if net not in nets:
                nets.append(net)
        else:
            for pin in edge_pins(body[i]):
                pins.setdefault(device, {})[pin] = net
        pins.setdefault(device, {})
    devices = []
    for device in pins:
        family = split_device(device)[0]
        if family in PASSIVE:
            nets = tuple(passive_nets[device])
        else:
            nets = tuple(pins[device][p] for p in FAMILIES[family])
        devices.append(Device(device, family, nets))
    return Circuit(source, devices)
