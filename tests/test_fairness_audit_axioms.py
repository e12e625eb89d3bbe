"""Paper 06: the axiom table (claim C2): its instances make their premises true, its outcomes come from the
measured values against the stated thresholds, and the baselines and relevance-aware measures behave as claimed."""

from __future__ import annotations

import numpy as np
import pytest

from neurips26.fairness_audit.axioms import (
    INSTANCES,
    OUTCOMES,
    PROPERTIES,
    axiom_summary,
    axiom_table,
    sample_instance,
)


@pytest.fixture(scope="module", params=["ce", "plugin"])
def table(request):
    return axiom_table(estimator=request.param, n=6000, seed=0)


def outcome(table, measure, prop):
    rows = table[(table["measure"] == measure) & (table["property"] == prop)]
    assert len(rows), (measure, prop)
    return rows["outcome"].iat[0]


def test_claim_c2_baselines_fail_relevance_and_relevance_aware_measures_pass(table):
    assert outcome(table, "B_SP", "P2") == "fail" and outcome(table, "B_EO", "Q2") == "fail"
    for measure in ("bayes_SP", "rbayes_SP", "prod_SP"):
        assert outcome(table, measure, "P1") == "pass" and outcome(table, measure, "P2") == "pass", measure
    for measure in ("B_EO", "bayes_EO", "rbayes_EO", "prod_EO", "uniA_EO"):
        assert outcome(table, measure, "Q1") == "pass", measure
    witness = table[table["property"] == "W"]
    assert (witness[witness["notion"] == "SP"]["value"] > 0.05).all()
    assert (witness[witness["notion"] == "EO"]["value"] < 0.01).all()
    assert (witness["outcome"] == "pass").all()


def test_imin_redundancy_holds_p1_only_when_a_is_irrelevant(table):
    rows = table[(table["measure"] == "red_SP") & (table["property"] == "P1")].set_index("instance")
    assert rows.loc["indep_a", "satisfied"] and not rows.loc["indep_a_collider", "satisfied"]
    summary = axiom_summary(table).set_index(["measure", "property"])
    assert summary.loc[("red_SP", "P1"), "outcome"] == "holds_under_condition"
    assert summary.loc[("red_SP", "P1"), "condition"] == INSTANCES["indep_a"].condition
    assert summary.loc[("red_SP", "P1"), "satisfied"] == "1/2"


def test_table_shape_and_outcome_aggregation(table):
    assert set(table["outcome"]) <= set(OUTCOMES)
    assert "uniY" not in set(table["measure"]) and "synY" not in set(table["measure"])  # notion "none"
    n_rows = sum(len(p.instances) * (table[table["notion"] == p.notion]["measure"].nunique()) for p in PROPERTIES)
    assert len(table) == n_rows
    for (_, _), group in table.groupby(["measure", "property"]):
        share = group["satisfied"].mean()
        expected = "pass" if share == 1 else "fail" if share == 0 else "holds_under_condition"
        assert (group["outcome"] == expected).all()
    zero_rows = table[table["kind"] == "desired"]
    assert (zero_rows["criterion"] == "value <= 0.01").all()
    assert (zero_rows["satisfied"] == (zero_rows["value"] <= 0.01)).all()


def test_outcomes_move_with_the_threshold_not_with_the_measure():
    strict = axiom_table(["B_SP"], "plugin", n=2000, seed=1)
    lax = axiom_table(["B_SP"], "plugin", n=2000, seed=1, tol=10.0)
    assert outcome(strict, "B_SP", "P2") == "fail" and outcome(lax, "B_SP", "P2") == "pass"
    assert outcome(lax, "B_SP", "U_SP") == "fail"  # nothing exceeds 10 nats
    np.testing.assert_array_equal(strict["value"], lax["value"])


def test_instances_make_their_premises_true():
    n = 200_000
    x, a, y = sample_instance("indep_a_collider", n, seed=0)
    assert abs(np.corrcoef(x[:, 0], a)[0, 1]) < 0.01 and np.corrcoef(a, y)[0, 1] > 0.2
    x, a, y = sample_instance("indep_y", n, seed=0)
    assert abs(np.corrcoef(x[:, 0], y)[0, 1]) < 0.01 and np.corrcoef(x[:, 0], a)[0, 1] > 0.3
    x, a, y = sample_instance("indep_y_cancel", n, seed=0)
    b = np.round(x[:, 0]).clip(0, 1)
    assert abs(b[y == 1].mean() - b[y == 0].mean()) < 0.01 and abs(b[a == 1].mean() - b[a == 0].mean()) > 0.3
    for name in ("eo_leak", "eo_leak_spread"):
        x, a, y = sample_instance(name, n, seed=0)
        for stratum in (0, 1):
            rows = y == stratum
            gap = x[rows & (a == 1)].mean(axis=0) - x[rows & (a == 0)].mean(axis=0)
            assert np.abs(gap).max() < 0.03, (name, stratum, gap)
        assert abs(x[a == 1, 0].mean() - x[a == 0, 0].mean()) > 0.2
    x, a, y = sample_instance("witness", 1000, seed=0)
    np.testing.assert_array_equal(x[:, 0], y)


def test_bad_requests_are_refused():
    with pytest.raises(ValueError, match="unknown axiom instance 'nope'"):
        sample_instance("nope", 1000)
    with pytest.raises(ValueError, match="n >= 100 rows, got 10"):
        sample_instance("witness", 10)
    with pytest.raises(ValueError, match="unknown measure"):
        axiom_table(["khod"])
