"""Paper 02's per-sample metrics and tables on hand-checked cases: training walks are valid, not novel and memorised;
a walk cut at the length limit is invalid; ngspice's printout is read; the ablation's rates count what they say."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from neurips26.analogtobi import generate, serialize, spice
from neurips26.analogtobi.evaluation import FEATURES, evaluate_samples, features
from neurips26.analogtobi.metrics import NoveltyIndex
from neurips26.analogtobi.netlist import parse
from neurips26.analogtobi.summary import ablation_rows, ablation_summary

OTA = """M1 (d1 VIN1 tail VSS) nmos4
M2 (VOUT VIN2 tail VSS) nmos4
M3 (d1 d1 VDD VDD) pmos4
M4 (VOUT d1 VDD VDD) pmos4
M5 (tail VB1 VSS VSS) nmos4"""


@pytest.fixture(scope="module")
def circuits():
    return [(kind, c) for kind, _, c in generate.generate(12, {"Opamp": 1, "Mirror": 1}, seed=0, max_devices=10)]


def test_features_count_devices_edges_and_net_degrees():
    f = dict(zip(FEATURES, features(parse(OTA, "ota"))))
    assert f["n_NM"] == 3 and f["n_PM"] == 2 and f["n_R"] == 0
    # M3-M5 have source and bulk on one rail; M1, M2 their bulk on VSS apart from their source; M3 is diode-connected
    assert f["e_M_BS"] == 3 and f["e_M_B"] == 2 and f["e_M_S"] == 2 and f["e_M_DG"] == 1 and f["e_M_D"] == 4
    assert f["deg_3"] == 2 and f["deg_2"] == 0  # d1: M1, M3, M4; tail: M1, M2, M5


def test_training_walks_are_valid_known_and_memorised_and_a_cut_walk_is_invalid(circuits):
    rng = np.random.default_rng(0)
    walks = [serialize.walk_tokens(c, kind, rng) for kind, c in circuits]
    samples = [{"decoding": "grammar", "type": kind, "tokens": w, "terminated": True} for (kind, _), w in
               zip(circuits, walks)]  # fmt: skip
    cut = walks[0][:-6]
    samples.append({"decoding": "grammar", "type": circuits[0][0], "tokens": cut, "terminated": False})
    index = NoveltyIndex([c for _, c in circuits[:6]])
    rows, timing = evaluate_samples(samples, "bipart", index, walks, lambda cs: ["Opamp"] * len(cs), ngram=10,
                                    spice_per_type=0, spice_timeout_s=5)  # fmt: skip
    table = pd.DataFrame(rows)
    assert table["valid"].tolist() == [True] * 12 + [False]
    assert table["novel"].tolist() == [False] * 6 + [True] * 6 + [False]  # only the first six are "training" circuits
    assert table["memorised"].tolist() == [True] * 12 + [False]
    assert table.loc[12, "erc"] > 0 and table.loc[12, "predicted"] == ""
    assert (table["spice"] == "not_simulated").all() and timing["simulations"] == 0
    assert table["type_ok"].tolist()[:12] == [kind == "Opamp" for kind, _ in circuits]


def test_ngspice_runs_only_on_the_first_samples_of_each_decoding(circuits):
    rng = np.random.default_rng(1)
    walk = serialize.walk_tokens(circuits[0][1], circuits[0][0], rng)
    samples = [{"decoding": d, "type": "Opamp", "tokens": walk, "terminated": True} for d in ("grammar", "free")] * 3
    rows, timing = evaluate_samples(samples, "bipart", NoveltyIndex([]), [], lambda cs: ["Opamp"] * len(cs),
                                    ngram=10, spice_per_type=2, spice_timeout_s=5)  # fmt: skip
    status = [r["spice"] for r in rows]
    assert status[4:] == ["not_simulated"] * 2 and "not_simulated" not in status[:4]
    expected = "unavailable" if spice.shutil.which("ngspice") is None else "converged"
    assert set(status[:4]) == {expected}


def test_ngspices_operating_point_printout_is_read():
    text = """Circuit: * ota\n\n\tNode                 Voltage\n\t----                 -------
