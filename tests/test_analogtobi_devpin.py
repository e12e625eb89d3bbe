"""Paper 02's device-pin baseline representation (AnalogGenie's Eulerian device-pin sequences): every walk of a
circuit is an edge-DFS from VSS crossing each graph edge once each way, decodes to an isomorphic circuit and passes the
device-pin ERC; hand-made invalid sequences fail at the expected level with an error naming the token."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import numpy as np
import pytest

from neurips26.analogtobi import devpin
from neurips26.analogtobi.devpin import DecodeError, decode, devpin_kind, erc_level, vocabulary, walk, walk_tokens
from neurips26.analogtobi.generate import generate, graph_of, isomorphic
from neurips26.analogtobi.netlist import parse
from neurips26.analogtobi.tokens import END, Vocabulary

DATA = Path(__file__).parent / "data" / "analogtobi"
OTA = parse((DATA / "ota5t.cir").read_text(), "ota5t.cir")
BANDGAP = parse((DATA / "bandgap.cir").read_text(), "bandgap.cir")
DIVIDER = parse("R0 (VDD VOUT1) resistor\nR1 (VOUT1 VSS) resistor", "divider")
SEEDS = (0, 1, 7)


@pytest.fixture(scope="module")
def generated():
    return generate(50, {"Opamp": 1, "Mirror": 1, "LDO": 1, "Bandgap_Ref": 1}, seed=0)


def _circuits(generated):
    return [("Opamp", OTA), ("Bandgap_Ref", BANDGAP), *((family, c) for family, _, c in generated)]


def test_vocabulary_is_a_shared_vocabulary_ordered_like_the_bipartite_one():
    vocab = vocabulary()
    assert isinstance(vocab, Vocabulary)
    assert len(set(vocab.tokens)) == len(vocab)
    assert vocab.tokens[:3] == ("VSS", "VDD", "CIRCUIT_Opamp") and vocab.tokens[-1] == END
    i = vocab.index("NM1")
    assert vocab.tokens[i : i + 6] == ("NM1", "NM1_D", "NM1_G", "NM1_S", "NM1_B", "NM2")
    for token in ("NM35_B", "PM35_D", "NPN27_E", "PNP1_C", "R28_P", "C16_N", "L24_P", "DIO8_N", "VOUT", "VIN20"):
        assert token in vocab
    for token in ("NM36", "R1_C", "NM1_P", "NET1", "M_D", "XOR1_A"):
        assert token not in vocab
    kinds = Counter(devpin_kind(t) for t in vocab.tokens)
    assert kinds["end"] == 1 and kinds["type"] == 15 and kinds["unknown"] == 0
    assert kinds["device"] == 35 + 35 + 27 + 27 + 28 + 16 + 24 + 8
    assert [devpin_kind(t) for t in ("NM1", "NM1_G", "VB3", "VSS", "NM99_D", "NM1_C", "FOO")] == [
        "device", "pin", "net", "net", "unknown", "unknown", "unknown",
    ]  # fmt: skip


def test_a_walk_is_an_edge_dfs_from_vss_crossing_every_edge_once_each_way():
    tokens = walk(DIVIDER, np.random.default_rng(0))
    assert tokens[0] == tokens[-1] == "VSS"
    steps = Counter(zip(tokens, tokens[1:]))
    expected = {(a, b) for a, b in devpin.edges(DIVIDER)} | {(b, a) for a, b in devpin.edges(DIVIDER)}
    assert set(steps) == expected and set(steps.values()) == {1}
    assert len(tokens) == 2 * len(devpin.edges(DIVIDER)) + 1
    # the AnalogGenie graph of the OTA: device stars, pins on ports, cliques of pins on internal nets
    ota = set(devpin.edges(OTA))
    assert ("NM1", "NM1_D") in ota and ("NM1_G", "VIN1") in ota and ("NM3_S", "VSS") in ota
    assert ("NM1_D", "PM1_D") in ota and ("PM1_D", "PM1_G") in ota and ("NM1_S", "NM3_D") in ota
    assert not any("VSS" in e and "VDD" in e for e in ota)


def test_walks_round_trip_on_fixtures_and_generated_circuits(generated):
    vocab = vocabulary()
    assert len(generated) == 50
    for family, circuit in _circuits(generated):
        graph = graph_of(circuit)
        for seed in SEEDS:
            tokens = walk_tokens(circuit, family, np.random.default_rng(seed))
            assert tokens[:2] == [f"CIRCUIT_{family}", "VSS"] and tokens[-2:] == ["VSS", END]
            assert all(t in vocab for t in tokens)
            assert erc_level(tokens) == 0, (circuit.source, seed)
            assert isomorphic(graph_of(decode(tokens)), graph), (circuit.source, seed)
    untyped = walk_tokens(OTA, None, np.random.default_rng(0))
    assert untyped[0] == "VSS" and erc_level(untyped) == 0


def test_walks_are_deterministic_per_seed_and_differ_across_seeds():
    a, b = (walk_tokens(OTA, "Opamp", np.random.default_rng(3)) for _ in range(2))
    assert a == b
    assert len({tuple(walk(OTA, np.random.default_rng(s))) for s in range(6)}) > 1


def test_decode_names_nets_by_first_appearance_and_keeps_ports_and_devices():
    # an inverter; PM1_G-NM1_G-VIN1 links two pins of a port net directly (read leniently as one net)
    tokens = (
        "VSS NM1_S NM1 NM1_D PM1_D PM1 PM1_S VDD PM1_S PM1 PM1_G NM1_G NM1 NM1_G VIN1 NM1_G PM1_G PM1 PM1_B VDD PM1_B "
        "PM1 PM1_D NM1_D NM1 NM1_B VSS NM1_B NM1 NM1_S VSS TRUNCATE"
    ).split()
    assert erc_level(tokens) == 0
    circuit = decode(tokens)
    assert [(d.name, d.nets) for d in circuit.devices] == [
        ("NM1", ("NET1", "VIN1", "VSS", "VSS")), ("PM1", ("NET1", "VIN1", "VDD", "VDD")),
    ]  # fmt: skip
    # the divider: passives get P, N in terminal order
    tokens = walk_tokens(DIVIDER, None, np.random.default_rng(0))
    assert {(d.name, d.nets) for d in decode(tokens).devices} == {("R1", ("VDD", "VOUT1")), ("R2", ("VOUT1", "VSS"))}


DIV = "VSS R2_N R2 R2_P VOUT1 R1_N R1 R1_P VDD R1_P R1 R1_N VOUT1 R2_P R2 R2_N VSS"


@pytest.mark.parametrize(
    "sequence, level, index, message",
    [
        (DIV + " TRUNCATE", 0, None, None),
        ("CIRCUIT_Opamp " + DIV + " TRUNCATE", 0, None, None),
        (DIV, 1, 16, "no TRUNCATE"),
        ("VDD" + DIV[3:] + " TRUNCATE", 1, 0, "must start with VSS"),
        (DIV[:-4] + " TRUNCATE", 1, 15, "last token before TRUNCATE must be VSS"),
        ("VSS TRUNCATE", 1, 0, "too short"),
        ("CIRCUIT_Foo " + DIV + " TRUNCATE", 1, 0, "unknown circuit type"),
        (DIV.replace("R1_P VDD R1_P", "R1_P VDDX R1_P") + " TRUNCATE", 1, 8, "not in the device-pin vocabulary"),
        (DIV.replace("R1_N R1 R1_P", "R1_N R1 NM99_D") + " TRUNCATE", 1, 7, "not in the device-pin vocabulary"),
        (DIV.replace("R2 R2_P VOUT1", "R2 CIRCUIT_Opamp VOUT1") + " TRUNCATE", 1, 3, "circuit-type token after"),
        ("VSS R1 R1_P VSS TRUNCATE", 1, 1, "device R1 next to VSS"),
        (DIV.replace("R1_N R1 R1_P", "R1_N R2 R1_P") + " TRUNCATE", 1, 6, "device R2 next to R1_N"),
        (DIV.replace("R1_P VDD R1_P", "R1_P VDD VOUT1 R1_P") + " TRUNCATE", 1, 9, "two rails/ports"),
        (DIV.replace("VOUT1 R1_N", "VOUT1 VOUT1 R1_N") + " TRUNCATE", 1, 5, "VOUT1 repeated"),
        # level 2: a missing pin; a pin never next to its device
        ("VSS NM1_S NM1 NM1_D VOUT1 NM1_D NM1 NM1_G VIN1 NM1_G NM1 NM1_S VSS TRUNCATE", 2, 1, "lacks pin NM1_B"),
        ("VSS R2_N R2 R2_P VOUT1 R1_N R1 R1_N VOUT1 R2_P R2 R2_N VSS TRUNCATE", 2, 5, "lacks pin R1_P"),
        ("VSS R2_N R2 R2_P VOUT1 R1_N R1 R1_N VOUT1 R1_P VDD R1_P VOUT1 R2_P R2 R2_N VSS TRUNCATE", 2, 5, "never next"),
        # level 3: a pin on two nets (rails shorted); a passive shorted through a net or a direct pin-pin edge
        (DIV.replace("R1_P VDD R1_P", "R1_P VDD R1_P VSS R1_P") + " TRUNCATE", 3, 10, "joins nets VDD and VSS"),
        ("VSS R1_N R1 R1_P VDD R1_P R1 R1_N VDD TRUNCATE", 1, 8, "last token before TRUNCATE"),
        ("VSS R1_N R1 R1_P VDD R1_P R1 R1_N VDD R1_N VSS TRUNCATE", 3, 8, "R1_N-VDD joins nets VSS and VDD"),
        ("VSS R2_N R2 R2_P R1_N R1 R1_P R1_N R1 R1_P VDD R1_P R1 R1_N R2_P R2 R2_N VSS TRUNCATE", 3, 7, "shorted"),
        # level 4: an internal net on one device (diode-connected only to itself); a pin alone on its net
        ("VSS NM1_S NM1 NM1_D NM1_G NM1 NM1_B VSS NM1_B NM1 NM1_S VSS TRUNCATE", 4, 3, "touches 1 device"),
        (DIV.replace("R2_N R2 R2_P VOUT1", "R2_N R2 R2_P R2 R2_P VOUT1") + " TRUNCATE", 0, None, None),
        ("VSS NM1_S NM1 NM1_D VDD NM1_D NM1 NM1_G NM1 NM1_B VSS NM1_B NM1 NM1_S VSS TRUNCATE", 4, 7, "NET1"),
    ],
)
def test_invalid_sequences_fail_at_the_expected_level_and_decode_names_the_token(sequence, level, index, message):
    tokens = sequence.split()
    assert erc_level(tokens) == level
    if level == 0:
        decode(tokens, strict=True)
        return
    if level == 4:
        assert decode(tokens).devices  # a floating net is still a circuit unless strict
        call = lambda: decode(tokens, strict=True)  # noqa: E731
    else:
        call = lambda: decode(tokens)  # noqa: E731
    with pytest.raises(DecodeError, match=message) as error:
        call()
    assert (error.value.level, error.value.index) == (level, index)
    assert error.value.token == (tokens[index] if tokens else "")
    assert f"token {index} ({tokens[index]})" in str(error.value)


def test_padding_after_truncate_is_ignored_and_a_disconnected_circuit_cannot_be_walked():
    tokens = walk_tokens(BANDGAP, "Bandgap_Ref", np.random.default_rng(0))
    assert erc_level([*tokens, END, END]) == 0
    split = parse("M1 (VOUT1 VIN1 VSS VSS) nmos4\nM2 (VOUT2 VIN2 VDD VDD) pmos4", "split")
    with pytest.raises(ValueError, match="split: the circuit is not connected"):
        walk(split, np.random.default_rng(0))
