"""Paper 08's claims decided on hand-made results (tests/vair_report_fixtures.py): every claim and check has a case
where it holds, one where it fails and one where it is inconclusive (too few seeds, seeds that disagree, a missing
measurement, a null that passes too)."""

from __future__ import annotations

import numpy as np
import pytest
import yaml

from conftest import ROOT
from neurips26.common.claims import load_definitions
from neurips26.vair import claims
from neurips26.vair.items import FLAWS
from vair_report_fixtures import (
    GOOD,
    PROBE_LAYERS,
    changed,
    decided,
    items_table,
    members_table,
    patching_table,
    probes_table,
    report_tables,
)

DEFINITIONS = load_definitions(ROOT / "config/claims/vair.yaml")
T = report_tables
NO_JITTER = {"outcome": (0, 0, 0), "process": (0, 0, 0)}
EXTERNAL = {"solve": 0.95, "VAVR": 0.95, "IAIR": 0.97, **dict.fromkeys(FLAWS, 0.5)}
# every member grades VAIR as well as the outcome member: the gaps are equal, seed by seed up to the jitter
EQUAL_GAPS = {
    "outcome": {**GOOD["outcome"], **dict.fromkeys(("missing_premise", "missing_step", "shuffled", "circular"), 0.5)},
    "process": {**GOOD["process"], "heldout": 0.5},
}

# a grader that gives every solution 3: VAVR right, every IAIR and VAIR item wrong (solving as GOOD)
NULL_GRADER = T(changed("outcome", IAIR=0.0, **dict.fromkeys(FLAWS, 0.0)), jitter=NO_JITTER)
GATED = ("C1", "C2", "C3", "C3b", "C4", "C5")

