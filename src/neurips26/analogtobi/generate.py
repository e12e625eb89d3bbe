r"""A seeded compositional generator of device-level netlists, the offline stand-in for AnalogGenie's dataset at smoke
and quick scale: circuit families drawn with skewed weights, each built from textbook sub-blocks along variant axes
that change the graph, written as AnalogGenie ``.cir`` text (4-terminal MOS lines, BJT lines with a substrate net as
the real data), parsed by :func:`netlist.parse` and deduplicated by graph isomorphism (networkx: a Weisfeiler-Lehman
hash buckets the graphs, ``is_isomorphic`` decides inside a bucket), so that no two kept circuits are the same
topology.

Families and their axes:

* ``Mirror``: simple, cascode, Wilson, improved Wilson or wide-swing cascode; NMOS or PMOS; 1-3 outputs
  (``IOUT1..3``); the reference current from an ``IREF1`` port (NMOS), a resistor or a biased current source.
* ``Opamp``: five-transistor OTA, OTA with a cascoded (stacked-diode or wide-swing) mirror load, telescopic cascode,
  folded cascode, or two-stage Miller with one of those as its first stage, a common-source second stage and ``Cc``
  (alone, with a nulling resistor on either side, or Ahuja-style to a cascode node); NMOS or PMOS input pair.
* ``LDO``: an error amplifier drawn from the op-amp architectures (``VREF1`` on the inverting input, the feedback tap
  on the other), optionally a PMOS source-follower buffer, a PMOS pass device, a 2- or 3-resistor divider, ``Cout``
  with or without an ESR resistor, optional feed-forward and Miller capacitors.
* ``Bandgap_Ref``: a ratioed pair of substrate PNPs (or NPNs or diodes; the larger one as 1-3 parallel devices) with
  ``R1``, a PMOS mirror (optionally cascoded) closed either by an op-amp (five-transistor, cascoded-load or two-stage,
  optionally with Banba's current-mode resistors) or by a self-biased NMOS pair with an optional three-device
  start-up; output ``VREF1`` through ``R2`` and a third junction (or a resistor, Banba).
* ``Comparator``: a preamplifier (resistor, diode or diode-plus-cross-coupled load) and a clocked cross-coupled latch
  fed by ``VCONT2`` switches or an input pair; a StrongARM latch clocked by ``VCONT1`` with optional inner reset;
  Allen-Holberg's continuous-time comparator with hysteresis; NMOS or PMOS input; outputs direct, through
  inverters or through a NAND/NOR set-reset latch.
* ``Oscillator``: a ring of 3, 5 or 7 inverting stages (CMOS, current-starved by ``VCONT1``/``VCONT2`` or a bias
  mirror, NMOS-starved, or resistor-loaded), optional NAND enable stage, node capacitors and output buffer; an LC
  cross-coupled oscillator (NMOS, PMOS or complementary pair) with inductors, a tail current source, resistor or
  none, fixed capacitors and/or MOS or junction varactors on ``VCONT1``, direct, follower or AC-coupled outputs.
* ``Mixer``: a single- or double-balanced Gilbert cell in MOS or NPN, single-ended or differential RF stage with a
  tail or pseudo-differential, resistive or inductive degeneration, resistor, biased-PMOS or CMFB-PMOS loads,
  optional current bleeding and an IF capacitor.

Decorations shared by all families: each bias gate net comes from a ``VB`` port, an ``IB`` port into a
diode-connected device, or a resistor into diode-connected device(s) (one for a current source, two stacked for a
cascode gate), shared between devices of the same polarity and level or not; a generated bias net may get a bypass
capacitor to its rail; rail devices may be source-degenerated; the bulk of a device whose source is not a rail is
tied to its source or to its rail, per group of devices. Every circuit has at most :data:`MAX_DEVICES` devices and
:data:`MAX_INTERNAL_NETS` internal nets (larger draws are redrawn), ports within the vocabulary's caps.

Honest limit: the circuits are far more regular than a textbook (or AnalogGenie's) set: every circuit is one of a
few templates with local substitutions, there are no sizes, and nothing is simulated.

Node labels of the isomorphism test are the device family, or the net's name for rails and ports (so VIN1 and VIN2
differ), or ``NET`` for internal nets; edge labels are the edge types.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from .netlist import Circuit, is_port, parse
from .tokens import DEVICE_CAPS, PORT_CAPS

__all__ = ["FAMILIES", "MAX_DEVICES", "MAX_INTERNAL_NETS", "generate", "graph_hash", "graph_of", "isomorphic"]

MAX_DEVICES = 24
MAX_INTERNAL_NETS = 20
_RAIL = {"nmos": "VSS", "pmos": "VDD"}
_FLIP = {"nmos": "pmos", "pmos": "nmos"}
_TYPE_FAMILY = {"nmos4": "NM", "pmos4": "PM", "npn": "NPN", "pnp": "PNP", "resistor": "R", "capacitor": "C",
                "inductor": "L", "diode": "DIO"}  # fmt: skip


def _pick(rng: np.random.Generator, options, p=None):
    return options[int(rng.choice(len(options), p=p))]


def _coin(rng: np.random.Generator, prob: float = 0.5) -> bool:
    return bool(rng.random() < prob)


class _Netlist:
    """A netlist under construction: unique device names, fresh internal nets (``n1``, ``n2``, ...), ports numbered
    per prefix in order of use, bias generators and per-group bulk policies drawn from ``rng``."""

    def __init__(self, rng: np.random.Generator):
        self.rng = rng
        self.lines: list[str] = []
        self._names: dict[str, int] = {}
        self._nets = 0
        self.ports: dict[str, int] = {}
        self._bias: dict[tuple[str, int], str] = {}
        self._body: dict[str, str] = {}
        self.generated_bias: list[tuple[str, str]] = []  # (net, kind) of on-chip bias nets
        self.share_bias = _coin(rng, 0.6)
        self.degenerate = _coin(rng, 0.15)  # source-degeneration resistors under rail current sources

    # ---- names -----------------------------------------------------------------------------------------------------
    def _name(self, prefix: str) -> str:
        self._names[prefix] = self._names.get(prefix, 0) + 1
        return f"{prefix}{self._names[prefix]}"

    def net(self) -> str:
        self._nets += 1
        return f"n{self._nets}"

    def port(self, prefix: str) -> str:
        self.ports[prefix] = self.ports.get(prefix, 0) + 1
        return f"{prefix}{self.ports[prefix]}"

    def body(self, group: str) -> str:
        """``rail`` or ``source``: where the devices of ``group`` (a pair, cascodes, ...) tie their bulk."""
        if group not in self._body:
            self._body[group] = _pick(self.rng, ["rail", "source"])
        return self._body[group]

    # ---- devices ---------------------------------------------------------------------------------------------------
    def mos(self, kind: str, d: str, g: str, s: str, bulk: str = "rail") -> None:
        body = _RAIL[kind] if bulk == "rail" else s if bulk == "source" else bulk
        self.lines.append(f"{self._name('M')} ({d} {g} {s} {body}) {kind}4")

    def rail_mos(self, kind: str, d: str, g: str) -> None:
        """A device with its source on its rail, through a degeneration resistor when the circuit degenerates."""
        s = _RAIL[kind]
        if self.degenerate:
            s = self.net()
            self.res(s, _RAIL[kind])
        self.mos(kind, d, g, s)

    def _two(self, prefix: str, kind: str, a: str, b: str) -> None:
        assert a != b, (prefix, a)
        self.lines.append(f"{self._name(prefix)} ({a} {b}) {kind}")

    def res(self, a: str, b: str) -> None:
        self._two("R", "resistor", a, b)

    def cap(self, a: str, b: str) -> None:
        self._two("C", "capacitor", a, b)

    def ind(self, a: str, b: str) -> None:
        self._two("L", "inductor", a, b)

    def diode(self, p: str, n: str) -> None:
        self._two("D", "diode", p, n)

    def bjt(self, kind: str, c: str, b: str, e: str) -> None:
        self.lines.append(f"{self._name('Q')} ({c} {b} {e} VSS) {kind}")

    # ---- sub-blocks ------------------------------------------------------------------------------------------------
    def bias(self, kind: str, level: int = 1) -> str:
        """The gate net of a ``kind`` current source (level 1) or cascode (level 2): a ``VB`` port, or an ``IB``
        port or a resistor from the other rail into one (level 1) or two stacked (level 2) diode-connected
        devices; shared by later calls of the same kind and level when the circuit shares its biases."""
        key = (kind, level)
        if self.share_bias and key in self._bias:
            return self._bias[key]
        style = _pick(self.rng, ["port", "current", "resistor"], p=[0.5, 0.25, 0.25])
        if style == "port":
            net = self.port("VB")
        else:
            net = self.port("IB") if style == "current" else self.net()
            if style == "resistor":
                self.res(_RAIL[_FLIP[kind]], net)
            if level == 1:
                self.mos(kind, net, net, _RAIL[kind])
            else:
                mid = self.net()
                self.mos(kind, net, net, mid, self.body("bias"))
                self.mos(kind, mid, mid, _RAIL[kind])
            self.generated_bias.append((net, kind))
        self._bias[key] = net
        return net

    def current_source(self, kind: str, d: str) -> None:
        self.rail_mos(kind, d, self.bias(kind, 1))

    def bypass(self) -> None:
        """A bypass capacitor from at most one generated bias net to its rail."""
        if self.generated_bias and _coin(self.rng, 0.3):
            net, kind = _pick(self.rng, self.generated_bias)
            self.cap(net, _RAIL[kind])

    # ---- limits ----------------------------------------------------------------------------------------------------
    def fits(self) -> bool:
        if len(self.lines) > MAX_DEVICES or self._nets > MAX_INTERNAL_NETS:
            return False
        per_family: dict[str, int] = {}
        for line in self.lines:
            family = _TYPE_FAMILY[line.rsplit(" ", 1)[1]]
            per_family[family] = per_family.get(family, 0) + 1
        if any(count > DEVICE_CAPS[f] for f, count in per_family.items()):
            return False
        return all(count <= PORT_CAPS[prefix] for prefix, count in self.ports.items())

    def text(self) -> str:
        return "\n".join(self.lines)


# ---- shared amplifier blocks -----------------------------------------------------------------------------------------
def _mirror_load(b: _Netlist, kind: str, x: str, out: str, style: str) -> str | None:
    """A current-mirror load of ``kind`` at its rail: diode side ``x``, output ``out``; ``simple``, ``stacked``
    (self-biased cascode) or ``wide`` (wide-swing, cascode gates biased). Returns the output-side cascode node."""
    if style == "simple":
        b.rail_mos(kind, x, x)
        b.rail_mos(kind, out, x)
        return None
    e1, e2 = b.net(), b.net()
    body = b.body("cascode")
    if style == "stacked":
        b.mos(kind, x, x, e1, body)
        b.rail_mos(kind, e1, e1)
        b.mos(kind, out, x, e2, body)
        b.rail_mos(kind, e2, e1)
    else:
        vb = b.bias(kind, 2)
        b.mos(kind, x, vb, e1, body)
        b.rail_mos(kind, e1, x)
        b.mos(kind, out, vb, e2, body)
        b.rail_mos(kind, e2, x)
    return e2


def _input_pair(b: _Netlist, kind: str, inp: str, inn: str, d1: str, d2: str, tail: str) -> None:
    """A differential pair of ``kind`` on ``tail``, drains ``d1`` (gate ``inp``) and ``d2`` (gate ``inn``),
    optionally source-degenerated."""
    degenerate = _coin(b.rng, 0.15)
    for drain, gate in ((d1, inp), (d2, inn)):
        s = tail
        if degenerate:
            s = b.net()
            b.res(s, tail)
        b.mos(kind, drain, gate, s, b.body("pair"))


def _amp_stage(b: _Netlist, inp: str, inn: str, out: str, arch: str, kind: str) -> tuple[str, list[str]]:
    """One gain stage with a ``kind`` input pair, ``inp`` non-inverting and ``inn`` inverting, single-ended
    ``out``. Returns the polarity of the mirror that loads ``out`` and the output branch's cascode nodes."""
    load = _FLIP[kind]
    tail = b.net()
    b.current_source(kind, tail)
    x = b.net()  # the diode side of the mirror load
    if arch in ("ota5", "ota5_cascode"):
        _input_pair(b, kind, inp, inn, x, out, tail)
        style = "simple" if arch == "ota5" else _pick(b.rng, ["stacked", "wide"])
        node = _mirror_load(b, load, x, out, style)
        return load, [node] if node else []
    if arch == "telescopic":
        c1, c2 = b.net(), b.net()
        _input_pair(b, kind, inp, inn, c1, c2, tail)
        vb = b.bias(kind, 2)
        b.mos(kind, x, vb, c1, b.body("cascode"))
        b.mos(kind, out, vb, c2, b.body("cascode"))
        node = _mirror_load(b, load, x, out, _pick(b.rng, ["stacked", "wide"]))
        return load, [c2, node]
    # folded cascode: the pair's drains fold into load-polarity current sources and cascodes, over an input-polarity
    # mirror
    f1, f2 = b.net(), b.net()
    _input_pair(b, kind, inp, inn, f1, f2, tail)
    b.current_source(load, f1)
    b.current_source(load, f2)
    vb = b.bias(load, 2)
    b.mos(load, x, vb, f1, b.body("cascode"))
    b.mos(load, out, vb, f2, b.body("cascode"))
    node = _mirror_load(b, kind, x, out, _pick(b.rng, ["simple", "stacked", "wide"], p=[0.4, 0.3, 0.3]))
    return kind, [f2] + ([node] if node else [])


