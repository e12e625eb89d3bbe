r"""A seeded compositional generator of device-level netlists, the offline stand-in for AnalogGenie's dataset at smoke
and quick scale: circuit families drawn with skewed weights, each with variant axes that change the graph, written
as AnalogGenie ``.cir`` text (4-terminal MOS lines, BJT lines with a substrate net as the real data), parsed by
:func:`netlist.parse` and deduplicated by graph isomorphism (networkx: a Weisfeiler-Lehman hash buckets the graphs,
``is_isomorphic`` decides inside a bucket), so that no two kept circuits are the same topology.

Families: current mirrors, op-amps (five-transistor OTA and two-stage Miller variants), ring oscillators, bandgap
cores, LDOs, latched comparators and Gilbert mixers. Work in progress: the variant axes are few, so the number of
distinct topologies is far below the quick scale's planned 900 (the tests count them).

Node labels of the isomorphism test are the device family, or the net's name for rails and ports (so VIN1 and VIN2
differ), or ``NET`` for internal nets; edge labels are the edge types.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from .netlist import Circuit, is_port, parse

__all__ = ["FAMILIES", "generate", "graph_hash", "graph_of", "isomorphic"]


def _mos(kind: str, name: str, d: str, g: str, s: str, b: str) -> str:
    return f"{name} ({d} {g} {s} {b}) {kind}4"


def _mirror(rng: np.random.Generator) -> str:
    kind = rng.choice(["nmos", "pmos"])
    rail, supply = ("VSS", "VDD") if kind == "nmos" else ("VDD", "VSS")
    outputs = int(rng.integers(1, 4))
    style = rng.choice(["simple", "cascode", "wilson"])
    # the reference current: a resistor from the other rail, or (NMOS) a reference port; a PMOS mirror keeps its
    # resistor so that the circuit reaches VSS
    use_port = kind == "nmos" and rng.random() < 0.5
    lines = ["RR0 (IREF1 ref) resistor" if use_port else f"RR0 ({supply} ref) resistor"]
    if style == "simple":
        lines.append(_mos(kind, "M0", "ref", "ref", rail, rail))
        lines += [_mos(kind, f"M{i}", f"IOUT{i}", "ref", rail, rail) for i in range(1, outputs + 1)]
    elif style == "cascode":
        lines += [_mos(kind, "M0", "ref", "ref", "m", rail), _mos(kind, "MB", "m", "m", rail, rail)]
        for i in range(1, outputs + 1):
            lines += [
                _mos(kind, f"M{i}", f"IOUT{i}", "ref", f"c{i}", rail),
                _mos(kind, f"MC{i}", f"c{i}", "m", rail, rail),
            ]
    else:
        lines += [_mos(kind, "M0", "ref", "x", rail, rail), _mos(kind, "M1", "IOUT1", "ref", "x", rail),
                  _mos(kind, "M2", "x", "x", rail, rail)]  # fmt: skip
    return "\n".join(lines)


def _opamp(rng: np.random.Generator) -> str:
    pair, load = ("nmos", "pmos") if rng.random() < 0.6 else ("pmos", "nmos")
    rail, supply = ("VSS", "VDD") if pair == "nmos" else ("VDD", "VSS")
    tail = (
        [_mos(pair, "MT", "tail", "VB1", rail, rail)]
        if rng.random() < 0.6
        else [_mos(pair, "MT", "tail", "bias", rail, rail), _mos(pair, "MBD", "bias", "bias", rail, rail),
              "RRB (bias " + supply + ") resistor"]
    )  # fmt: skip
    out1 = "VOUT" if rng.random() < 0.5 else "o1"
    body = "tail" if rng.random() < 0.5 else rail  # input pair's bulk: tied to its source or to the rail
    lines = [
        _mos(pair, "M1", "d1", "VIN1", "tail", body),
        _mos(pair, "M2", out1, "VIN2", "tail", body),
        _mos(load, "M3", "d1", "d1", supply, supply),
        _mos(load, "M4", out1, "d1", supply, supply),
        *tail,
    ]
    if out1 != "VOUT":  # a second, common-source stage with Miller compensation
        lines += [_mos(load, "M5", "VOUT", out1, supply, supply), _mos(pair, "M6", "VOUT", "VB2", rail, rail)]
        if rng.random() < 0.5:
            lines.append(f"CC1 ({out1} VOUT) capacitor")
        else:
            lines += [f"CC1 ({out1} z) capacitor", "RRZ (z VOUT) resistor"]
        if rng.random() < 0.5:
            lines.append("CCL (VOUT VSS) capacitor")
    return "\n".join(lines)


def _ring(rng: np.random.Generator) -> str:
    stages = int(rng.choice([3, 5, 7]))
    loaded = rng.random() < 0.5
    nodes = ["VOUT"] + [f"n{i}" for i in range(1, stages)]
    lines = []
    for i in range(stages):
        a, b = nodes[i], nodes[(i + 1) % stages]
        lines += [_mos("nmos", f"MN{i}", b, a, "VSS", "VSS"), _mos("pmos", f"MP{i}", b, a, "VDD", "VDD")]
        if loaded:
            lines.append(f"CC{i} ({b} VSS) capacitor")
    return "\n".join(lines)


def _bandgap(rng: np.random.Generator) -> str:
    bjt = rng.choice(["pnp", "npn", "diode"])
    n = int(rng.integers(2, 5))

    def junction(name: str, node: str) -> str:
        if bjt == "diode":
            return f"D{name} ({node} VSS) diode"
        return f"Q{name} (VSS VSS {node} VSS) {bjt}"

    lines = [junction("1", "e1")] + [junction(f"2_{k}", "e2") for k in range(n)]
    lines += [
        "RR1 (e2 x) resistor",
        _mos("pmos", "M1", "e1", "g", "VDD", "VDD"),
        _mos("pmos", "M2", "x", "g", "VDD", "VDD"),
        _mos("pmos", "M3", "VREF1", "g", "VDD", "VDD"),
        "RR2 (VREF1 VSS) resistor",
    ]
    if rng.random() < 0.5:  # the error amplifier closing the loop is a diode-connected sense device
        lines.append(_mos("nmos", "MS", "g", "e1", "VSS", "VSS"))
        lines.append(_mos("pmos", "ML", "g", "g", "VDD", "VDD"))
    else:
        lines.append("CC1 (g VSS) capacitor")
        lines.append(_mos("nmos", "MS", "g", "x", "VSS", "VSS"))
    return "\n".join(lines)


def _ldo(rng: np.random.Generator) -> str:
    """An error amplifier (five-transistor OTA) driving a PMOS pass device, a resistive divider feeding back, an
    output capacitor, optionally a compensation capacitor."""
    lines = [
        _mos("nmos", "M1", "d1", "VREF1", "tail", "VSS"),
        _mos("nmos", "M2", "ea", "fb", "tail", "VSS"),
        _mos("pmos", "M3", "d1", "d1", "VDD", "VDD"),
        _mos("pmos", "M4", "ea", "d1", "VDD", "VDD"),
        _mos("nmos", "M5", "tail", "VB1", "VSS", "VSS"),
        _mos("pmos", "MP", "VOUT", "ea", "VDD", "VDD"),
    ]
    taps = int(rng.integers(2, 4))
    nodes = ["VOUT", *[f"t{i}" for i in range(1, taps)], "VSS"]
    fb_at = int(rng.integers(1, taps))
    nodes[fb_at] = "fb"
    lines += [f"RR{i} ({nodes[i]} {nodes[i + 1]}) resistor" for i in range(taps)]
    lines.append("CCO (VOUT VSS) capacitor")
    if rng.random() < 0.5:
        lines.append("CCC (ea VOUT) capacitor")
    return "\n".join(lines)


def _comparator(rng: np.random.Generator) -> str:
    """A preamplifier pair clocked by VCONT1 through its tail, regenerating into a cross-coupled latch; optional
    output inverters and reset switches."""
    lines = [
        _mos("nmos", "M1", "a", "VIN1", "tail", "VSS"),
        _mos("nmos", "M2", "b", "VIN2", "tail", "VSS"),
        _mos("nmos", "MT", "tail", "VCONT1", "VSS", "VSS"),
        _mos("pmos", "M3", "a", "b", "VDD", "VDD"),
        _mos("pmos", "M4", "b", "a", "VDD", "VDD"),
    ]
    if rng.random() < 0.5:  # NMOS half of the latch (StrongARM-like)
        lines += [_mos("nmos", "M5", "a", "b", "tail", "VSS"), _mos("nmos", "M6", "b", "a", "tail", "VSS")]
    if rng.random() < 0.5:  # reset switches
        lines += [_mos("pmos", "MR1", "a", "VCONT1", "VDD", "VDD"), _mos("pmos", "MR2", "b", "VCONT1", "VDD", "VDD")]
    if rng.random() < 0.5:
        lines += [_mos("nmos", "MI1", "VOUT1", "a", "VSS", "VSS"), _mos("pmos", "MI2", "VOUT1", "a", "VDD", "VDD")]
    else:
        lines += [_mos("nmos", "MI1", "VOUT1", "a", "VSS", "VSS"), "RRO (VOUT1 VDD) resistor"]
    if rng.random() < 0.5:
        lines += [_mos("nmos", "MI3", "VOUT2", "b", "VSS", "VSS"), _mos("pmos", "MI4", "VOUT2", "b", "VDD", "VDD")]
    return "\n".join(lines)


def _mixer(rng: np.random.Generator) -> str:
    """A Gilbert-cell mixer: an RF transconductor (MOS or NPN, optionally degenerated) under one or two switching
    pairs driven by VLO1/VLO2, with resistor or PMOS loads at VIF1/VIF2."""
    bjt = rng.random() < 0.3

    def device(name: str, c: str, b: str, e: str) -> str:
        return f"Q{name} ({c} {b} {e} VSS) npn" if bjt else _mos("nmos", name, c, b, e, "VSS")

    degenerate = rng.random() < 0.5
    source = "deg" if degenerate else "VSS"
    lines = [device("MRF1", "s1", "VRF1", source)]
    if degenerate:
        lines.append("RRD (deg VSS) resistor")
    lines += [device("MSW1", "VIF1", "VLO1", "s1"), device("MSW2", "VIF2", "VLO2", "s1")]
    if rng.random() < 0.5:  # double balanced
        lines += [device("MRF2", "s2", "VRF2", source), device("MSW3", "VIF1", "VLO2", "s2"),
                  device("MSW4", "VIF2", "VLO1", "s2")]  # fmt: skip
    if rng.random() < 0.5:
        lines += ["RRL1 (VIF1 VDD) resistor", "RRL2 (VIF2 VDD) resistor"]
    else:
        lines += [_mos("pmos", "ML1", "VIF1", "VB1", "VDD", "VDD"), _mos("pmos", "ML2", "VIF2", "VB1", "VDD", "VDD")]
    return "\n".join(lines)


FAMILIES: dict[str, Callable[[np.random.Generator], str]] = {
    "LDO": _ldo,
    "Comparator": _comparator,
    "Mixer": _mixer,
    "Opamp": _opamp,
    "Bandgap_Ref": _bandgap,
    "Oscillator": _ring,
    "Mirror": _mirror,
}


def graph_of(circuit: Circuit):
    """The labelled bipartite graph of a circuit (networkx), the object novelty and deduplication compare."""
    import networkx as nx

    g = nx.Graph()
    for device, net, label in circuit.edges():
        g.add_node(device, label=device.rstrip("0123456789"))
        g.add_node(net, label=net if is_port(net) else "NET")
        g.add_edge(device, net, label=label)
    return g


def graph_hash(g) -> str:
    """The Weisfeiler-Lehman hash of a labelled circuit graph: equal for isomorphic graphs (a bucket key)."""
    import networkx as nx

    return nx.weisfeiler_lehman_graph_hash(g, node_attr="label", edge_attr="label", iterations=3)


def isomorphic(a, b) -> bool:
    import networkx as nx
    from networkx.algorithms.isomorphism import categorical_edge_match, categorical_node_match

    return nx.is_isomorphic(a, b, node_match=categorical_node_match("label", None),
                            edge_match=categorical_edge_match("label", None))  # fmt: skip


def generate(
    n_circuits: int, weights: dict[str, float], seed: int, max_draws: int | None = None
) -> list[tuple[str, str, Circuit]]:
    """Up to ``n_circuits`` distinct circuits as (type, netlist text, parsed circuit): families drawn by ``weights``,
    each draw parsed strictly; a draw isomorphic to a kept circuit is dropped. Stops after ``max_draws`` draws
    (default 20 x n_circuits). Same seed, same circuits in the same order."""
    unknown = sorted(set(weights) - set(FAMILIES))
    if unknown:
        raise ValueError(f"unknown circuit families {unknown}; built: {sorted(FAMILIES)}")
    if n_circuits < 1 or not weights or min(weights.values()) <= 0:
        raise ValueError("need n_circuits >= 1 and positive weights")
    rng = np.random.default_rng(seed)
    names = sorted(weights)
    p = np.array([weights[k] for k in names], dtype=float)
    p /= p.sum()
    kept: list[tuple[str, str, Circuit]] = []
    buckets: dict[str, list] = {}
    for draw in range(max_draws or 20 * n_circuits):
        if len(kept) == n_circuits:
            break
        family = names[rng.choice(len(names), p=p)]
        text = FAMILIES[family](rng)
        circuit = parse(text, f"generated/{family}/{draw}")
        g = graph_of(circuit)
        bucket = buckets.setdefault(graph_hash(g), [])
        if any(isomorphic(g, other) for other in bucket):
            continue
        bucket.append(g)
        kept.append((family, text, circuit))
    return kept
