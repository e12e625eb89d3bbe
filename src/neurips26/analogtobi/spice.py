r"""Electrical validity by simulation: a generated circuit, given generic 180 nm-class device models and a bias, must
reach a DC operating point in ngspice (the paper converts generated graphs to SPICE netlists, Sec. 4.1 and 4.4; the
reference's ``GRAPH2SPICE.py`` biases with level-1 models). Ours:

* rails ``VSS`` = 0 V and ``VDD`` = 1.8 V; input-like ports (VIN, VCM, VREF, VRF, VLO, VIF, VBB) at 0.9 V; ``VB``
  ports by the polarity of the gates they drive (NMOS 0.65 V, PMOS 1.15 V, else 0.9 V); ``VCONT`` at 1.8 V; current
  ports (IB, IIN, IREF) 10 uA into the node; ``IOUT`` ports 10 kOhm to ``VSS``; ``VOUT`` ports open;
* level-1 MOS (NMOS VTO 0.45 V, KP 200 uA/V^2; PMOS VTO -0.45 V, KP 80 uA/V^2; lambda 0.1, gamma 0.4), W/L
  1.8 um / 0.18 um (PMOS 3.6 um); BJTs IS 1e-16 A (NPN beta 100, PNP 50); diodes IS 1e-15 A; R 10 kOhm, C 1 pF,
  L 10 nH;
* ``.op``, run as ``ngspice -b`` with a timeout. ``converged`` iff ngspice exits 0, prints node voltages, reports
  no convergence failure, and every node voltage lies within 10 V; ``failed`` keeps the reason; ``unavailable`` when
  ngspice is not installed (a claim then has no evidence and stays inconclusive; the row never counts as a failure).
"""

from __future__ import annotations

import re
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

from .netlist import Circuit

__all__ = ["FAILURES", "SpiceResult", "deck", "simulate"]

MODELS = """.model nmos_g NMOS (LEVEL=1 VTO=0.45 KP=200u GAMMA=0.4 PHI=0.8 LAMBDA=0.1)
.model pmos_g PMOS (LEVEL=1 VTO=-0.45 KP=80u GAMMA=0.4 PHI=0.8 LAMBDA=0.1)
.model npn_g NPN (IS=1e-16 BF=100 VAF=50)
.model pnp_g PNP (IS=1e-16 BF=50 VAF=30)
.model dio_g D (IS=1e-15)"""
FAILURES = ("singular matrix", "no convergence", "timestep too small", "gmin stepping failed", "source stepping failed")
_VOLTAGE_PORTS = ("VIN", "VCM", "VREF", "VRF", "VLO", "VIF", "VBB")
_CURRENT_PORTS = ("IB", "IIN", "IREF")


def _node(net: str) -> str:
    return "0" if net == "VSS" else net.lower()


def deck(circuit: Circuit, vdd: float = 1.8) -> str:
    """The ngspice deck of a circuit (module docstring)."""
    lines = [f"* {circuit.source}", MODELS, f"VDD vdd 0 {vdd}"]
    gate_of: dict[str, set[str]] = {}
    for d in circuit.devices:
        n = [_node(x) for x in d.nets]
        if d.family in ("NM", "PM"):
            model, width = ("nmos_g", "1.8u") if d.family == "NM" else ("pmos_g", "3.6u")
            lines.append(f"M{d.name} {n[0]} {n[1]} {n[2]} {n[3]} {model} W={width} L=0.18u")
            gate_of.setdefault(d.nets[1], set()).add(d.family)
        elif d.family in ("NPN", "PNP"):
            lines.append(f"Q{d.name} {n[0]} {n[1]} {n[2]} {'npn_g' if d.family == 'NPN' else 'pnp_g'}")
        elif d.family == "DIO":
            lines.append(f"D{d.name} {n[0]} {n[1]} dio_g")
        else:
            value = {"R": "10k", "C": "1p", "L": "10n"}[d.family]
            lines.append(f"{d.family}{d.name} {n[0]} {n[1]} {value}")
    for net in circuit.nets:
        node = _node(net)
        if net.startswith("VB") and not net.startswith("VBB"):
            polarity = gate_of.get(net, set())
            level = 0.65 if polarity == {"NM"} else 1.15 if polarity == {"PM"} else 0.9
            lines.append(f"V{node} {node} 0 {level}")
        elif net.startswith(_VOLTAGE_PORTS):
            lines.append(f"V{node} {node} 0 {vdd / 2}")
        elif net.startswith("VCONT"):
            lines.append(f"V{node} {node} 0 {vdd}")
        elif net.startswith(_CURRENT_PORTS):
            lines.append(f"I{node} 0 {node} 10u")  # 10 uA from ground into the node
        elif net.startswith("IOUT"):
            lines.append(f"R{node} {node} 0 10k")
    lines += [".op", ".end"]
    return "\n".join(lines) + "\n"


def node_voltages(text: str) -> list[float]:
    """The node voltages of ngspice's batch ``.op`` printout (the table under ``Node  Voltage``, up to the source
    currents)."""
    match = re.search(r"^\s*node\s+voltage\s*$(.*?)^\s*source\s+current", text.lower(), re.M | re.S)
    if not match:
        return []
    return [float(v) for v in re.findall(r"^\s*\S+\s+([-+]?[0-9.]+(?:e[-+]?\d+)?)\s*$", match.group(1), re.M)]


@dataclass(frozen=True)
class SpiceResult:
    status: str  # converged, failed, unavailable
    reason: str = ""


def simulate(circuit: Circuit, timeout_s: float = 5.0, binary: str = "ngspice") -> SpiceResult:
    """Run the circuit's deck through ngspice in batch mode (module docstring)."""
    executable = shutil.which(binary)
    if executable is None:
        return SpiceResult("unavailable", f"{binary} is not installed")
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "deck.cir"
        path.write_text(deck(circuit))
        try:
            run = subprocess.run(
                [executable, "-b", str(path)], capture_output=True, text=True, timeout=timeout_s, cwd=tmp
            )
        except subprocess.TimeoutExpired:
            return SpiceResult("failed", f"timeout after {timeout_s} s")
    text = (run.stdout + run.stderr).lower()
    failure = next((f for f in FAILURES if f in text), None)
    if failure:
        return SpiceResult("failed", failure)
    if run.returncode != 0:
        return SpiceResult("failed", f"ngspice exit {run.returncode}")
    voltages = node_voltages(text)
    if not voltages:
        return SpiceResult("failed", "no operating point printed")
    if max(abs(v) for v in voltages) > 10:
        return SpiceResult("failed", f"node voltage {max(voltages, key=abs):.3g} V beyond 10 V")
    return SpiceResult("converged")