_ARCHS = ("ota5", "ota5_cascode", "telescopic", "folded", "miller")


def _amp(b: _Netlist, inp: str, inn: str, out: str, arch: str, kind: str, first=None) -> None:
    """An amplifier of one of :data:`_ARCHS`; ``miller``: a first stage (``first`` or drawn) with inputs swapped,
    since the common-source second stage inverts, and Miller compensation."""
    if arch != "miller":
        _amp_stage(b, inp, inn, out, arch, kind)
        return
    first = first or _pick(b.rng, ["ota5", "ota5_cascode", "telescopic", "folded"], p=[0.45, 0.2, 0.15, 0.2])
    o1 = b.net()
    cs, nodes = _amp_stage(b, inn, inp, o1, first, kind)
    b.rail_mos(cs, out, o1)
    b.current_source(_FLIP[cs], out)
    comp = _pick(b.rng, ["cc", "cc_rz", "rz_cc", "ahuja"] if nodes else ["cc", "cc_rz", "rz_cc"])
    if comp == "cc":
        b.cap(o1, out)
    elif comp == "ahuja":  # indirect compensation into the first stage's low-impedance cascode node
        b.cap(_pick(b.rng, nodes), out)
    else:  # a nulling resistor in series with Cc, on the output side (cc_rz) or the first stage's (rz_cc)
        z = b.net()
        first_part, second_part = (b.cap, b.res) if comp == "cc_rz" else (b.res, b.cap)
        first_part(o1, z)
        second_part(z, out)