VERDICT_CASES = [
    ("C1", "holds", {}),  # outcome gap 0.85, process gap 0.40
    ("C1", "fails", {"tables": T(changed("outcome", **dict.fromkeys(FLAWS, 0.95)))}),
    ("C1", "inconclusive", {"tables": T(seeds=(0, 1))}),
    ("C1", "inconclusive", {"tables": T(EQUAL_GAPS)}),  # the null's gap as large: the difference straddles 0
    ("C1", "holds", {"tables": T(changed("process", heldout=0.95))}),  # a null below the 0.15 bound
    ("C1", "inconclusive", {"tables": NULL_GRADER}),  # gap 1.0, but the grader has not learned the controls
    ("C2", "holds", {}),  # process 0.6 + 0.95 - 1 against outcome 0.15 + 1 - 1
    ("C2", "fails", {"tables": T(changed("process", heldout=0.05, VAVR=0.7))}),
    # a process member that calls every solution invalid gains VAIR accuracy but not discrimination
    ("C2", "fails", {"tables": T(changed("process", heldout=1.0, VAVR=0.0), jitter=NO_JITTER)}),
    ("C2", "inconclusive", {"tables": T(seeds=(0, 1))}),
    ("C2", "inconclusive", {"tables": T(changed("process", heldout=0.15, VAVR=1.0))}),  # equal up to the jitter
    ("C3", "holds", {}),
    ("C3", "fails", {"patching": patching_table(answer=0.3, control=0.6)}),
    ("C3", "inconclusive", {"patching": patching_table(n_items=(15, 0, 15))}),  # a seed with no fooled item
    ("C3", "inconclusive", {"patching": patching_table(answer=0.12, control=0.1, jitter=(0.0, 0.1, -0.1))}),
    ("C3", "inconclusive", {"tables": NULL_GRADER}),
    ("C3b", "holds", {}),
    ("C3b", "fails", {"patching": patching_table(answer=0.2)}),
    ("C3b", "inconclusive", {"patching": patching_table(answer=0.5, jitter=(0.0, 0.1, -0.1))}),
    ("C4", "holds", {}),  # layers 2 and 3 tie at accuracy 1: the earlier, fooled share 0.1
    ("C4", "fails", {"probes": probes_table(layers=[(a, u, 0.9, i) for a, u, _, i in PROBE_LAYERS])}),
    ("C4", "inconclusive", {"probes": probes_table(null_column=False)}),  # no null measured
    # the null passes too: the probe flags few invalid controls either (weak, not fooled)
    ("C4", "inconclusive", {"probes": probes_table(layers=[(a, u, f, 0.3) for a, u, f, _ in PROBE_LAYERS])}),
    ("C4", "inconclusive", {"probes": probes_table(fooled=0)}),  # no fooled item
    ("C4", "inconclusive", {"probes": probes_table(seeds=(0, 1))}),
    ("C4", "inconclusive", {"tables": NULL_GRADER}),
    ("C5", "holds", {}),  # circular 0.40 against shuffled and missing reasoning 0.05
    ("C5", "fails", {"tables": T(changed("outcome", circular=0.0, shuffled=0.3))}),
    ("C5", "inconclusive", {"tables": T(seeds=(0, 1))}),
    # a member that catches no VAIR item of these types orders nothing (every difference 0)
    (
        "C5",
        "inconclusive",
        {"tables": T(changed("outcome", circular=0.0, shuffled=0.0, missing_step=0.0), jitter=NO_JITTER)},
    ),  # fmt: skip
    ("C5", "inconclusive", {"tables": T(changed("outcome", IAIR=0.75))}),  # holds without the gate
    ("C6", "holds", {}),
    ("C6", "fails", {"tables": T(changed("outcome", solve=0.8))}),
    ("C6", "inconclusive", {"tables": T(changed("outcome", solve=0.95), solve_jitter=(0, 1, -1))}),
    ("C7", "holds", {}),
    ("C7", "fails", {"tables": T(changed("outcome", IAIR=0.5))}),
    ("C7", "inconclusive", {"tables": T(seeds=(0, 1))}),
    ("I1", "holds", {"tables": T(external={("gsm8k", "http"): EXTERNAL})}),  # solving 0.95, VAIR 0.5
    ("I1", "fails", {"tables": T(external={("gsm8k", "http"): {**EXTERNAL, **dict.fromkeys(FLAWS, 0.95)}})}),
    ("I1", "inconclusive", {}),  # no external backend (quick scale)
    ("I1", "inconclusive", {"tables": T(external={("gsm8k", "http"): {**EXTERNAL, "n": 10}})}),  # 40 VAIR items
    ("K1", "holds", {}),
    ("K1", "fails", {"items": {"synthetic": items_table(wrong_vair=2)}}),
    ("K1", "inconclusive", {"items": {}}),
    ("K2", "holds", {}),
    ("K2", "fails", {"tables": T(rule_wrong=1)}),
    ("K2", "inconclusive", {"tables": T(reference=False)}),
    ("K3", "holds", {}),
    ("K3", "fails", {"tables": T(answer_only_wrong=1)}),
    ("K3", "inconclusive", {"tables": T(reference=False)}),
    ("K4", "holds", {}),
    ("K4", "fails", {"members": members_table(outcome_vair=5)}),
    ("K4", "fails", {"members": members_table(heldout_items=3)}),
    ("K4", "inconclusive", {"members": members_table().iloc[:0]}),
    ("K5", "holds", {}),
    ("K5", "fails", {"tables": T(unparseable=1)}),
    ("K5", "inconclusive", {"tables": T(seeds=())}),
]


@pytest.mark.parametrize(
    "claim_id, expected, scenario", VERDICT_CASES, ids=[f"{c[0]}-{c[1]}-{i}" for i, c in enumerate(VERDICT_CASES)]
)
def test_claim_verdict_in_scenario(claim_id, expected, scenario):
    table = decided(DEFINITIONS, [claim_id], **scenario)
    assert table.loc[claim_id, "verdict"] == expected, table.loc[claim_id, "note"]


