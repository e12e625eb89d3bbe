"""The bipartite token vocabulary of AnalogToBi (Kim et al. 2026, arXiv 2603.08720; ``GPT_Pretrain.py``): edge types,
rails, circuit-type tokens, device tokens per family up to a cap, internal nets, ports, and ``TRUNCATE`` (end and
padding). Token kinds drive the grammar: :func:`kind_of` says whether a token is a net, an edge, a device, a type or
the end."""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass

__all__ = ["CIRCUIT_TYPES", "EDGES", "END", "Vocabulary", "edge_family", "edge_pins", "kind_of", "split_device"]

END = "TRUNCATE"
CIRCUIT_TYPES = (
    "Opamp", "LDO", "Bandgap_Ref", "Power_converter", "Oscillator", "General", "Mirror", "Mixer", "Power_Amp", "PLL",
    "Filter", "Comparator", "Voltage_Regulator", "Switched_Cap", "ADC_DAC",
)  # fmt: skip
_MOS = ("B", "D", "G", "S", "BD", "BG", "BS", "DG", "DS", "GS", "BDG", "BDS", "BGS", "DGS", "BDGS")
_BJT = ("B", "C", "E", "BC", "BE", "CE", "BCE")
EDGES = (
    *(f"M_{p}" for p in _MOS),
    *(f"B_{p}" for p in _BJT),
    "R_C",
    "C_C",
    "L_C",
    "D_P",
    "D_N",
    "D_NP",
)
# device-family caps of the reference's vocabulary
DEVICE_CAPS = {"NM": 35, "PM": 35, "NPN": 27, "PNP": 27, "R": 28, "C": 16, "L": 24, "DIO": 8}
PORT_CAPS = {"VIN": 20, "VOUT": 7, "IIN": 3, "IOUT": 5, "VB": 11, "IB": 7, "VCONT": 21, "VCM": 3, "VREF": 3,
             "IREF": 3, "VRF": 3, "VIF": 3, "VLO": 5, "VBB": 5}  # fmt: skip
INTERNAL_NETS = 50
_DEVICE = re.compile(r"^(NM|PM|NPN|PNP|R|C|L|DIO)(\d+)$")


@functools.cache
def split_device(token: str) -> tuple[str, int] | None:
    """(family, index) of a device token, or None."""
    match = _DEVICE.match(token)
    return (match.group(1), int(match.group(2))) if match else None


@functools.cache
def edge_family(edge: str) -> tuple[str, ...]:
    """The device families an edge type belongs to."""
    prefix = edge.split("_")[0]
    return {"M": ("NM", "PM"), "B": ("NPN", "PNP"), "D": ("DIO",), "R": ("R",), "C": ("C",), "L": ("L",)}[prefix]


@functools.cache
def edge_pins(edge: str) -> str:
    """The pin letters an edge binds (passives: one anonymous ``C`` pin per edge)."""
    return edge.split("_")[1]


@functools.cache
def kind_of(token: str) -> str:
    """``end``, ``type``, ``edge``, ``device`` or ``net``."""
    if token == END:
        return "end"
    if token.startswith("CIRCUIT_"):
        return "type"
    if token in EDGES:
        return "edge"
    if split_device(token):
        return "device"
    return "net"


@dataclass(frozen=True)
class Vocabulary:
    tokens: tuple[str, ...]

    @classmethod
    @functools.cache
    def bipartite(cls) -> Vocabulary:
        devices = [f"{f}{i}" for f, cap in DEVICE_CAPS.items() for i in range(1, cap + 1)]
        ports = ["VOUT"] + [f"{p}{i}" for p, cap in PORT_CAPS.items() for i in range(1, cap + 1)]
        nets = [f"NET{i}" for i in range(1, INTERNAL_NETS + 1)]
        types = [f"CIRCUIT_{t}" for t in CIRCUIT_TYPES]
        return cls((*EDGES, "VSS", "VDD", *types, *devices, *nets, *ports, END))

    @functools.cached_property
    def nets(self) -> list[str]:
        return [t for t in self.tokens if kind_of(t) == "net"]

    @functools.cached_property
    def _set(self) -> frozenset[str]:
        return frozenset(self.tokens)

    def index(self, token: str) -> int:
        try:
            return self.tokens.index(token)
        except ValueError:
            raise KeyError(f"token {token!r} is not in the vocabulary") from None

    def __len__(self) -> int:
        return len(self.tokens)

    def __contains__(self, token: str) -> bool:
        return token in self._set