# ---- families ----------------------------------------------------------------------------------------------------
def _mirror(b: _Netlist) -> None:
    rng = b.rng
    kind = _pick(rng, ["nmos", "pmos"], p=[0.6, 0.4])
    rail, other = _RAIL[kind], _FLIP[kind]
    outputs = int(_pick(rng, [1, 2, 3], p=[0.4, 0.35, 0.25]))
    style = _pick(rng, ["simple", "cascode", "wilson", "iwilson", "wide"], p=[0.25, 0.2, 0.2, 0.15, 0.2])
    source = _pick(rng, ["port", "resistor", "source"] if kind == "nmos" else ["resistor", "source"])
    ref = "IREF1" if source == "port" else b.net()
    if source == "resistor":
        b.res(_RAIL[other], ref)
    elif source == "source":
        b.current_source(other, ref)
    iout = [f"IOUT{i}" for i in range(1, outputs + 1)]
    casc = b.body("cascode")
    gate = ref  # the net a filter capacitor may sit on
    if style == "simple":
        b.rail_mos(kind, ref, ref)
        for o in iout:
            b.rail_mos(kind, o, ref)
    elif style in ("cascode", "wide"):
        m = b.net()
        top, bottom = (ref, m) if style == "cascode" else (b.bias(kind, 2), ref)
        b.mos(kind, ref, top, m, casc)
        b.rail_mos(kind, m, bottom if style == "wide" else m)
        for o in iout:
            c = b.net()
            b.mos(kind, o, top, c, casc)
            b.rail_mos(kind, c, bottom)
        gate = bottom
    else:  # Wilson: the output device's source is the mirror's diode node x; improved: a diode equalises V_DS
        x = b.net()
        if style == "wilson":
            b.rail_mos(kind, ref, x)
        else:
            y = b.net()
            b.mos(kind, ref, ref, y, casc)
            b.rail_mos(kind, y, x)
        b.mos(kind, iout[0], ref, x, casc)
        b.rail_mos(kind, x, x)
        cascoded = _coin(rng)
        for o in iout[1:]:
            if cascoded:
                c = b.net()
                b.mos(kind, o, ref, c, casc)
                b.rail_mos(kind, c, x)
            else:
                b.rail_mos(kind, o, x)
        gate = x
    if _coin(rng, 0.3):
        b.cap(gate, rail)
    b.bypass()