def test_the_values_are_the_stated_differences():
    table = decided(DEFINITIONS)
    # outcome: solving 1, VAIR pooled (2 + 1 + 1 + 8) / 80 per seed up to the jitter, which sums to 0 over seeds
    outcome_gap = 1 - (2 + 1 + 1 + 8) / 80
    process_gap = 1 - 12 / 20
    assert np.isclose(table.loc["C1", "value"], outcome_gap - process_gap)
    assert np.isclose(table.loc["C2", "value"], (0.6 + 0.95 - 1) - ((2 + 1 + 1 + 8) / 80 + 1.0 - 1))
    assert np.isclose(table.loc["C3", "value"], 0.8 - 0.1)
    assert np.isclose(table.loc["C3b", "value"], 0.8)
    assert np.isclose(table.loc["C4", "value"], 0.1) and np.isclose(table.loc["C4", "null_value"], 1.0)
    assert np.isclose(table.loc["C5", "value"], 0.4 - 0.05)
    assert np.isclose(table.loc["C6", "value"], 1.0) and np.isclose(table.loc["C7", "value"], 0.95)
    assert table.loc["K1", "value"] == 0 and table.loc["K2", "value"] == 1.0 and table.loc["K3", "value"] == 0


def test_c1_subtracts_the_null_only_where_it_exceeds_the_bound():
    """With a process gap of 0.05 (below 0.15) C1 is the outcome gap minus 0.15; with 0.40 minus 0.40."""
    low_null = decided(DEFINITIONS, tables=T(changed("process", heldout=0.95))).loc["C1", "value"]
    assert np.isclose(low_null, 1 - 12 / 80 - 0.15)


def test_the_claims_file_is_the_papers_and_its_claims_rest_on_three_seeds():
    definitions = DEFINITIONS
    # no hard claim since issue 41: no quick seed passes the control gate; the file says why
    assert [d.claim_id for d in definitions if d.kind == "hard"] == []
    assert "C3" in yaml.safe_load((ROOT / "config/claims/vair.yaml").read_text())["no_hard_claim"]
    kinds = {d.claim_id: d.kind for d in definitions}
    assert (kinds["C1"], kinds["C2"], kinds["C3"]) == ("info", "soft", "soft")  # C1 by construction; C2 four changes
    assert all(d.paper_value is not None for d in definitions if d.claim_id in ("C1", "C2", "C3"))
    assert all(d.min_runs >= 3 for d in definitions if d.kind in ("hard", "soft"))
    assert not any(d.reconstruction for d in definitions)


@pytest.mark.parametrize("claim_id", GATED)
def test_the_control_gate_names_the_seeds_and_only_it_stops_the_null_grader(claim_id, monkeypatch):
    """The null grader (3 to everything) passes C1 without the gate; with it every seed is left out and named."""
    table = decided(DEFINITIONS, [claim_id], tables=NULL_GRADER)
    assert table.loc[claim_id, "runs"] == 0
    assert "has not learned the controls on seeds [0, 1, 2]: see C7" in table.loc[claim_id, "note"]
    if claim_id == "C1":
        monkeypatch.setattr(claims, "CONTROL_GATE", 0.0)
        assert decided(DEFINITIONS, ["C1"], tables=NULL_GRADER).loc["C1", "verdict"] == "holds"


def test_the_control_gate_changes_nothing_where_the_controls_are_learned(monkeypatch):
    gated = decided(DEFINITIONS, list(GATED))
    monkeypatch.setattr(claims, "CONTROL_GATE", 0.0)
    ungated = decided(DEFINITIONS, list(GATED))
    for claim_id in GATED:
        assert gated.loc[claim_id, "verdict"] == ungated.loc[claim_id, "verdict"] == "holds"
        assert np.isclose(gated.loc[claim_id, "value"], ungated.loc[claim_id, "value"])
        assert gated.loc[claim_id, "runs"] == 3


def test_control_gate_is_at_least_0_8_on_both_controls():
    assert claims.control_gate(T(changed("outcome", IAIR=0.8))[0]) == ([0, 1, 2], [])
    assert claims.control_gate(T(changed("outcome", VAVR=0.75))[0]) == ([], [0, 1, 2])
    assert claims.control_gate(T(seeds=(0, 1))[0]) == ([0, 1], [])
