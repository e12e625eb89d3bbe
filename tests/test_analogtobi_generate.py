"""The seeded netlist generator (AnalogToBi's quick-scale stand-in for the AnalogGenie dataset): determinism, distinct
topologies, strict parsing and walks, size and vocabulary limits, every family, argument errors."""

from __future__ import annotations

import re
import time
from collections import Counter
from itertools import combinations

import numpy as np
import pytest

from neurips26.analogtobi.erc import erc_level
from neurips26.analogtobi.generate import (
    FAMILIES,
    MAX_DEVICES,
    MAX_INTERNAL_NETS,
    generate,
    graph_hash,
    graph_of,
    isomorphic,
)
from neurips26.analogtobi.netlist import parse
from neurips26.analogtobi.serialize import walk_tokens
from neurips26.analogtobi.tokens import DEVICE_CAPS, PORT_CAPS, Vocabulary, split_device

# the quick scale's skewed type weights
WEIGHTS = {"Opamp": 0.30, "LDO": 0.18, "Bandgap_Ref": 0.14, "Mirror": 0.12, "Comparator": 0.10, "Oscillator": 0.09,
           "Mixer": 0.07}  # fmt: skip
_PORT = re.compile(r"^([A-Z]+?)(\d+)$")


@pytest.fixture(scope="module")
def quick():
    start = time.perf_counter()
    circuits = generate(900, WEIGHTS, seed=0)
    return circuits, time.perf_counter() - start


def test_quick_scale_gives_900_distinct_circuits_with_every_family_represented(quick):
    circuits, seconds = quick
    assert len(circuits) == 900
    assert seconds < 30  # about 1 s on one core; a loose bound against a pathological slowdown
    counts = Counter(family for family, _, _ in circuits)
    assert set(counts) == set(WEIGHTS)
    assert min(counts.values()) >= 30, counts
    assert counts["Opamp"] == max(counts.values())  # the skew survives deduplication
    # kept circuits are pairwise non-isomorphic: inside every hash bucket (all of them) ...
    buckets: dict[str, list] = {}
    for _, _, circuit in circuits:
        buckets.setdefault(graph_hash(graph_of(circuit)), []).append(graph_of(circuit))
    assert not any(isomorphic(a, b) for graphs in buckets.values() for a, b in combinations(graphs, 2))
    # ... and by brute force on a sample, which does not trust the hash
    rng = np.random.default_rng(0)
    sample = [graph_of(circuits[i][2]) for i in rng.choice(len(circuits), 60, replace=False)]
    assert not any(isomorphic(a, b) for a, b in combinations(sample, 2))


def test_every_circuit_parses_walks_and_fits_the_limits_and_vocabulary(quick):
    circuits, _ = quick
    vocab = Vocabulary.bipartite()
    rng = np.random.default_rng(1)
    for family, text, circuit in circuits:
        again = parse(text, "again")  # strict: no floating net, VSS present, passives on two nets
        assert [d.nets for d in again.devices] == [d.nets for d in circuit.devices]
        assert 3 <= len(circuit.devices) <= MAX_DEVICES
        for device in circuit.devices:
            kind, index = split_device(device.name)
            assert kind == device.family and index <= DEVICE_CAPS[kind]
        internal = [net for net in circuit.nets if net.startswith("NET")]
        assert len(internal) <= MAX_INTERNAL_NETS and all(int(net[3:]) <= MAX_INTERNAL_NETS for net in internal)
        for net in circuit.nets:
            if net in ("VSS", "VDD", "VOUT") or net in internal:
                continue
            prefix, index = _PORT.match(net).groups()
            assert 1 <= int(index) <= PORT_CAPS[prefix], (family, net)
        tokens = walk_tokens(circuit, family, rng)  # connected: the walk reaches every edge from VSS
        assert all(token in vocab for token in tokens)
        assert erc_level(tokens) == 0


