"""Electrical-rule check of a generated bipartite walk, independent of the grammar (the reference's four levels,
``ERC.py`` / ``METRIC_Valid_n_Novel.py``, with its ``B_B`` typo corrected): level 1, the tokens alternate net, edge,
device, edge, net from ``VSS`` and end at ``VSS``, each edge of its device's family; level 2, every device has its
pins (MOS D, G, S, B; BJT B, C, E; diode P, N; a passive two terminals); level 3, each pin sits on one net and a
(device, net) pair keeps one label, a passive touches exactly two distinct nets; level 4, every internal net touches
at least two devices. Returns the first failing level, 0 for a valid walk. A circuit-type token is allowed only
first (a known type), as in the device-pin check (:func:`.devpin.erc_level`): one rule for both representations.

Level 5 (ours, after an outside review; the reference stops at level 4, which accepts a lone NMOS with every pin on
``VSS``): :func:`design_fault`, a circuit a designer would accept, applied to the decoded circuit of either
representation: an active device, the rails or a bias current feeding a drain, ports that are used, no device with
every pin but the MOS bulk on one net, no floating gate. Every circuit of the quick generator passes it."""

from __future__ import annotations

from .netlist import FAMILIES, PASSIVE, RAILS, Circuit, is_port
from .tokens import CIRCUIT_TYPES, END, edge_family, edge_pins, kind_of, split_device

__all__ = ["DESIGN_LEVEL", "design_fault", "erc_level", "netlist_fault"]

DESIGN_LEVEL = 5
_SUPPLY_PORTS = ("IB", "IIN", "IREF")  # current ports that feed a circuit without VDD, when they sit on a drain
_FEED_PINS = {"NM": "D", "PM": "D", "NPN": "C", "PNP": "C"}  # the terminals a bias current is pushed into
_CHANNEL = {"NM": "DS", "PM": "DS", "NPN": "CE", "PNP": "CE"}  # a transistor's channel, between two nets when active
_MOS = ("NM", "PM")


def design_fault(circuit: Circuit) -> str:
    """Why a designer would refuse the circuit ("" when it is acceptable), the same rule for both representations:

    * it has an active device: a diode, or a transistor whose channel (MOS drain-source, BJT collector-emitter)
      joins two distinct nets (a MOS with drain and source on one net is a capacitor);
    * ``VSS`` is reached, and ``VDD`` is, or a current port feeds the circuit: ``IB``, ``IIN`` or ``IREF`` on a MOS
      drain or a BJT collector (a textbook NMOS current mirror has no ``VDD``: its reference current enters the
      diode-connected drain; ``IOUT`` is the mirror's output, not its supply, so it never counts);
    * it has at least one port besides the rails (a lone resistor between ``VDD`` and ``VSS`` has no interface),
      and every port is used: it touches a device terminal other than a MOS bulk;
    * no device has all its pins, the MOS bulk aside, on one net (an NMOS with drain, gate and source on ``VSS`` does
      nothing wherever its bulk is);
    * no floating gate: every internal net that a MOS gate sits on touches a terminal other than MOS gates and bulks.
    """
    nets = set(circuit.nets)
    pins_on: dict[str, list[tuple[str, str]]] = {}
    for d in circuit.devices:
        pins = FAMILIES[d.family]
        tied = {n for p, n in zip(pins, d.nets) if not (d.family in _MOS and p == "B")}
        if len(tied) == 1:
            what = "every pin" if d.family not in _MOS else "drain, gate and source"
            return f"{d.name} has {what} on {next(iter(tied))}"
        for pin, net in zip(pins, d.nets):
            pins_on.setdefault(net, []).append((d.family, pin))

    def active(d) -> bool:
        if d.family == "DIO":
            return True
        if d.family not in _CHANNEL:
            return False
        at = dict(zip(FAMILIES[d.family], d.nets))
        return len({at[p] for p in _CHANNEL[d.family]}) == 2

    if not any(active(d) for d in circuit.devices):
        return "no active device (a diode, or a transistor with its channel between two nets)"
    if "VSS" not in nets:
        return "VSS is not reached"
    ports = sorted(n for n in nets if n not in RAILS and is_port(n))
    fed = any(p.startswith(_SUPPLY_PORTS) and any(_FEED_PINS.get(f) == pin for f, pin in pins_on[p]) for p in ports)
    if "VDD" not in nets and not fed:
        return "VDD is not reached and no current port (IB, IIN, IREF) feeds a drain or collector"
    if not ports:
        return "no port besides the rails"

    def mos(pins, letters):
        return all(f in _MOS and p in letters for f, p in pins)

    for port in ports:
        if mos(pins_on[port], "B"):
            return f"port {port} touches only MOS bulks"
    for net, pins in pins_on.items():
        if not is_port(net) and any(f in _MOS and p == "G" for f, p in pins) and mos(pins, "GB"):
            return f"floating gate: {net} touches only MOS gates and bulks"
    return ""