def _opamp(b: _Netlist) -> None:
    rng = b.rng
    kind = _pick(rng, ["nmos", "pmos"], p=[0.6, 0.4])
    arch = _pick(rng, _ARCHS, p=[0.2, 0.15, 0.15, 0.15, 0.35])
    _amp(b, "VIN1", "VIN2", "VOUT", arch, kind)
    if _coin(rng, 0.4):
        b.cap("VOUT", "VSS")
    b.bypass()


def _ldo(b: _Netlist) -> None:
    """Error amplifier (feedback on its non-inverting input: a higher output raises the pass gate) -> optional
    PMOS source follower -> PMOS pass device -> resistive divider, output capacitor."""
    rng = b.rng
    kind = _pick(rng, ["nmos", "pmos"], p=[0.6, 0.4])
    arch = _pick(rng, _ARCHS, p=[0.35, 0.15, 0.1, 0.15, 0.25])
    fb, ea = b.net(), b.net()
    _amp(b, fb, "VREF1", ea, arch, kind)
    gate = ea
    if _coin(rng, 0.3):  # a buffer driving the large pass gate
        gate = b.net()
        b.mos("pmos", "VSS", ea, gate, b.body("follower"))
        b.current_source("pmos", gate)
    b.mos("pmos", "VOUT", gate, "VDD")
    taps = int(_pick(rng, [2, 3]))
    at = int(rng.integers(1, taps))
    nodes = ["VOUT", *[fb if i == at else b.net() for i in range(1, taps)], "VSS"]
    for i in range(taps):
        b.res(nodes[i], nodes[i + 1])
    if _coin(rng, 0.35):  # output capacitor with its ESR
        esr = b.net()
        b.res("VOUT", esr)
        b.cap(esr, "VSS")
    else:
        b.cap("VOUT", "VSS")
    if _coin(rng, 0.35):
        b.cap("VOUT", fb)  # feed-forward
    if _coin(rng, 0.3):
        b.cap(gate, "VOUT")  # Miller (pole splitting across the pass device)
    b.bypass()


