r"""Grammar-guided decoding of bipartite walks (AnalogToBi, Kim et al. 2026, arXiv 2603.08720, Sec. 3.2 and App. C;
reference ``GPT_Inference_Grammar.py``): an automaton over the tokens of a walk that allows, at each position,
only the tokens that keep the partial walk a valid device-net graph.

A walk reads ``[CT] VSS e d e n e d e n ... VSS TRUNCATE``: nets and devices alternate, each step through an edge
token naming the pins the device has on that net. The state keeps, for the walk so far, the label of every
(device, net) pair, the pins each device has bound, the nets of each passive and the devices on each net. At a

* **net n**: any edge that some device could take on n (a fresh device always can), and ``TRUNCATE`` iff n is
  ``VSS``, it is not the walk's first net, and the graph is complete: every device has all its pins (MOS D, G, S, B;
  BJT B, C, E; diode P, N; a passive two distinct nets) and every internal net touches at least two devices;
* **net n, edge e**: the devices d of e's family with ``adm(d, e, n)``: e is d's label on n (walking an edge
  again), or d has no label on n and e's pins are unbound on d (a passive: d is on fewer than two nets);
* **edge e, device d**: the edges e' of d's family with which d can reach some net;
* **device d, edge e'**: the nets n' with ``adm(d, e', n')``;
* after ``TRUNCATE``: ``TRUNCATE`` (padding).

Ours is stricter than the reference's in three places, so that every terminated walk is valid by construction
(our check, not a claim): it never falls back to allowing every device when none is admissible (the reference's
line 669), it keeps a (device, net) label fixed once walked, and a passive needs two distinct nets; ``D_PN`` (the
reference never emits it; ``D_NP`` is the canonical label) is never admissible.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from .netlist import FAMILIES, PASSIVE
from .tokens import CIRCUIT_TYPES, DEVICE_CAPS, EDGES, END, Vocabulary, edge_family, edge_pins, kind_of, split_device

__all__ = ["GrammarError", "State", "accepts"]


class GrammarError(ValueError):
    def __init__(self, index: int, token: str, reason: str):
        self.index, self.token, self.reason = index, token, reason
        super().__init__(f"token {index} ({token}): {reason}")


@dataclass
class State:
    """The grammar's state of one partial walk; ``typed``: the walk starts with a circuit-type token."""

    typed: bool = True
    vocab: Vocabulary = field(default_factory=Vocabulary.bipartite)
    tokens: list[str] = field(default_factory=list)
    label: dict[tuple[str, str], str] = field(default_factory=dict)
    bound: dict[str, set[str]] = field(default_factory=dict)
    nets_of: dict[str, set[str]] = field(default_factory=dict)
    devices_on: dict[str, set[str]] = field(default_factory=dict)
    labels_of: dict[str, dict[str, str]] = field(default_factory=dict)  # device -> net -> edge walked
    used: dict[str, list[str]] = field(default_factory=dict)  # family -> devices of the walk, in order
    net_visits: int = 0

    # ---- admissibility -------------------------------------------------------------------------------------------
    def _adm(self, device: str, edge: str, net: str) -> bool:
        family = split_device(device)[0]
        if family not in edge_family(edge) or edge == "D_PN":
            return False
        walked = self.label.get((device, net))
        if walked is not None:
            return walked == edge
        if family in PASSIVE:
            return len(self.nets_of.get(device, ())) < 2
        pins = set(edge_pins(edge))
        if not pins <= set(FAMILIES[family]):
            return False
        return not pins & self.bound.get(device, set())

    def _fresh(self, device: str, edge: str) -> bool:
        """``_adm(device, edge, n)`` for a net n the device has not been walked to (the same for every such net)."""
        family = split_device(device)[0]
        if family not in edge_family(edge) or edge == "D_PN":
            return False
        if family in PASSIVE:
            return len(self.nets_of.get(device, ())) < 2
        pins = set(edge_pins(edge))
        return pins <= set(FAMILIES[family]) and not pins & self.bound.get(device, set())

    def _used(self, family: str) -> list[str]:
        return self.used.get(family, [])

    def _unused_left(self, family: str) -> bool:
        return len(self._used(family)) < DEVICE_CAPS[family]

    def _edge_at_net(self, edge: str, net: str) -> bool:
        """Some device can take ``edge`` on ``net``: one walked there with that label, one of the walk's devices not
        yet on the net whose pins allow it, or an unused device of the family (every unused index is alike)."""
        for family in edge_family(edge):
            for device in self._used(family):
                walked = self.labels_of[device].get(net)
                if walked == edge if walked is not None else self._fresh(device, edge):
                    return True
            if self._unused_left(family) and self._fresh(f"{family}0", edge):
                return True
        return False

    def _devices(self, families) -> list[str]:
        """Devices of these families: those already in the walk and every unused index up to the family's cap."""
        return [f"{f}{i}" for f in families for i in range(1, DEVICE_CAPS[f] + 1)]

    def _nets(self) -> list[str]:
        return self.vocab.nets

    def complete(self) -> bool:
        if not self.bound and not self.nets_of:
            return False
        for device in {*self.bound, *self.nets_of}:
            family = split_device(device)[0]
            if family in PASSIVE:
                if len(self.nets_of.get(device, ())) != 2:
                    return False
            elif self.bound.get(device, set()) != set(FAMILIES[family]):
                return False
        return all(len(devs) >= 2 for net, devs in self.devices_on.items() if net.startswith("NET"))

    # ---- the automaton -------------------------------------------------------------------------------------------
    def allowed(self) -> list[str]:
        """The tokens the grammar allows next (never empty)."""
        t = self.tokens
        if not t:
            return [f"CIRCUIT_{name}" for name in CIRCUIT_TYPES] if self.typed else ["VSS"]
        last = t[-1]
        kind = kind_of(last)
        if kind == "end":
            return [END]
        if kind == "type":
            return ["VSS"]
        if kind == "net":
            edges = [e for e in EDGES if self._edge_at_net(e, last)]
            if last == "VSS" and self.net_visits > 1 and self.complete():
                edges.append(END)
            return edges
        if kind == "edge" and kind_of(t[-2]) == "net":
            net = t[-2]
            out = []
            for family in edge_family(last):
                fresh_ok = self._fresh(f"{family}0", last)
                for i in range(1, DEVICE_CAPS[family] + 1):
                    device = f"{family}{i}"
                    if device in self.labels_of:
                        walked = self.labels_of[device].get(net)
                        if walked == last if walked is not None else self._fresh(device, last):
                            out.append(device)
                    elif fresh_ok:
                        out.append(device)
            return out
        if kind == "edge":
            device = t[-2]
            labels = self.labels_of.get(device, {})
            fresh_ok = self._fresh(device, last)
            return [n for n in self._nets() if (labels[n] == last if n in labels else fresh_ok)]
        if kind == "device":
            family = split_device(last)[0]
            labels = set(self.labels_of.get(last, {}).values())
            return [e for e in EDGES if family in edge_family(e) and (e in labels or self._fresh(last, e))]
        raise AssertionError(kind)

    def _next_allowed(self, token: str) -> bool:
        """Whether ``token`` is allowed next, without listing every allowed token."""
        t = self.tokens
        if token not in self.vocab:
            return False
        if not t or kind_of(t[-1]) in ("end", "type"):
            return token in self.allowed()
        last, kind = t[-1], kind_of(token)
        if kind_of(last) == "net":
            if token == END:
                return last == "VSS" and self.net_visits > 1 and self.complete()
            return kind == "edge" and any(self._adm(d, token, last) for d in self._devices(edge_family(token)))
        if kind_of(last) == "edge" and kind_of(t[-2]) == "net":
            return kind == "device" and self._adm(token, last, t[-2])
        if kind_of(last) == "device":
            family = split_device(last)[0]
            return (
                kind == "edge" and family in edge_family(token) and any(self._adm(last, token, n) for n in self._nets())
            )
        return kind == "net" and self._adm(t[-2], last, token)

    def _connect(self, device: str, net: str, edge: str) -> None:
        """Record that ``device`` sits on ``net`` through ``edge`` (its pins bound, or a passive's net)."""
        self.label[(device, net)] = edge
        if device not in self.labels_of:
            self.used.setdefault(split_device(device)[0], []).append(device)
        self.labels_of.setdefault(device, {})[net] = edge
        if split_device(device)[0] in PASSIVE:
            self.nets_of.setdefault(device, set()).add(net)
        else:
            self.bound.setdefault(device, set()).update(edge_pins(edge))
        self.devices_on.setdefault(net, set()).add(device)

    def advance(self, token: str) -> None:
        """Take ``token``; :class:`GrammarError` naming its index when the grammar does not allow it."""
        index = len(self.tokens)
        if token not in self.vocab:
            raise GrammarError(index, token, "not in the vocabulary")
        if not self._next_allowed(token):
            last = self.tokens[-1] if self.tokens else "the start"
            raise GrammarError(index, token, f"not allowed after {last}")
        if kind_of(token) == "net" and self.tokens and kind_of(self.tokens[-1]) == "edge":
            self._connect(self.tokens[-2], token, self.tokens[-1])  # device, edge, net
        if kind_of(token) == "device":  # net, edge, device: the device is on the net before the edge
            self._connect(token, self.tokens[-2], self.tokens[-1])
        if kind_of(token) == "net":
            self.net_visits += 1
        self.tokens.append(token)


def accepts(tokens: list[str], typed: bool = True) -> tuple[bool, GrammarError | None]:
    """(accepted, the first error) of a whole token list, which must end with ``TRUNCATE``."""
    state = State(typed=typed)
    try:
        for token in tokens:
            state.advance(token)
    except GrammarError as error:
        return False, error
    if not state.tokens or state.tokens[-1] != END:
        return False, GrammarError(len(tokens), "", "the walk does not end with TRUNCATE")
    return True, None