def netlist_fault(circuit: Circuit) -> str:
    """Why a decoded circuit fails the common netlist check ("" when it passes), one test for either representation's
    decoded circuit (issue 41's review of C4): ERC levels 2-4 restated on the netlist, then the designer rule.

    * level 2: every device has a net on each of its family's pins;
    * level 3: a passive's two terminals sit on two distinct nets;
    * level 4: every internal net (``NET...``) touches at least two distinct devices;
    * level 5: :func:`design_fault`.

    A walk that passes its representation's own check decodes to a circuit that should pass this one; a damaged walk
    that passes its check while its circuit fails here is one the check let through (leniency), whereas a damaged walk
    whose circuit passes here describes another valid circuit (the representation's robustness)."""
    devices_on: dict[str, set[str]] = {}
    for d in circuit.devices:
        pins = FAMILIES.get(d.family)
        if pins is None or len(d.nets) != len(pins) or not all(d.nets):
            return f"level 2: {d.name} lacks a net on a pin"
        if d.family in PASSIVE and d.nets[0] == d.nets[1]:
            return f"level 3: {d.name} has both terminals on {d.nets[0]}"
        for net in d.nets:
            devices_on.setdefault(net, set()).add(d.name)
    for net, devices in devices_on.items():
        if net.startswith("NET") and len(devices) < 2:
            return f"level 4: internal net {net} touches one device"
    fault = design_fault(circuit)
    return f"level {DESIGN_LEVEL}: {fault}" if fault else ""


def erc_level(tokens: list[str]) -> int:
    tokens = list(tokens)
    if tokens and kind_of(tokens[0]) == "type":
        if tokens[0].removeprefix("CIRCUIT_") not in CIRCUIT_TYPES:
            return 1
        tokens = tokens[1:]
    body = tokens
    if END in body:
        body = body[: body.index(END)]
    if len(body) < 5 or body[0] != "VSS" or body[-1] != "VSS" or (len(body) - 1) % 4:
        return 1
    label: dict[tuple[str, str], str] = {}
    for i in range(0, len(body) - 1, 4):
        net, e1, device, e2, net2 = body[i : i + 5]
        if kind_of(net) != "net" or kind_of(net2) != "net" or kind_of(device) != "device":
            return 1
        if kind_of(e1) != "edge" or kind_of(e2) != "edge":
            return 1
        family = split_device(device)[0]
        if family not in edge_family(e1) or family not in edge_family(e2):
            return 1
        for n, e in ((net, e1), (net2, e2)):
            if label.setdefault((device, n), e) != e:
                return 3
    pins_of: dict[str, list[str]] = {}
    nets_of: dict[str, set[str]] = {}
    devices_on: dict[str, set[str]] = {}
    for (device, net), edge in label.items():
        pins_of.setdefault(device, []).extend(edge_pins(edge))
        nets_of.setdefault(device, set()).add(net)
        devices_on.setdefault(net, set()).add(device)
    for device, pins in pins_of.items():
        family = split_device(device)[0]
        if family in PASSIVE:
            if len(nets_of[device]) < 2:
                return 2
            if len(nets_of[device]) > 2:
                return 3
        else:
            if set(pins) != set(FAMILIES[family]):
                return 2
            if len(pins) != len(set(pins)):
                return 3
    if any(len(devs) < 2 for net, devs in devices_on.items() if net.startswith("NET")):
        return 4
    return 0