def _bandgap(b: _Netlist) -> None:
    rng = b.rng
    junction = _pick(rng, ["pnp", "npn", "diode"], p=[0.6, 0.2, 0.2])

    def jn(node: str) -> None:
        if junction == "pnp":  # substrate PNP: collector and base on ground
            b.bjt("pnp", "VSS", "VSS", node)
        elif junction == "npn":
            b.bjt("npn", node, node, "VSS")
        else:
            b.diode(node, "VSS")

    e1, e2, x = b.net(), b.net(), b.net()
    jn(e1)
    for _ in range(int(_pick(rng, [1, 2, 3], p=[0.5, 0.3, 0.2]))):
        jn(e2)
    b.res(x, e2)
    loop = _pick(rng, ["opamp", "self"], p=[0.6, 0.4])
    banba = False
    if loop == "opamp":  # the amplifier equalises e1 and x and drives the PMOS gates
        g = b.net()
        t1, t2 = e1, x
        arch = _pick(rng, ["ota5", "ota5_cascode", "miller"], p=[0.5, 0.25, 0.25])
        _amp(b, x, e1, g, arch, _pick(rng, ["nmos", "pmos"]), first="ota5")
        banba = _coin(rng, 0.3)
        if banba:
            b.res(e1, "VSS")
            b.res(x, "VSS")
    else:  # self-biased: an NMOS pair with equal gates forces e1 = x (beta multiplier)
        t1, t2 = b.net(), b.net()
        g = t2
        b.mos("nmos", t1, t1, e1, b.body("pair"))
        b.mos("nmos", t2, t1, x, b.body("pair"))
    out = "VREF1"
    cascode = _coin(rng, 0.3)
    vbc = b.bias("pmos", 2) if cascode else None
    for drain in (t1, t2, out):
        if cascode:
            h = b.net()
            b.mos("pmos", h, g, "VDD")
            b.mos("pmos", drain, vbc, h, b.body("cascode"))
        else:
            b.mos("pmos", drain, g, "VDD")
    if banba:
        b.res(out, "VSS")
    else:
        e3 = b.net()
        b.res(out, e3)
        jn(e3)
    if loop == "self" and _coin(rng, 0.7) or loop == "opamp" and _coin(rng, 0.25):
        s = b.net()  # start-up: a weak pull-up on s, released by the running core, pulls the PMOS gates down
        if _coin(rng):
            b.mos("pmos", s, "VSS", "VDD")
        else:
            b.res("VDD", s)
        b.mos("nmos", s, t1 if loop == "self" else out, "VSS")
        b.mos("nmos", g, s, "VSS")
    if _coin(rng, 0.4):
        b.cap(out, "VSS")
    if _coin(rng, 0.25):
        b.cap(g, "VDD")
    b.bypass()


def _inverter(b: _Netlist, a: str, y: str) -> None:
    b.mos("nmos", y, a, "VSS")
    b.mos("pmos", y, a, "VDD")


def _gate2(b: _Netlist, a: str, c: str, y: str, nand: bool) -> None:
    """A static CMOS NAND (or NOR) of ``a`` and ``c``."""
    m = b.net()
    series, parallel = ("nmos", "pmos") if nand else ("pmos", "nmos")
    b.mos(parallel, y, a, _RAIL[parallel])
    b.mos(parallel, y, c, _RAIL[parallel])
    b.mos(series, y, a, m, b.body("stack"))
    b.mos(series, m, c, _RAIL[series])


def _outputs(b: _Netlist, o1: str, o2: str, style: str, nand: bool) -> None:
    if style == "inverters":
        _inverter(b, o1, "VOUT1")
        if _coin(b.rng, 0.7):  # else the other side stays an internal node
            _inverter(b, o2, "VOUT2")
    elif style == "sr":  # set-reset latch holding the decision
        _gate2(b, o1, "VOUT2", "VOUT1", nand)
        _gate2(b, o2, "VOUT1", "VOUT2", nand)


