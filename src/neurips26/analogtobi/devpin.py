r"""The device-pin sequence representation of AnalogGenie (Gao et al., ICLR 2025, arXiv 2503.00205), the baseline
representation of AnalogToBi's ablation (Kim et al. 2026, arXiv 2603.08720, Table 3, rows "devpin").

What we follow, read in ``github.com/xz-group/AnalogGenie`` at commit ``efc25358939c6bedd247f28d3df61066964f3a90``
(the three files below are unchanged there since ``16e5d872ef30962b2e89dcef63e95af85f73767d``); no code is copied:

* **Graph** (``SPICE2GRAPH_compress.py``, the variant the README runs). Nodes are the circuit's ports (rails ``VSS``,
  ``VDD`` and ports ``VIN1``, ``VOUT``, ...), one node per device (``NM1``) and one per device pin (``NM1_D``). Edges:
  each device to each of its pins (a star; pins of one device are linked only through the device node); each pin on
  a port to that port's node; the pins sharing an internal net pairwise (a clique: internal nets have no node of
  their own). Pins on one port are not linked to each other (``SPICE2GRAPH_full.py`` adds that clique; we do not).
  Pin letters: MOS ``D G S B``; BJT ``C B E`` (the 4th, substrate net of a BJT line is dropped, as in the reference
  and :mod:`.netlist`); resistor, capacitor, inductor and diode ``P N`` in terminal order.
* **Sequence** (``Augmentation.py``, ``dfs_traversal``). An edge-DFS from ``VSS``: at a node, for each neighbour
  whose edge is not yet used, mark the edge, step to the neighbour, recurse, and step back. Every undirected edge is
  crossed exactly twice, once each way, so a walk has ``2|E| + 1`` tokens, starts and ends at ``VSS`` and is an Euler
  circuit of the edge-doubled graph. The reference visits neighbours in its matrix's column order and makes its
  augmentation (up to 200 or 20 walks a circuit) by branching differently at earlier nodes (``dfs_all_continue``);
  we draw the neighbour order of every node from ``rng`` instead, so different seeds give different traversals of the
  same kind. The reference pads with ``TRUNCATE``; we end a walk with one ``TRUNCATE`` and prepend an optional
  ``CIRCUIT_<type>`` token, as :func:`.serialize.walk_tokens` does for the bipartite walks (the reference has no
  type token).
* **Vocabulary** (``Pretrain.py``). Per device family, each device token followed by its pin tokens, then ports, then
  ``VDD``, ``VSS``, ``TRUNCATE``. We keep the device-then-pins grouping but take the caps of
  :data:`.tokens.DEVICE_CAPS` (the reference's ``range(1, 35)`` stops one short, at NM34), the ports of
  :data:`.tokens.PORT_CAPS` plus ``VOUT``, add the 15 ``CIRCUIT_<type>`` tokens, drop the digital devices and pins
  (AnalogToBi filters digital circuits out), and order it like :meth:`.tokens.Vocabulary.bipartite`:
  ``VSS VDD CIRCUIT_* devices-with-pins ports TRUNCATE``. It is a :class:`.tokens.Vocabulary`; its ``nets``
  property, which relies on :func:`.tokens.kind_of`, does not apply to device-pin tokens: use :func:`devpin_kind`.

What we add (the AnalogGenie repository ships no sequence-to-netlist converter and no rule check; its ``Inference.py``
only writes the sampled tokens): :func:`decode` reads a sequence back as the graph of its consecutive token pairs and
the nets as the connected components of the pin-pin and pin-port edges, the reading the graph construction above
implies; :func:`erc_level` checks it in four levels analogous to :func:`.erc.erc_level`:

1. **not a well-formed sequence**: after an optional leading ``CIRCUIT_<type>``, the tokens up to the first
   ``TRUNCATE`` must start and end with ``VSS``, there must be a ``TRUNCATE``, every token must be in
   :func:`vocabulary` (and not a type token), and each pair of consecutive tokens must be an edge the graph can
   have: a device and one of its own pins, two distinct pins (of any devices), or a pin and a rail/port. A device
   next to a rail, port, other device or another device's pin, two rails/ports next to each other, or a token
   repeated in place is refused (so a device always appears: ``VSS`` can only be followed by a pin).
2. **a device lacks a pin**: every device that appears (its device token or any of its pin tokens) has all its pin
   tokens (MOS D, G, S, B; BJT C, B, E; two-terminal devices P, N), each next to its device token at least once.
3. **inconsistent pin**: a pin ends up on more than one net (two different rails/ports fall in one connected
   component, e.g. a pin next to both ``VDD`` and ``VSS``), or a resistor, capacitor or inductor has both terminals
   on one net (shorted; :func:`.netlist.parse` refuses that too). A diode or a transistor with several pins on one
   net is allowed, as in the bipartite representation.
4. **floating internal net**: a net without a rail or port touches fewer than two distinct devices (including a pin
   next to nothing but its own device, which sits alone on its own internal net).

The check reads the sequence as a set of edges: it does not require the walk to be an edge-DFS or Eulerian (a
sampled sequence rarely is exactly), and it accepts pins of one internal net that are linked only transitively (an
incomplete clique) or a pin-pin edge inside a port net (the reference never emits one); both are read as "same net".
"""

