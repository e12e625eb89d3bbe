"""Electrical-rule check of a generated bipartite walk, independent of the grammar (the reference's four levels,
``ERC.py`` / ``METRIC_Valid_n_Novel.py``, with its ``B_B`` typo corrected): level 1, the tokens alternate net, edge,
device, edge, net from ``VSS`` and end at ``VSS``, each edge of its device's family; level 2, every device has its
pins (MOS D, G, S, B; BJT B, C, E; diode P, N; a passive two terminals); level 3, each pin sits on one net and a
(device, net) pair keeps one label, a passive touches exactly two distinct nets; level 4, every internal net touches
at least two devices. Returns the first failing level, 0 for a valid walk."""

from __future__ import annotations

from .netlist import FAMILIES, PASSIVE
from .tokens import END, edge_family, edge_pins, kind_of, split_device

__all__ = ["erc_level"]


def erc_level(tokens: list[str]) -> int:
    body = [t for t in tokens if kind_of(t) != "type"]
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