def _comparator(b: _Netlist) -> None:
    rng = b.rng
    style = _pick(rng, ["preamp_latch", "strongarm", "hysteresis"], p=[0.4, 0.4, 0.2])
    kind = _pick(rng, ["nmos", "pmos"], p=[0.7, 0.3])
    other = _FLIP[kind]
    rail, orail = _RAIL[kind], _RAIL[other]
    if style == "hysteresis":  # Allen-Holberg: diode loads with cross-coupled positive feedback, output stage
        a, c, tail = b.net(), b.net(), b.net()
        b.current_source(kind, tail)
        _input_pair(b, kind, "VIN1", "VIN2", a, c, tail)
        b.mos(other, a, a, orail)
        b.mos(other, c, c, orail)
        b.mos(other, a, c, orail)
        b.mos(other, c, a, orail)
        if _coin(rng):  # differential to single-ended: a mirror under two followers of the diode loads
            m = b.net()
            b.mos(other, m, a, orail)
            b.mos(other, "VOUT1", c, orail)
            b.mos(kind, m, m, rail)
            b.mos(kind, "VOUT1", m, rail)
        else:
            b.mos(other, "VOUT1", c, orail)
            b.current_source(kind, "VOUT1")
        if _coin(rng, 0.3):
            _inverter(b, "VOUT1", "VOUT2")
        return
    out_style = _pick(rng, ["direct", "inverters", "sr"], p=[0.35, 0.4, 0.25])
    o1, o2 = ("VOUT1", "VOUT2") if out_style == "direct" else (b.net(), b.net())
    if style == "strongarm":  # clocked tail, input pair, cross-coupled inverters, reset switches
        tail, p, q = b.net(), b.net(), b.net()
        b.mos(kind, tail, "VCONT1", rail)
        _input_pair(b, kind, "VIN1", "VIN2", p, q, tail)
        b.mos(kind, o1, o2, p, b.body("latch"))
        b.mos(kind, o2, o1, q, b.body("latch"))
        b.mos(other, o1, o2, orail)
        b.mos(other, o2, o1, orail)
        nodes = [o1, o2] + ([p, q] if _coin(rng, 0.5) else [])
        for node in nodes:
            b.mos(other, node, "VCONT1", orail)
    else:  # preamplifier, then a clocked latch
        a, c, tail = b.net(), b.net(), b.net()
        b.current_source(kind, tail)
        _input_pair(b, kind, "VIN1", "VIN2", a, c, tail)
        load = _pick(rng, ["resistor", "diode", "diode_cross"])
        for node, cross in ((a, c), (c, a)):
            if load == "resistor":
                b.res(node, orail)
            else:
                b.mos(other, node, node, orail)
                if load == "diode_cross":
                    b.mos(other, node, cross, orail)
        lt = b.net()
        b.mos("nmos", lt, "VCONT1", "VSS")
        b.mos("nmos", o1, o2, lt, b.body("latch"))
        b.mos("nmos", o2, o1, lt, b.body("latch"))
        if _coin(rng):
            b.mos("pmos", o1, o2, "VDD")
            b.mos("pmos", o2, o1, "VDD")
        else:  # an NMOS-only latch, precharged by PMOS reset switches
            b.mos("pmos", o1, "VCONT1", "VDD")
            b.mos("pmos", o2, "VCONT1", "VDD")
        if _coin(rng):  # tracking switches from the preamplifier
            b.mos("nmos", o1, "VCONT2", a, b.body("switch"))
            b.mos("nmos", o2, "VCONT2", c, b.body("switch"))
        else:  # or a latch input pair driven by it
            b.mos("nmos", o1, a, lt, b.body("latch"))
            b.mos("nmos", o2, c, lt, b.body("latch"))
    _outputs(b, o1, o2, out_style, nand=style != "strongarm" or kind == "nmos")
    if _coin(rng, 0.2):
        b.cap("VOUT1", "VSS")
    b.bypass()