\t----\t-------\n\tvout                             1.194490e+00\n\tnet2                             2.591348e-01
\tvdd                              1.800000e+00\n\n\tSource\tCurrent\n\t------\t-------\n\n\tvdd#branch  -4.1e-05\n"""
    assert spice.node_voltages(text) == [1.19449, 0.2591348, 1.8]
    assert spice.node_voltages("no table here") == []


def test_the_ablation_rates_count_samples_valid_novel_and_simulated_circuits():
    rows = []
    for seed in (0, 1):
        for i in range(10):
            valid = i < 8
            rows.append({"config": "bipart-type-rename", "decoding": "grammar", "seed": seed, "typed": True,
                         "terminated": i < 9, "erc": 0 if valid else 2, "valid": valid, "novel": valid and i < 4,
                         "memorised": i == 9, "novel_canonical": valid and i < 2, "memorised_topology": i >= 7,
                         "type_ok": valid and i < 6, "type_ok_canonical": valid and i < 4,
                         "n_devices": 5 if valid else 0,
                         "spice": ("converged" if i < 3 else "failed") if valid and i < 5 else
                         ("invalid" if i < 5 else "not_simulated"),
                         **{f"f_{f}": (1.0 if valid else np.nan) for f in FEATURES}})  # fmt: skip
    reference = pd.DataFrame({f"f_{f}": np.arange(4.0) for f in FEATURES}).assign(type="Opamp")
    table = ablation_rows(pd.DataFrame(rows), reference)
    r = table.iloc[0]
    assert (r["samples"], r["terminated"], r["valid"], r["novel"], r["memorised"]) == (10, 9, 8, 4, 1)
    assert (r["cut"], r["erc2"], r["erc1"], r["memorised_valid"]) == (1, 1, 0, 0)
    assert r["validity"] == 0.8 and r["novelty"] == 0.4 and r["novel_of_valid"] == 0.5
    assert r["type_accuracy"] == 0.75 and r["spice_first"] == 5 and r["electrical"] == 0.6
    assert r["novel_of_valid_canonical"] == 0.25 and r["type_accuracy_canonical"] == 0.5
    assert r["memorised_topology_valid"] == 1 and r["memorised_topology_of_valid"] == 0.125
    assert np.isfinite(r["realism_mmd"])
    summary = ablation_summary(table)
    assert summary.loc[0, "seeds"] == 2 and summary.loc[0, "validity_sd"] == 0


def test_the_type_classifier_tells_the_generators_families_apart_on_held_out_circuits():
    from neurips26.analogtobi.classifier import TypeClassifier, wl_counts

    drawn = generate.generate(160, {"Mirror": 1, "Oscillator": 1, "Mixer": 1}, seed=2, max_devices=12)
    kinds, circuits = [k for k, _, _ in drawn], [c for _, _, c in drawn]
    clf = TypeClassifier(iterations=2, n_features=512).fit(circuits[:120], kinds[:120])
    accuracy = np.mean([p == k for p, k in zip(clf.predict(circuits[120:]), kinds[120:])])
    assert accuracy > 0.8 and len(set(kinds[120:])) == 3
    assert clf.predict([]) == []
    counts = wl_counts(parse(OTA, "ota"), 0)
    assert counts["0:NM"] == 3 and counts["0:NET"] == 2 and counts["0:VSS"] == 1  # iteration 0: the node labels
    with pytest.raises(ValueError, match="at least two types"):
        TypeClassifier().fit(circuits[:3], ["Mirror"] * 3)


@pytest.mark.skipif(spice.shutil.which("ngspice") is None, reason="ngspice is not installed here")
def test_ngspice_reports_a_circuit_without_an_operating_point_as_failed():
    # a loop of two inductors between VDD and VSS shorts the supply: no DC solution
    shorted = parse("L1 (VDD n1) inductor\nL2 (n1 VSS) inductor\nM1 (n1 VB1 VSS VSS) nmos4", "short")
    result = spice.simulate(shorted)
    assert result.status == "failed" and result.reason
    assert spice.simulate(parse(OTA, "ota")).status == "converged"
    assert spice.simulate(parse(OTA, "ota"), binary="no-such-ngspice").status == "unavailable"