def test_same_seed_same_circuits_in_the_same_order_other_seed_others():
    first = generate(80, WEIGHTS, seed=7)
    again = generate(80, WEIGHTS, seed=7)
    assert [(f, text) for f, text, _ in first] == [(f, text) for f, text, _ in again]
    other = generate(80, WEIGHTS, seed=8)
    assert [text for _, text, _ in first] != [text for _, text, _ in other]
    rng_a, rng_b = np.random.default_rng(3), np.random.default_rng(3)
    for draw in FAMILIES.values():  # each family's draw is a function of its generator alone
        assert draw(rng_a) == draw(rng_b)


@pytest.mark.parametrize("family", sorted(FAMILIES))
def test_each_family_alone_gives_many_distinct_circuits_with_its_signature(family):
    circuits = generate(60, {family: 1.0}, seed=4, max_draws=200)
    assert len(circuits) == 60 and {f for f, _, _ in circuits} == {family}
    for _, _, circuit in circuits:
        nets = set(circuit.nets)
        kinds = {d.family for d in circuit.devices}
        if family == "Opamp":
            assert {"VIN1", "VIN2", "VOUT"} <= nets
        elif family == "LDO":  # a PMOS pass device from VDD to VOUT, a divider, an output capacitor
            assert {"VREF1", "VOUT"} <= nets and "R" in kinds and "C" in kinds
            assert any(d.family == "PM" and d.nets[0] == "VOUT" and d.nets[2] == "VDD" for d in circuit.devices)
        elif family == "Bandgap_Ref":
            assert "VREF1" in nets and kinds & {"PNP", "NPN", "DIO"} and "R" in kinds and "PM" in kinds
        elif family == "Comparator":
            assert {"VIN1", "VIN2", "VOUT1"} <= nets
        elif family == "Oscillator":
            assert nets & {"VOUT", "VOUT1"} and not nets & {"VIN1", "VIN2"}
        elif family == "Mirror":
            assert "IOUT1" in nets and not nets & {"VIN1", "VOUT"}
        else:
            assert {"VLO1", "VLO2", "VRF1", "VIF1", "VIF2"} <= nets


def test_variant_axes_show_up():
    circuits = generate(400, {name: 1.0 for name in FAMILIES}, seed=5)
    by_family: dict[str, list] = {}
    for family, _, circuit in circuits:
        by_family.setdefault(family, []).append(circuit)

    def families_of(circuit):
        return {d.family for d in circuit.devices}

    assert any("L" in families_of(c) for c in by_family["Oscillator"])  # LC oscillators
    assert any(families_of(c) <= {"NM", "PM", "C"} for c in by_family["Oscillator"])  # rings (or MOS-only LC)
    assert any("NPN" in families_of(c) for c in by_family["Mixer"])  # bipolar Gilbert cells
    assert any(families_of(c) & {"NM"} and "NPN" not in families_of(c) for c in by_family["Mixer"])
    assert any("PNP" in families_of(c) for c in by_family["Bandgap_Ref"])
    assert any("VCONT1" in c.nets for c in by_family["Comparator"])  # clocked comparators
    assert any({"IOUT1", "IOUT2", "IOUT3"} <= set(c.nets) for c in by_family["Mirror"])
    assert any("C" in families_of(c) for c in by_family["Opamp"])  # Miller compensation or a load


def test_bad_arguments_raise():
    with pytest.raises(ValueError, match="unknown circuit families"):
        generate(5, {"Teleporter": 1.0}, seed=0)
    with pytest.raises(ValueError, match="unknown circuit families"):
        generate(5, {"Opamp": 1.0, "General": 1.0}, seed=0)
    for weights in ({}, {"Opamp": 0.0}, {"Opamp": 1.0, "LDO": -0.5}):
        with pytest.raises(ValueError, match="positive weights"):
            generate(5, weights, seed=0)
    with pytest.raises(ValueError, match="n_circuits"):
        generate(0, {"Opamp": 1.0}, seed=0)
