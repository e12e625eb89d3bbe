r"""Device-level netlists in the AnalogGenie ``.cir`` format (the data of AnalogToBi, Kim et al. 2026, arXiv
2603.08720; AnalogGenie's ``Dataset/<id>/<id>.cir``): one device per line, ``NAME (NET NET ...) TYPE``.

Device types and their terminals, as the reference's preprocessing reads them (``PREPROCESSING_Bipartite.py``):

* ``nmos4`` / ``pmos4``: drain, gate, source, bulk (D, G, S, B);
* ``npn`` / ``pnp``: collector, base, emitter (C, B, E); every BJT line of the real data carries a fourth
  (substrate) net, which the reference drops and so do we;
* ``resistor`` / ``capacitor`` / ``inductor``: two anonymous terminals (each pin is ``C``);
* ``diode``: anode, cathode (P, N).

Nets: ``VSS`` and ``VDD`` are the rails; names that start with a port prefix (``VIN``, ``VOUT``, ``IB``, ...) are
ports and kept verbatim; every other net is internal and renamed ``NET1``, ``NET2``, ... in the sorted order of its
original name, as the reference does.

:func:`parse` raises :class:`NetlistError` naming the file, the line and the reason: a line that is not a device,
an unknown device type, a wrong number of terminals, a duplicate device name (unless ``duplicate_names="renumber"``,
the reference's behaviour on the real data, where 1,440 files repeat a name), a missing ``VSS``, a passive with both
terminals on one net, or a floating internal net (one device pin on it). A missing ``VDD`` is allowed: 176 real
circuits have none.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

__all__ = ["FAMILIES", "PINS", "PORT_PREFIXES", "Circuit", "Device", "NetlistError", "digital_reason", "parse"]

# device type -> (family token prefix, pin letters in terminal order)
PINS = {
    "nmos4": ("NM", "DGSB"),
    "pmos4": ("PM", "DGSB"),
    "npn": ("NPN", "CBE"),
    "pnp": ("PNP", "CBE"),
    "resistor": ("R", "CC"),
    "capacitor": ("C", "CC"),
    "inductor": ("L", "CC"),
    "diode": ("DIO", "PN"),
}
FAMILIES = {prefix: pins for prefix, pins in PINS.values()}
PASSIVE = ("R", "C", "L")
RAILS = ("VSS", "VDD")
PORT_PREFIXES = (
    "VIN", "VOUT", "IIN", "IOUT", "VB", "IB", "VCONT", "VCM", "IREF", "VRF", "VLO", "VIF", "VBB", "VREF",
)  # fmt: skip
_LINE = re.compile(r"^(\S+)\s*\((.*?)\)\s*(\S+)\s*$")
# the reference's filter of digital circuits (PREPROCESSING_Bipartite.py): a net or a device type of these names
DIGITAL_NETS = ("VCLK", "LOGICA", "LOGICB", "LOGICD", "LOGICF", "LOGICG", "LOGICQ", "VLATCH", "VHOLD", "VTRACK")
DIGITAL_DEVICES = ("xor", "pfd", "inverter", "transmission_gate")


class NetlistError(ValueError):
    """A netlist the pipeline refuses: ``where`` is ``file:line`` (line 0 for the whole circuit)."""

    def __init__(self, source: str, line: int, reason: str):
        self.source, self.line, self.reason = source, line, reason
        super().__init__(f"{source}:{line}: {reason}")


@dataclass(frozen=True)
class Device:
    name: str  # the token, e.g. NM1 (family prefix + index in order of appearance within the family)
    family: str  # NM, PM, NPN, PNP, R, C, L, DIO
    nets: tuple[str, ...]  # one per pin, in the order of FAMILIES[family]


@dataclass
class Circuit:
    source: str
    devices: list[Device] = field(default_factory=list)

    @property
    def nets(self) -> list[str]:
        return sorted({n for d in self.devices for n in d.nets})

    def edges(self) -> list[tuple[str, str, str]]:
        """The bipartite device-net graph: one edge (device, net, label) per device and net it touches, labelled by
        the family's edge prefix and the sorted letters of the pins on that net (``M_DG``, ``B_C``, ``R_C``,
        ``D_N``), as the reference's ``PREPROCESSING_Bipartite.py`` labels them."""
        out = []
        for d in self.devices:
            pins = FAMILIES[d.family]
            by_net: dict[str, str] = {}
            for pin, net in zip(pins, d.nets):
                by_net[net] = by_net.get(net, "") + pin
            for net, letters in by_net.items():
                out.append((d.name, net, edge_label(d.family, letters)))
        return out