from __future__ import annotations

import functools
import re

import numpy as np

from .netlist import PASSIVE, Circuit, Device
from .tokens import CIRCUIT_TYPES, DEVICE_CAPS, END, PORT_CAPS, Vocabulary

__all__ = [
    "PIN_LETTERS",
    "DecodeError",
    "decode",
    "devpin_kind",
    "edges",
    "erc_level",
    "vocabulary",
    "walk",
    "walk_tokens",
]

# device family -> pin letters in terminal order (AnalogGenie's names; passives and diodes are P, N)
PIN_LETTERS = {"NM": "DGSB", "PM": "DGSB", "NPN": "CBE", "PNP": "CBE", "R": "PN", "C": "PN", "L": "PN", "DIO": "PN"}
_TOKEN = re.compile(r"^(NM|PM|NPN|PNP|R|C|L|DIO)(\d+)(?:_([A-Z]))?$")


class DecodeError(ValueError):
    """A device-pin sequence that is not a circuit: ``level`` is the ERC level it fails (1-4), ``index`` the position
    of the offending token in the sequence as given (type token included), ``token`` that token."""

    def __init__(self, level: int, index: int, token: str, reason: str):
        self.level, self.index, self.token, self.reason = level, index, token, reason
        super().__init__(f"ERC level {level}, token {index} ({token}): {reason}")


# ---- tokens ----------------------------------------------------------------------------------------------------------
@functools.cache
def vocabulary() -> Vocabulary:
    """``VSS VDD CIRCUIT_* (NM1 NM1_D NM1_G NM1_S NM1_B NM2 ...) VOUT VIN1 ... TRUNCATE`` (module docstring)."""
    devices = [
        token
        for family, cap in DEVICE_CAPS.items()
        for i in range(1, cap + 1)
        for token in (f"{family}{i}", *(f"{family}{i}_{p}" for p in PIN_LETTERS[family]))
    ]
    ports = ["VOUT"] + [f"{p}{i}" for p, cap in PORT_CAPS.items() for i in range(1, cap + 1)]
    types = [f"CIRCUIT_{t}" for t in CIRCUIT_TYPES]
    return Vocabulary(("VSS", "VDD", *types, *devices, *ports, END))


def devpin_kind(token: str) -> str:
    """``end``, ``type``, ``device`` (``NM1``), ``pin`` (``NM1_D``), ``net`` (a rail or port in the vocabulary) or
    ``unknown`` (anything else, including a pin letter its family lacks or an index over the family's cap)."""
    if token == END:
        return "end"
    if token.startswith("CIRCUIT_"):
        return "type" if token in vocabulary() else "unknown"
    match = _TOKEN.match(token)
    if match:
        if token not in vocabulary():
            return "unknown"
        return "pin" if match.group(3) else "device"
    return "net" if token in vocabulary() else "unknown"


def _split(token: str) -> tuple[str, str, str]:
    """(device token, family, pin letter or "") of a device or pin token."""
    match = _TOKEN.match(token)
    return f"{match.group(1)}{match.group(2)}", match.group(1), match.group(3) or ""


# ---- circuit -> sequence ---------------------------------------------------------------------------------------------
def edges(circuit: Circuit) -> list[tuple[str, str]]:
    """The undirected edges of the circuit's AnalogGenie graph (module docstring), in a fixed order: per device, the
    device-pin edges and the pin-port edges; then, per internal net, the pin-pin clique."""
    out: list[tuple[str, str]] = []
    internal: dict[str, list[str]] = {}
    for device in circuit.devices:
        for letter, net in zip(PIN_LETTERS[device.family], device.nets):
            pin = f"{device.name}_{letter}"
            out.append((device.name, pin))
            if net.startswith("NET"):
                internal.setdefault(net, []).append(pin)
            else:
                out.append((pin, net))
    for pins in internal.values():
        out.extend((a, b) for i, a in enumerate(pins) for b in pins[i + 1 :])
    return out


