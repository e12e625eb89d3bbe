"""Paper 02's renaming, novelty, 10-gram memorisation and MMD realism distance."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from neurips26.analogtobi.grammar import accepts
from neurips26.analogtobi.metrics import NoveltyIndex, memorised, mmd2, rename
from neurips26.analogtobi.netlist import parse
from neurips26.analogtobi.serialize import walk_tokens
from neurips26.analogtobi.tokens import END

DATA = Path(__file__).parent / "data" / "analogtobi"
OTA_TEXT = (DATA / "ota5t.cir").read_text()
OTA = parse(OTA_TEXT)


def test_renaming_maps_each_familys_indices_injectively_and_keeps_the_walk_valid():
    tokens = walk_tokens(OTA, "Opamp", np.random.default_rng(0))
    renamed = rename(tokens, np.random.default_rng(1))
    assert renamed != tokens and len(renamed) == len(tokens)
    pairs = {(a, b) for a, b in zip(tokens, renamed) if a != b}
    assert len({a for a, _ in pairs}) == len({b for _, b in pairs}) == len(pairs)  # a bijection on the devices used
    assert all(a.rstrip("0123456789") == b.rstrip("0123456789") for a, b in pairs)  # within the family
    assert accepts(renamed)[0]


def test_a_relabelled_circuit_is_not_novel_and_another_topology_is():
    index = NoveltyIndex([OTA])
    shuffled = "\n".join(reversed(OTA_TEXT.strip().splitlines()[1:]))  # same circuit, devices in another order
    assert not index.novel(parse(shuffled))
    swapped = OTA_TEXT.replace("VIN1", "VINX").replace("VIN2", "VIN1").replace("VINX", "VIN2")
    assert index.novel(parse(swapped))  # ports keep their names (as the paper's test): swapped inputs differ
    other = OTA_TEXT.replace("MM5 (tail VB1 VSS VSS) nmos4", "MM5 (tail VB1 VSS VSS) nmos4\nRR1 (VOUT VSS) resistor")
    assert index.novel(parse(other))


def test_memorisation_needs_one_training_walk_with_both_the_head_and_the_tail():
    a = ["CIRCUIT_Opamp", *[f"t{i}" for i in range(20)], END]
    head_only = ["CIRCUIT_Opamp", *[f"t{i}" for i in range(10)], *[f"u{i}" for i in range(10)], END]
    tail_only = ["CIRCUIT_Opamp", *[f"u{i}" for i in range(9)], *[f"t{i}" for i in range(9, 20)], END]
    assert memorised(a, [a + [END, END]])  # padding does not count
    assert not memorised(a, [head_only, tail_only])  # head and tail from two different walks


def test_mmd_is_near_zero_for_one_distribution_and_grows_with_a_shift():
    rng = np.random.default_rng(0)
    x, y = rng.normal(size=(200, 3)), rng.normal(size=(200, 3))
    assert abs(mmd2(x, y)) < 0.02
    assert mmd2(x + 1.5, y) > 0.2
    with pytest.raises(ValueError, match="at least 2 samples"):
        mmd2(x[:1], y)


def test_the_spice_deck_biases_ports_and_models_every_device():
    from neurips26.analogtobi.spice import deck

    text = deck(OTA)
    assert "VDD vdd 0 1.8" in text and ".op" in text and ".model nmos_g NMOS" in text
    assert "MNM1 net1 vin1 net2 0 nmos_g W=1.8u L=0.18u" in text  # VSS is node 0
    assert "MPM1 net1 net1 vdd vdd pmos_g W=3.6u L=0.18u" in text
    assert "Vvin1 vin1 0 0.9" in text and "Vvb1 vb1 0 0.65" in text  # VB1 drives an NMOS gate
    assert "vout" not in [line.split()[0].lower() for line in text.splitlines() if line.startswith("V")]


def test_without_ngspice_a_circuit_is_unavailable_not_failed():
    from neurips26.analogtobi.spice import simulate

    result = simulate(OTA, binary="ngspice-not-installed-here")
    assert result.status == "unavailable" and "not installed" in result.reason


@pytest.mark.skipif(__import__("shutil").which("ngspice") is None, reason="ngspice is not installed here")
def test_ngspice_finds_the_operating_point_of_the_ota():
    from neurips26.analogtobi.spice import simulate

    assert simulate(OTA).status == "converged"
