"""Paper 02's validity after the outside review (issue 39): the designer rule (ERC level 5) refuses hand-made
degenerate circuits and accepts the generator's real ones, in both representations; a circuit-type token is allowed
only first, in both; index-free memorisation and canonical-port novelty; the held-out table says "unavailable"."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from neurips26.analogtobi import devpin, erc, generate, serialize
from neurips26.analogtobi.evaluation import decode_checked
from neurips26.analogtobi.metrics import NoveltyIndex, memorised, rename
from neurips26.analogtobi.netlist import parse
from neurips26.analogtobi.report import held_out_table

DEGENERATE = {
    "an NMOS with every pin on VSS": (
        "M1 (VSS VSS VSS VSS) nmos4\nM2 (VOUT VIN1 VSS VSS) nmos4\nM3 (VOUT VOUT VDD VDD) pmos4"
    ),
    "a lone resistor between VDD and VSS": "R1 (VDD VSS) resistor",
    "a floating gate": "M1 (VOUT n1 VSS VSS) nmos4\nM2 (VOUT n1 VDD VDD) pmos4",
    "a port on a bulk only": "M1 (VOUT VOUT VSS VIN1) nmos4\nR1 (VOUT VDD) resistor",
    "no supply": "M1 (VOUT VIN1 VSS VSS) nmos4\nR1 (VOUT VIN2) resistor",
}
MIRROR = "M1 (IREF1 IREF1 VSS VSS) nmos4\nM2 (IOUT1 IREF1 VSS VSS) nmos4"  # no VDD: fed by its current ports


def _walk(rep, circuit, seed=0):
    walker = serialize.walk_tokens if rep == "bipart" else devpin.walk_tokens
    return walker(circuit, "Opamp", np.random.default_rng(seed))


@pytest.mark.parametrize("rep", ["bipart", "devpin"])
@pytest.mark.parametrize("what", list(DEGENERATE))
def test_degenerate_circuits_fail_the_designer_rule_in_both_representations(rep, what):
    circuit = parse(DEGENERATE[what], what)
    tokens = _walk(rep, circuit)
    structural = erc.erc_level(tokens) if rep == "bipart" else devpin.erc_level(tokens)
    assert structural == 0  # levels 1-4 (the reference's ERC) accept it
    assert decode_checked(tokens, rep) == (erc.DESIGN_LEVEL, None)


@pytest.mark.parametrize("rep", ["bipart", "devpin"])
def test_the_generators_circuits_and_a_current_fed_mirror_pass_the_designer_rule(rep):
    real = [c for _, _, c in generate.generate(40, {"Opamp": 1, "Mirror": 1, "LDO": 1, "Oscillator": 1}, seed=1,
                                               max_devices=12)]  # fmt: skip
    for circuit in [*real, parse(MIRROR, "mirror")]:
        assert erc.design_fault(circuit) == ""
        level, back = decode_checked(_walk(rep, circuit), rep)
        assert level == 0 and back is not None


def test_a_stray_type_token_fails_level_one_in_both_representations():
    circuit = parse(MIRROR, "mirror")
    for rep in ("bipart", "devpin"):
        tokens = _walk(rep, circuit)
        stray = tokens[:3] + ["CIRCUIT_Mirror"] + tokens[3:]
        check = erc.erc_level if rep == "bipart" else devpin.erc_level
        assert check(tokens) == 0 and check(stray) == 1
    assert erc.erc_level(["CIRCUIT_Unknown", *_walk("bipart", circuit)[1:]]) == 1


def test_renaming_alone_does_not_lower_index_free_memorisation():
    circuit = parse(DEGENERATE["a floating gate"].replace("n1", "VIN1"), "inverter")
    walk = _walk("bipart", circuit)
    renamed = rename(walk, np.random.default_rng(0), pool=12)
    assert renamed != walk
    assert not memorised(renamed, [walk], n=4) and memorised(renamed, [walk], n=4, index_free=True)


def test_canonical_ports_make_swapped_inputs_known():
    ota = parse("M1 (d1 VIN1 t VSS) nmos4\nM2 (VOUT VIN2 t VSS) nmos4\nM3 (d1 d1 VDD VDD) pmos4\n"
                "M4 (VOUT d1 VDD VDD) pmos4\nM5 (t VB1 VSS VSS) nmos4", "ota")  # fmt: skip
    swapped = parse("M1 (d1 VIN2 t VSS) nmos4\nM2 (VOUT VIN1 t VSS) nmos4\nM3 (d1 d1 VDD VDD) pmos4\n"
                    "M4 (VOUT d1 VDD VDD) pmos4\nM5 (t VB1 VSS VSS) nmos4", "swapped")  # fmt: skip
    assert NoveltyIndex([ota]).novel(swapped)
    assert not NoveltyIndex([ota], canonical_ports=True).novel(swapped)


def test_the_held_out_table_says_unavailable_without_ngspice():
    reference = pd.DataFrame({"id": [1, 2, 3], "type": ["Opamp", "Opamp", "Mirror"],
                              "predicted": ["Opamp", "Mirror", "Mirror"], "predicted_canonical": ["Opamp"] * 3,
                              "design_fault": ["", "", "no port besides the rails"],
                              "spice": ["unavailable", "unavailable", "converged"]})  # fmt: skip
    table = held_out_table(reference).set_index("type")
    assert table.loc["Opamp", "ngspice_converged"] == "unavailable"
    assert table.loc["Mirror", "ngspice_converged"] == "1.000" and table.loc["Mirror", "designer_valid"] == 0.0
