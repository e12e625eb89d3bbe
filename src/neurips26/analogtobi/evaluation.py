r"""Per-sample metrics of generated walks (AnalogToBi, Kim et al. 2026, arXiv 2603.08720, Sec. 4.1; reference
``METRIC_Valid_n_Novel.py``, ``METRIC_N_Gram.py``), one row per sample:

* ``terminated``: the walk ended with ``TRUNCATE`` within the length limit; ``erc``: the first failing ERC level
  (0 valid; levels 1-4 of :func:`.erc.erc_level` for bipartite walks, of :func:`.devpin.erc_level` for
  device-pin walks; level 5, a decoded circuit a designer would refuse, :func:`.erc.design_fault`, for both);
  ``valid``: terminated and ERC level 0 (the paper's validity; a truncated walk is invalid);
* ``novel``: valid and isomorphic to no training circuit (:class:`.metrics.NoveltyIndex`), ports verbatim as the
  reference; ``novel_canonical``: the same with ports by class (``VIN1`` and ``VIN2`` alike);
* ``memorised``: terminated and sharing its first and last ``n`` tokens with one training walk of its
  configuration (the paper's 10-gram test, :func:`.metrics.memorised`); ``memorised_topology``: the same with
  device indices dropped on both sides (index-free, so that renaming alone cannot lower it);
* ``predicted``: the type the classifier gives a valid circuit (``type_ok``: equal to the requested type);
  ``predicted_canonical`` / ``type_ok_canonical``: a classifier that reads ports by class;
* ``spice``: ``converged`` / ``failed`` / ``unavailable`` for the valid circuits among the first
  ``spice_per_type`` samples of each decoding and requested type (``not_simulated`` for the rest; ``invalid`` for
  an invalid circuit among them, which cannot be simulated and counts as not electrically valid);
* the realism features (:func:`features`): device counts per family, edge counts per edge type and the histogram of
  internal-net degrees, compared with the held-out circuits' by MMD in the tables.
"""

from __future__ import annotations

import time

import numpy as np

from . import devpin, erc, serialize, spice
from .metrics import NoveltyIndex, walk_ends, without_indices
from .netlist import Circuit
from .tokens import DEVICE_CAPS, EDGES

__all__ = ["FEATURES", "decode_checked", "evaluate_samples", "features"]

_DEGREES = 6  # internal-net degree bins 2, 3, ..., 6, >= 7
FEATURES = [
    *(f"n_{f}" for f in DEVICE_CAPS),
    *(f"e_{e}" for e in EDGES),
    *(f"deg_{d}" for d in range(2, 2 + _DEGREES - 1)),
    f"deg_{2 + _DEGREES - 1}plus",
]


def features(circuit: Circuit) -> np.ndarray:
    """The realism features of a circuit (module docstring), as counts."""
    out = dict.fromkeys(FEATURES, 0.0)
    degree: dict[str, int] = {}
    for d in circuit.devices:
        out[f"n_{d.family}"] += 1
    for _, net, label in circuit.edges():
        out[f"e_{label}"] = out.get(f"e_{label}", 0.0) + 1
        if net.startswith("NET"):
            degree[net] = degree.get(net, 0) + 1
    for k in degree.values():
        k = min(max(k, 2), 2 + _DEGREES - 1)
        out[f"deg_{k}plus" if k == 2 + _DEGREES - 1 else f"deg_{k}"] += 1
    return np.array([out[f] for f in FEATURES])


def decode_checked(tokens: list[str], rep: str, source: str = "<walk>") -> tuple[int, Circuit | None]:
    """(ERC level, circuit) of a walk of either representation: levels 1-4 of the representation's own check, then
    level 5 (:func:`.erc.design_fault`) on the decoded circuit, one rule for both; the circuit only when valid."""
    if rep == "bipart":
        level = erc.erc_level(tokens)
        circuit = serialize.circuit_of(tokens, source) if level == 0 else None
    else:
        level = devpin.erc_level(tokens)
        circuit = devpin.decode(tokens, source=source) if level == 0 else None
    if circuit is not None and erc.design_fault(circuit):
        return erc.DESIGN_LEVEL, None
    return level, circuit


def evaluate_samples(
    samples: list[dict],
    rep: str,
    novelty: NoveltyIndex,
    training: list[list[str]],
    classify,
    *,
    ngram: int,
    spice_per_type: int,
    spice_timeout_s: float,
    novelty_canonical: NoveltyIndex | None = None,
    classify_canonical=None,
    log=None,
) -> tuple[list[dict], dict]:
    """Rows of the module docstring for ``samples`` (dicts with ``decoding``, ``type``, ``tokens`` (list),
    ``terminated``), and the simulation timing ``{"simulations", "seconds"}``. ``classify(circuits) -> types``;
    ``novelty_canonical`` and ``classify_canonical`` read ports by class (``*_canonical`` columns, NaN-free: False
    and "" when not given)."""
    ends = {walk_ends(w, ngram) for w in training}  # memorised() as one set look-up per sample
    topology_ends = {walk_ends(without_indices(w), ngram) for w in training}
    rows, circuits = [], []
    simulated_per_decoding: dict[str, int] = {}
    sim_seconds, sims = 0.0, 0
    for i, s in enumerate(samples):
        tokens = list(s["tokens"])
        level, circuit = decode_checked(tokens, rep, f"sample {i}")
        valid = bool(s["terminated"]) and level == 0
        row = {
            "erc": level,
            "valid": valid,
            "novel": bool(valid and novelty.novel(circuit)),
            "novel_canonical": bool(valid and novelty_canonical is not None and novelty_canonical.novel(circuit)),
            "memorised": bool(s["terminated"]) and walk_ends(tokens, ngram) in ends,
            "memorised_topology": bool(s["terminated"]) and walk_ends(without_indices(tokens), ngram) in topology_ends,
            "n_devices": len(circuit.devices) if valid else 0,
            "spice": "not_simulated",
            "spice_reason": "",
        }
        order = simulated_per_decoding.get((s["decoding"], s["type"]), 0)
        if order < spice_per_type:
            simulated_per_decoding[(s["decoding"], s["type"])] = order + 1
            if valid:
                began = time.perf_counter()
                result = spice.simulate(circuit, timeout_s=spice_timeout_s)
                sim_seconds += time.perf_counter() - began
                sims += result.status != "unavailable"
                row["spice"], row["spice_reason"] = result.status, result.reason
            else:
                row["spice"] = "invalid"
        rows.append(row)
        circuits.append(circuit if valid else None)
        if log and (i + 1) % 200 == 0:
            log(f"evaluated {i + 1}/{len(samples)} samples")
    valid_circuits = [c for c in circuits if c is not None]
    predicted = iter(classify(valid_circuits) if valid_circuits else [])
    canonical = iter(classify_canonical(valid_circuits) if valid_circuits and classify_canonical else [])
    for s, row, circuit in zip(samples, rows, circuits):
        row["predicted"] = next(predicted) if circuit is not None else ""
        row["type_ok"] = bool(circuit is not None and row["predicted"] == s["type"])
        row["predicted_canonical"] = next(canonical, "") if circuit is not None else ""
        row["type_ok_canonical"] = bool(circuit is not None and row["predicted_canonical"] == s["type"])
        feats = features(circuit) if circuit is not None else np.full(len(FEATURES), np.nan)
        row.update({f"f_{name}": float(v) for name, v in zip(FEATURES, feats)})
    return rows, {"simulations": sims, "seconds": sim_seconds}