def walk(circuit: Circuit, rng: np.random.Generator) -> list[str]:
    """One edge-DFS ``VSS ... VSS`` crossing every edge once each way, neighbour order drawn from ``rng``."""
    adj: dict[str, list[str]] = {}
    for a, b in edges(circuit):
        adj.setdefault(a, []).append(b)
        adj.setdefault(b, []).append(a)
    if "VSS" not in adj:
        raise ValueError(f"{circuit.source}: the circuit has no VSS")
    for node, neighbours in adj.items():
        adj[node] = [neighbours[i] for i in rng.permutation(len(neighbours))]
    used: set[frozenset[str]] = set()
    tokens = ["VSS"]
    stack = [("VSS", iter(adj["VSS"]))]
    while stack:
        node, neighbours = stack[-1]
        for other in neighbours:
            edge = frozenset((node, other))
            if edge not in used:
                used.add(edge)
                tokens.append(other)
                stack.append((other, iter(adj[other])))
                break
        else:
            stack.pop()
            if stack:
                tokens.append(stack[-1][0])
    if len(used) != sum(len(n) for n in adj.values()) // 2:
        raise ValueError(f"{circuit.source}: the circuit is not connected, a walk from VSS misses some devices")
    return tokens


def walk_tokens(circuit: Circuit, circuit_type: str | None, rng: np.random.Generator) -> list[str]:
    """``[CIRCUIT_<type>] VSS ... VSS TRUNCATE``."""
    head = [f"CIRCUIT_{circuit_type}"] if circuit_type else []
    return [*head, *walk(circuit, rng), END]