def _ring(b: _Netlist) -> None:
    rng = b.rng
    stages = int(_pick(rng, [3, 5, 7], p=[0.45, 0.35, 0.2]))
    stage = _pick(rng, ["cmos", "starved", "nstarved", "resistive"], p=[0.35, 0.25, 0.2, 0.2])
    tap = _pick(rng, ["direct", "buffer"])
    nodes = [b.net() for _ in range(stages)]
    if tap == "direct":
        nodes[0] = "VOUT"
    vp = None
    if stage == "starved":  # the PMOS starving gate: a second control port or a mirror from VCONT1
        if _coin(rng):
            vp = "VCONT2"
        else:
            vp = b.net()
            b.mos("nmos", vp, "VCONT1", "VSS")
            b.mos("pmos", vp, vp, "VDD")
    enable = stage == "cmos" and _coin(rng, 0.3)
    body = b.body("inverter")
    for i in range(stages):
        a, y = nodes[i], nodes[(i + 1) % stages]
        if enable and i == 0:
            _gate2(b, a, "VCONT1", y, nand=True)
            continue
        sn = "VSS"
        if stage in ("starved", "nstarved"):
            sn = b.net()
            b.mos("nmos", sn, "VCONT1", "VSS")
        b.mos("nmos", y, a, sn, body)
        if stage == "resistive":
            b.res("VDD", y)
            continue
        sp = "VDD"
        if stage == "starved":
            sp = b.net()
            b.mos("pmos", sp, vp, "VDD")
        b.mos("pmos", y, a, sp, body)
    if tap == "buffer":
        _inverter(b, nodes[0], "VOUT")
    loads = _pick(rng, ["none", "all", "out"], p=[0.5, 0.25, 0.25])
    for node in nodes if loads == "all" else nodes[:1] if loads == "out" else []:
        b.cap(node, "VSS")


def _lc(b: _Netlist) -> None:
    rng = b.rng
    topo = _pick(rng, ["nmos", "pmos", "cmos"], p=[0.45, 0.2, 0.35])
    outs = _pick(rng, ["direct", "follower", "coupled"], p=[0.5, 0.25, 0.25])
    a, c = ("VOUT1", "VOUT2") if outs == "direct" else (b.net(), b.net())
    tails = []
    for kind in ("nmos", "pmos") if topo == "cmos" else (topo,):
        tail = _pick(rng, ["source", "resistor", "rail"], p=[0.55, 0.2, 0.25])
        s = _RAIL[kind]
        if tail != "rail":
            s = b.net()
            tails.append((s, kind))
            if tail == "source":
                b.current_source(kind, s)
            else:
                b.res(s, _RAIL[kind])
        b.mos(kind, a, c, s, b.body(f"pair{kind}"))
        b.mos(kind, c, a, s, b.body(f"pair{kind}"))
    if topo == "cmos":
        b.ind(a, c)
    else:  # inductors to the rail opposite the pair
        b.ind(_RAIL[_FLIP[topo]], a)
        b.ind(_RAIL[_FLIP[topo]], c)
    tank = _pick(rng, ["cap", "caps", "mosvar", "diodevar", "cap+mosvar", "cap+diodevar"])
    if "caps" in tank:
        b.cap(a, "VSS")
        b.cap(c, "VSS")
    elif "cap" in tank:
        b.cap(a, c)
    for node in (a, c):
        if "mosvar" in tank:  # accumulation varactor: gate on the tank, drain, source and bulk on the control
            b.mos("nmos", "VCONT1", node, "VCONT1", "VCONT1")
        elif "diodevar" in tank:
            b.diode("VCONT1", node)
    if tails and _coin(rng, 0.3):
        s, kind = tails[0]
        b.cap(s, _RAIL[kind])  # tail noise filter
    if outs == "follower":
        for node, o in ((a, "VOUT1"), (c, "VOUT2")):
            b.mos("nmos", "VDD", node, o, b.body("follower"))
            b.current_source("nmos", o)
    elif outs == "coupled":
        b.cap(a, "VOUT1")
        b.cap(c, "VOUT2")
    b.bypass()


def _oscillator(b: _Netlist) -> None:
    (_ring if _coin(b.rng, 0.55) else _lc)(b)


