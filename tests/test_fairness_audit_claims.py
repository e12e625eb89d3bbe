"""Paper 06 claims C1-C6: on small consistent tables every claim holds, and breaking the one table entry a claim
rests on makes exactly that claim fail (each check can fail)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from neurips26.common.claims import claims_table
from neurips26.fairness_audit.claims import CONDITIONAL_AXIOMS, check_claims

SCENARIO_OF = {"pp_s0": "predictive_proxy", "np_s0": "nonpredictive_proxy", "np_s1": "nonpredictive_proxy",
               "adult": "real"}
FAMILY = {"B_SP": "baseline", "B_EO": "baseline", "bayes_SP": "ours-assumed", "prod_SP": "ours-assumed",
          "red_SP": "pid", "bayes_EO": "ours-assumed", "uniA_EO": "pid"}
NOTION = {m: m.split("_")[1] for m in FAMILY}
IDS = ["C1a", "C1b", "C2a", "C2b", "C2c", "C2d", "C3a", "C3b", "C3c", "C4a", "C4b", "C5", "C6a", "C6b"]


def _validation(spearman: dict[tuple[str, str], float]) -> pd.DataFrame:
    rows = [dict(estimator="ce", measure=m, notion=NOTION[m], family=FAMILY[m], gap=g, aligned=NOTION[m] == g[:2]
                 .upper(), spearman=r, kendall=r, n_pairs=40, ci_low=r - 0.1, ci_high=r + 0.1)
            for (m, g), r in spearman.items()]
    return pd.DataFrame(rows)


def _axioms(outcomes: dict[tuple[str, str], str]) -> pd.DataFrame:
    """An axiom_table-shaped frame: one instance row per (measure, property), two for a conditional outcome."""
    rows = []
    for (measure, prop), outcome in outcomes.items():
        oks = {"pass": [True], "fail": [False], "holds_under_condition": [True, False]}[outcome]
        for i, ok in enumerate(oks):
            rows.append(dict(measure=measure, notion=NOTION[measure], family=FAMILY[measure], property=prop,
                             kind="desired", premise="p", instance=f"inst{i}", condition=f"c{i}", criterion="c",
                             value=0.0 if ok else 0.1, satisfied=ok, outcome=outcome))
    return pd.DataFrame(rows)


def _good_inputs() -> dict:
    spearman = {("bayes_SP", "sp_gap"): 0.8, ("bayes_SP", "eo_gap"): 0.3, ("prod_SP", "sp_gap"): 0.6,
                ("prod_SP", "eo_gap"): 0.2, ("bayes_EO", "sp_gap"): 0.4, ("bayes_EO", "eo_gap"): 0.7,
                ("uniA_EO", "sp_gap"): np.nan, ("uniA_EO", "eo_gap"): 0.5, ("B_SP", "sp_gap"): 0.9,
                ("B_SP", "eo_gap"): 0.9, ("B_EO", "sp_gap"): 0.2, ("B_EO", "eo_gap"): 0.3}
    validation_np = _validation({("bayes_SP", "sp_gap"): 0.5, ("B_SP", "sp_gap"): 0.1, ("prod_SP", "sp_gap"): 0.4})
    dpi = pd.DataFrame({"dataset": ["pp_s0"] * 20 + ["np_s0"] * 20 + ["np_s0"], "coalition": ["x1"] * 40 + [""],
                        "size": [1] * 40 + [0], "estimator": "ce", "excess_sp": -0.01, "excess_eo": -0.02,
                        "holds_sp": True, "holds_eo": True})
    dpi.loc[0, ["holds_sp", "excess_sp"]] = [False, 0.05]  # 39/40 hold: the 95% claim still holds
    outcomes = {("B_SP", "P1"): "pass", ("B_SP", "P2"): "fail", ("B_SP", "W"): "pass", ("B_SP", "U_SP"): "pass"}
    for measure in ("bayes_SP", "prod_SP", "red_SP"):
        outcomes.update({(measure, "P1"): "pass", (measure, "P2"): "pass", (measure, "W"): "pass",
                         (measure, "U_SP"): "pass"})
    outcomes[("red_SP", "P1")] = "holds_under_condition"  # not required (I_min)
    for measure in ("B_EO", "bayes_EO", "uniA_EO"):
        outcomes.update({(measure, "Q1"): "pass", (measure, "Q2"): "pass", (measure, "W"): "pass"})
    outcomes[("B_EO", "Q2")] = "fail"
    redundancy = pd.DataFrame({"measure": ["B_SP", "B_EO", "bayes_SP"], "player": "x1", "phi_orig": [0.2, 0.1, 0.1],
                               "phi_i": [0.11, 0.052, 0.04], "phi_copy": [0.11, 0.052, 0.04],
                               "rel_err": [0.1, 0.04, 0.2], "asym": 0.0, "estimator": "plugin"})
    redundancy.loc[0, "rel_err"] = 0.09
    datasets = list(SCENARIO_OF)
    selection = pd.DataFrame([dict(dataset=d, ranking=f"shapley_{m}", k=k, delta_sp_gap=-0.1 * k,
                                   delta_eo_gap=-0.05 * k) for d in datasets for m in ("bayes_SP", "bayes_EO")
                              for k in (0, 1)])
    random = pd.DataFrame([dict(dataset=d, k=k, delta_sp_gap=-0.02 * k, delta_eo_gap=-0.01 * k) for d in datasets
                           for k in (0, 1)])
    return dict(validation=_validation(spearman), dpi=dpi, axioms=_axioms(outcomes), redundancy=redundancy,
                selection=selection, scenario_of=SCENARIO_OF,
                selection_measures={"SP": "bayes_SP", "EO": "bayes_EO"}, validation_nonpredictive=validation_np,
                random_removal=random)


def _by_id(inputs: dict) -> dict:
    return {c.claim_id: c for c in check_claims(**inputs)}


def test_every_claim_holds_on_consistent_tables():
    claims = check_claims(**_good_inputs())
    table = claims_table(claims)
    assert table["claim_id"].tolist() == IDS
    assert table["holds"].all(), table.loc[~table["holds"], ["claim_id", "value", "note"]].to_string()
    kinds = dict(zip(table["claim_id"], table["kind"]))
    assert [k for k, v in kinds.items() if v == "hard"] == ["C1a", "C1b", "C2a", "C2b", "C2c", "C3a"]
    assert kinds["C2d"] == "info" and kinds["C5"] == "soft" and kinds["C6a"] == "soft"
    by = {c.claim_id: c for c in claims}
    assert by["C1a"].value == pytest.approx(39 / 40)  # the empty coalition is not counted
    assert by["C2a"].threshold == 1 + 2 * 3 - 1  # B_SP P2; P1, P2 of 3 measures, less red_SP P1
    assert "red_SP P1: holds_under_condition" in by["C2a"].note
    assert by["C4a"].value == pytest.approx(0.8 - 0.4)  # baselines (B_SP 0.9) are not candidates
    assert by["C4b"].value == pytest.approx(0.7 - 0.3)
    assert by["C5"].value == pytest.approx(0.5 - 0.1)
    assert by["C6a"].value == pytest.approx(-0.1 + 0.02) and by["C6b"].value == pytest.approx(-0.05 + 0.01)
    assert ("red_SP", "P1") in CONDITIONAL_AXIOMS


def _set(frame: pd.DataFrame, mask, column: str, value) -> None:
    frame.loc[mask, column] = value


def _break_c1a(t):
    _set(t["dpi"], t["dpi"].index < 3, "holds_sp", False)


def _break_c1b(t):
    _set(t["dpi"], t["dpi"].index >= 37, "holds_eo", False)


def _break_c2a_baseline(t):
    ax = t["axioms"]
    _set(ax, (ax["measure"] == "B_SP") & (ax["property"] == "P2"), "outcome", "pass")


def _break_c2a_relevance(t):
    ax = t["axioms"]
    _set(ax, (ax["measure"] == "prod_SP") & (ax["property"] == "P2"), "outcome", "holds_under_condition")


def _break_c2b(t):
    ax = t["axioms"]
    _set(ax, (ax["measure"] == "uniA_EO") & (ax["property"] == "Q1"), "outcome", "fail")


def _break_c2c(t):
    ax = t["axioms"]
    _set(ax, (ax["measure"] == "bayes_EO") & (ax["property"] == "W"), "outcome", "fail")


def _break_c3a(t):
    _set(t["redundancy"], t["redundancy"]["measure"] == "bayes_SP", "asym", 0.01)


def _break_c3b(t):
    _set(t["redundancy"], t["redundancy"]["measure"] == "B_SP", "rel_err", 0.15)


def _break_c3c(t):
    t["redundancy"] = t["redundancy"][t["redundancy"]["measure"] != "B_EO"]


def _break_c4a(t):
    v = t["validation"]
    _set(v, (v["measure"] == "bayes_EO") & (v["gap"] == "sp_gap"), "spearman", 0.85)


def _break_c4b(t):
    v = t["validation"]
    _set(v, (v["measure"] == "prod_SP") & (v["gap"] == "eo_gap"), "spearman", 0.75)


def _break_c5(t):
    v = t["validation_nonpredictive"]
    _set(v, v["measure"] == "B_SP", "spearman", 0.6)


def _break_c6a(t):
    s = t["selection"]
    _set(s, (s["ranking"] == "shapley_bayes_SP") & (s["k"] == 1), "delta_sp_gap", 0.0)


def _break_c6b(t):
    r = t["random_removal"]
    _set(r, r["k"] == 1, "delta_eo_gap", -0.2)


@pytest.mark.parametrize("claim_id, breaker", [
    ("C1a", _break_c1a), ("C1b", _break_c1b), ("C2a", _break_c2a_baseline), ("C2a", _break_c2a_relevance),
    ("C2b", _break_c2b), ("C2c", _break_c2c), ("C3a", _break_c3a), ("C3b", _break_c3b), ("C3c", _break_c3c),
    ("C4a", _break_c4a), ("C4b", _break_c4b), ("C5", _break_c5), ("C6a", _break_c6a), ("C6b", _break_c6b),
])
def test_breaking_one_input_fails_exactly_that_claim(claim_id, breaker):
    inputs = _good_inputs()
    breaker(inputs)
    failed = [c.claim_id for c in check_claims(**inputs) if not c.holds]
    assert failed == [claim_id]


def test_failures_are_named_in_the_notes():
    inputs = _good_inputs()
    _break_c2b(inputs)
    _break_c1a(inputs)
    by = _by_id(inputs)
    assert "uniA_EO Q1: fail (expected pass)" in by["C2b"].note
    assert "predictive_proxy" in by["C1a"].note and "pp_s0/x1 +0.0500" in by["C1a"].note


def test_zero_original_credit_fails_the_split_claim():
    inputs = _good_inputs()
    _set(inputs["redundancy"], inputs["redundancy"]["measure"] == "B_SP", "phi_orig", 0.0)
    _set(inputs["redundancy"], inputs["redundancy"]["measure"] == "B_SP", "rel_err", np.nan)
    by = _by_id(inputs)
    assert not by["C3a"].holds and not by["C3b"].holds  # NaN never holds


def test_c5_is_informative_without_nonpredictive_datasets():
    inputs = _good_inputs()
    inputs["scenario_of"] = {d: s for d, s in SCENARIO_OF.items() if s != "nonpredictive_proxy"}
    inputs["validation_nonpredictive"] = None
    claim = _by_id(inputs)["C5"]
    assert claim.kind == "info" and "not testable" in claim.statement and not claim.holds


def test_c6_needs_the_random_expectation_of_every_dataset():
    inputs = _good_inputs()
    inputs["random_removal"] = inputs["random_removal"][inputs["random_removal"]["dataset"] != "adult"]
    with pytest.raises(ValueError, match=r"no expected random removal \(k=1\) for dataset\(s\) \['adult'\]"):
        check_claims(**inputs)


def test_c6_reads_one_expected_random_removal_row_per_dataset():
    inputs = _good_inputs()
    inputs["random_removal"] = inputs["random_removal"].query("k == 1").drop(columns="k")
    assert _by_id(inputs)["C6a"].value == pytest.approx(-0.1 + 0.02)