# ---- sequence -> circuit ---------------------------------------------------------------------------------------------
def _analyse(tokens: list[str]) -> tuple[Circuit | None, DecodeError | None]:
    """The circuit of a sequence and the first ERC failure (None for a valid one); the circuit is None when the
    failure is at level 1-3 (no consistent netlist exists)."""
    tokens = list(tokens)
    if tokens and tokens[0].startswith("CIRCUIT_") and devpin_kind(tokens[0]) != "type":
        return None, DecodeError(1, 0, tokens[0], f"unknown circuit type; known: {', '.join(CIRCUIT_TYPES)}")
    start = 1 if tokens and devpin_kind(tokens[0]) == "type" else 0
    if END not in tokens[start:]:
        where = max(len(tokens) - 1, 0)
        return None, DecodeError(1, where, tokens[where] if tokens else "", "no TRUNCATE: the sequence never ends")
    stop = tokens.index(END, start)
    body = range(start, stop)
    if stop - start < 3:
        return None, DecodeError(1, start, tokens[start], "too short: a sequence reads VSS ... VSS TRUNCATE")
    if tokens[start] != "VSS":
        return None, DecodeError(1, start, tokens[start], "the sequence must start with VSS")
    if tokens[stop - 1] != "VSS":
        return None, DecodeError(1, stop - 1, tokens[stop - 1], "the last token before TRUNCATE must be VSS")
    # level 1: known tokens, and every consecutive pair an edge the graph can have
    kinds: dict[int, str] = {}
    pairs: list[tuple[int, str, str]] = []  # (index of the second token, a, b)
    for i in body:
        kind = kinds[i] = devpin_kind(tokens[i])
        if kind in ("unknown", "type"):
            what = "a circuit-type token after the start" if kind == "type" else "not in the device-pin vocabulary"
            return None, DecodeError(1, i, tokens[i], what)
        if i == start:
            continue
        a, b, ka = tokens[i - 1], tokens[i], kinds[i - 1]
        reason = ""
        if a == b:
            reason = f"{b} repeated: a node has no edge to itself"
        elif "device" in (ka, kind):
            device, other = (a, b) if ka == "device" else (b, a)
            if devpin_kind(other) != "pin" or _split(other)[0] != device:
                reason = f"device {device} next to {other}: a device links only to its own pins"
        elif ka == kind == "net":
            reason = f"{a} next to {b}: two rails/ports are never linked directly"
        if reason:
            return None, DecodeError(1, i, b, reason)
        pairs.append((i, a, b))
    # level 2: every device that appears has all its pins, each linked to its device token
    first: dict[str, int] = {}
    present: set[str] = set()
    linked: set[str] = set()
    for i in body:
        if kinds[i] in ("device", "pin"):
            device = _split(tokens[i])[0]
            first.setdefault(device, i)
            present.add(tokens[i])
    for _, a, b in pairs:
        if devpin_kind(a) == "device" or devpin_kind(b) == "device":
            linked.add(b if devpin_kind(a) == "device" else a)
    for device, i in sorted(first.items(), key=lambda item: item[1]):
        family = _split(device)[1]
        for letter in PIN_LETTERS[family]:
            pin = f"{device}_{letter}"
            if pin not in present:
                return None, DecodeError(2, i, tokens[i], f"device {device} lacks pin {pin}")
            if pin not in linked:
                return None, DecodeError(2, i, tokens[i], f"pin {pin} is never next to its device {device}")
    # level 3: nets as connected components of pin-pin and pin-port edges, one rail/port at most, no shorted passive
    parent: dict[str, str] = {}

    def find(x: str) -> str:
        parent.setdefault(x, x)
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    port_of: dict[str, str] = {}  # component root -> its rail/port
    for device in first:
        for letter in PIN_LETTERS[_split(device)[1]]:
            find(f"{device}_{letter}")
    for i, a, b in pairs:
        if devpin_kind(a) == "device" or devpin_kind(b) == "device":
            continue
        ra, rb = find(a), find(b)
        if devpin_kind(a) == "net":
            port_of.setdefault(ra, a)
        if devpin_kind(b) == "net":
            port_of.setdefault(rb, b)
        if ra == rb:
            continue
        pa, pb = port_of.get(ra), port_of.get(rb)
        if pa and pb and pa != pb:
            return None, DecodeError(3, i, b, f"{a}-{b} joins nets {pa} and {pb}: a pin on more than one net")
        parent[ra] = rb
        if pa:
            port_of[rb] = pa
        for device in {_split(t)[0] for t in (a, b) if devpin_kind(t) == "pin"}:
            family = _split(device)[1]
            if family in PASSIVE and find(f"{device}_P") == find(f"{device}_N"):
                return None, DecodeError(3, i, b, f"{device} has both terminals on one net (shorted)")
    # the circuit: internal nets NET1.. in order of first appearance, devices in order of first appearance
    names: dict[str, str] = {}
    position: dict[str, int] = {}
    for i in body:
        if kinds[i] == "pin":
            position.setdefault(find(tokens[i]), i)
    internal = 0
    for root in sorted(position, key=position.get):
        if root in port_of:
            names[root] = port_of[root]
        else:
            internal += 1
            names[root] = f"NET{internal}"
    devices = []
    for device in sorted(first, key=first.get):
        family = _split(device)[1]
        nets = tuple(names[find(f"{device}_{letter}")] for letter in PIN_LETTERS[family])
        devices.append(Device(device, family, nets))
    circuit = Circuit("<devpin>", devices)
    # level 4: every internal net touches two distinct devices
    on: dict[str, set[str]] = {}
    for d in devices:
        for net in d.nets:
            on.setdefault(net, set()).add(d.name)
    for root in sorted(position, key=position.get):
        net = names[root]
        if net.startswith("NET") and len(on[net]) < 2:
            i = position[root]
            return circuit, DecodeError(4, i, tokens[i], f"internal net {net} touches {len(on[net])} device")
    return circuit, None


def erc_level(tokens: list[str]) -> int:
    """0 for a valid device-pin sequence, else the first failing level 1-4 (module docstring)."""
    _, error = _analyse(tokens)
    return error.level if error else 0


def decode(tokens: list[str], strict: bool = False, source: str = "<devpin>") -> Circuit:
    """The circuit of a device-pin sequence: pins grouped into nets through the pin-pin and pin-port edges, nets on a
    rail/port named after it, internal nets ``NET1``.. in order of first appearance, devices in order of first
    appearance under their token names. Raises :class:`DecodeError` (ERC level, token index, reason) at levels 1-3;
    a floating internal net (level 4) is still a circuit and raises only when ``strict``."""
    circuit, error = _analyse(tokens)
    if error and (circuit is None or strict):
        raise error
    circuit.source = source
    return circuit