def edge_label(family: str, letters: str) -> str:
    """The edge type of a device's pins on one net: ``M_`` / ``B_`` / ``D_`` + sorted distinct pin letters for
    transistors and diodes, ``R_C`` / ``C_C`` / ``L_C`` for passives."""
    if family in PASSIVE:
        return f"{family}_C"
    prefix = {"NM": "M", "PM": "M", "NPN": "B", "PNP": "B", "DIO": "D"}[family]
    return f"{prefix}_{''.join(sorted(set(letters)))}"


def digital_reason(text: str) -> str:
    """Why the reference drops a netlist as digital ("" when it keeps it): a net named like a clock or a logic
    signal (``VCLK1``, ``LOGICQ2``, ...), or a digital device (``inverter``, ``xor``, ...). Such circuits are
    filtered out with this reason before parsing, never refused as errors."""
    for line in text.splitlines():
        match = _LINE.match(line.strip())
        if not match:
            continue
        kind = match.group(3).lower()
        if kind in DIGITAL_DEVICES:
            return f"digital device {kind}"
        net = next((n for n in match.group(2).split() if n.upper().startswith(DIGITAL_NETS)), None)
        if net:
            return f"digital net {net}"
    return ""


def is_port(net: str) -> bool:
    return net in RAILS or net.startswith(PORT_PREFIXES)


def parse(text: str, source: str = "<netlist>", duplicate_names: str = "error") -> Circuit:
    """The circuit of a ``.cir`` text, devices renamed per family in order of appearance (NM1, NM2, ...), internal
    nets renamed NET1.. by sorted original name; :class:`NetlistError` on a refused netlist (module docstring)."""
    if duplicate_names not in ("error", "renumber"):
        raise ValueError(f"duplicate_names must be 'error' or 'renumber', got {duplicate_names!r}")
    raw: list[tuple[int, str, str, list[str]]] = []
    seen: dict[str, int] = {}
    for number, line in enumerate(text.splitlines(), start=1):
        stripped = line.strip()
        if not stripped or stripped.startswith(("*", "//", ".")):
            continue
        match = _LINE.match(stripped)
        if not match:
            raise NetlistError(source, number, f"not a device line 'NAME (NETS) TYPE': {stripped!r}")
        name, nets, kind = match.group(1), match.group(2).split(), match.group(3).lower()
        if kind not in PINS:
            raise NetlistError(source, number, f"unknown device type {kind!r} of {name}; known: {sorted(PINS)}")
        pins = PINS[kind][1]
        allowed = (3, 4) if kind in ("npn", "pnp") else (len(pins),)
        if len(nets) not in allowed:
            raise NetlistError(source, number, f"{kind} {name} has {len(nets)} terminals, expected {len(pins)}")
        if name in seen and duplicate_names == "error":
            raise NetlistError(source, number, f"duplicate device name {name} (first on line {seen[name]})")
        seen.setdefault(name, number)
        raw.append((number, name, kind, [n.upper() for n in nets[: len(pins)]]))
    if not raw:
        raise NetlistError(source, 0, "no device")
    internal = sorted({n for *_, nets in raw for n in nets if not is_port(n)})
    rename = {n: f"NET{i}" for i, n in enumerate(internal, start=1)}
    counters: dict[str, int] = {}
    devices = []
    for number, _, kind, nets in raw:
        family = PINS[kind][0]
        if family in PASSIVE and nets[0] == nets[1]:
            raise NetlistError(source, number, f"{kind} with both terminals on net {nets[0]}")
        counters[family] = counters.get(family, 0) + 1
        devices.append(Device(f"{family}{counters[family]}", family, tuple(rename.get(n, n) for n in nets)))
    circuit = Circuit(source, devices)
    if "VSS" not in circuit.nets:
        raise NetlistError(source, 0, "no VSS net: every circuit needs its ground rail")
    pins_on: dict[str, int] = {}
    for d in devices:
        for net in set(d.nets):
            pins_on[net] = pins_on.get(net, 0) + 1
    floating = sorted((n for n, count in pins_on.items() if not is_port(n) and count < 2), key=lambda n: int(n[3:]))
    if floating:
        originals = {v: k for k, v in rename.items()}
        names = ", ".join(originals[n] for n in floating)
        raise NetlistError(source, 0, f"floating internal net(s) {names}: each touches a single device")
    return circuit