def _mixer(b: _Netlist) -> None:
    """A Gilbert cell: RF transconductor(s) under one (single-balanced) or two (double-balanced) LO switching pairs,
    loads at VIF1/VIF2."""
    rng = b.rng
    bjt = _coin(rng, 0.3)

    def dev(c: str, g: str, e: str, group: str) -> None:
        if bjt:
            b.bjt("npn", c, g, e)
        else:
            b.mos("nmos", c, g, e, b.body(group))

    def degenerate(node: str, how: str) -> str:
        if how == "none":
            return node
        s = b.net()
        (b.res if how == "R" else b.ind)(s, node)
        return s

    double = _coin(rng, 0.6)
    s1, s2 = b.net(), b.net() if double else None
    if double:
        rf = _pick(rng, ["tail", "pseudo"])
        how = _pick(rng, ["none", "R", "L"], p=[0.4, 0.3, 0.3])
        if rf == "tail":
            tail = b.net()
            if bjt:
                b.bjt("npn", tail, b.port("VB"), "VSS")
            else:
                b.current_source("nmos", tail)
            ends = (tail, tail)
        else:
            ends = ("VSS", "VSS")
        dev(s1, "VRF1", degenerate(ends[0], how), "rf")
        dev(s2, "VRF2", degenerate(ends[1], how), "rf")
    else:
        how = _pick(rng, ["none", "R", "L"], p=[0.4, 0.3, 0.3])
        dev(s1, "VRF1", degenerate("VSS", how), "rf")
    dev("VIF1", "VLO1", s1, "switch")
    dev("VIF2", "VLO2", s1, "switch")
    if double:
        dev("VIF1", "VLO2", s2, "switch")
        dev("VIF2", "VLO1", s2, "switch")
    load = "resistor" if bjt else _pick(rng, ["resistor", "pmos", "cmfb"], p=[0.45, 0.3, 0.25])
    if load == "resistor":
        b.res("VDD", "VIF1")
        b.res("VDD", "VIF2")
    elif load == "pmos":
        vb = b.bias("pmos", 1)
        b.mos("pmos", "VIF1", vb, "VDD")
        b.mos("pmos", "VIF2", vb, "VDD")
    else:  # PMOS loads whose gates sit at the outputs' common mode
        cm = b.net()
        b.res("VIF1", cm)
        b.res("VIF2", cm)
        b.mos("pmos", "VIF1", cm, "VDD")
        b.mos("pmos", "VIF2", cm, "VDD")
    if not bjt and _coin(rng, 0.3):  # current bleeding into the switching pairs' sources
        for s in (s1, s2) if double else (s1,):
            b.current_source("pmos", s)
    if_cap = _pick(rng, ["none", "diff", "rail"], p=[0.5, 0.3, 0.2])
    if if_cap == "diff":
        b.cap("VIF1", "VIF2")
    elif if_cap == "rail":
        b.cap("VIF1", "VDD")
        b.cap("VIF2", "VDD")
    b.bypass()


def _family(build: Callable[[_Netlist], None]) -> Callable[[np.random.Generator], str]:
    """A family's draw: build until the circuit fits the limits (a deterministic redraw from the same ``rng``)."""

    def draw(rng: np.random.Generator) -> str:
        for _ in range(1000):
            b = _Netlist(rng)
            build(b)
            if b.fits():
                return b.text()
        raise RuntimeError(f"{build.__name__}: no draw within the size limits")

    draw.__name__ = build.__name__
    draw.__doc__ = build.__doc__
    return draw


FAMILIES: dict[str, Callable[[np.random.Generator], str]] = {
    "LDO": _family(_ldo),
    "Comparator": _family(_comparator),
    "Mixer": _family(_mixer),
    "Opamp": _family(_opamp),
    "Bandgap_Ref": _family(_bandgap),
    "Oscillator": _family(_oscillator),
    "Mirror": _family(_mirror),
}


def port_class(net: str) -> str:
    """A port's name without its index (``VIN2`` -> ``VIN``, ``VOUT`` -> ``VOUT``); rails unchanged."""
    return net.rstrip("0123456789")


def graph_of(circuit: Circuit, canonical_ports: bool = False):
    """The labelled bipartite graph of a circuit (networkx), the object novelty and deduplication compare. Ports are
    labelled by name (the reference's novelty) or, with ``canonical_ports``, by class (:func:`port_class`), so that
    swapping ``VIN1`` and ``VIN2`` gives the same graph."""
    import networkx as nx

    g = nx.Graph()
    for device, net, label in circuit.edges():
        g.add_node(device, label=device.rstrip("0123456789"))
        g.add_node(net, label=(port_class(net) if canonical_ports else net) if is_port(net) else "NET")
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
    n_circuits: int,
    weights: dict[str, float],
    seed: int,
    max_draws: int | None = None,
    max_devices: int | None = None,
) -> list[tuple[str, str, Circuit]]:
    """Up to ``n_circuits`` distinct circuits as (type, netlist text, parsed circuit): families drawn by ``weights``,
    each draw parsed strictly; a draw isomorphic to a kept circuit, or (``max_devices``) one with more devices, is
    dropped. Stops after ``max_draws`` draws (default 20 x n_circuits). Same seed, same circuits in the same order."""
    unknown = sorted(set(weights) - set(FAMILIES))
    if unknown:
        raise ValueError(f"unknown circuit families {unknown}; built: {sorted(FAMILIES)}")
    if n_circuits < 1 or not weights or min(weights.values()) <= 0:
        raise ValueError("need n_circuits >= 1 and positive weights")
    if max_devices is not None and max_devices < 2:
        raise ValueError(f"max_devices must be >= 2, got {max_devices}")
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
        if max_devices is not None and len(circuit.devices) > max_devices:
            continue
        g = graph_of(circuit)
        bucket = buckets.setdefault(graph_hash(g), [])
        if any(isomorphic(g, other) for other in bucket):
            continue
        bucket.append(g)
        kept.append((family, text, circuit))
    return kept
