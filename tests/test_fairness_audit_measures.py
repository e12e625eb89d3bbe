"""Paper 06: the measure family (registry, mu(empty) = 0, the conflict witness, the identities between measures and
their MI terms, the sharing of intermediate fits) and the coalition table built from it."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from neurips26.fairness_audit.coalitions import coalition_name, coalition_values, shapley_table, value_table
from neurips26.fairness_audit.estimators import ESTIMATORS, conditional_mutual_information, mutual_information
from neurips26.fairness_audit.measures import (
    FAMILIES,
    MEASURES,
    NOTIONS,
    measure_estimates,
    measure_values,
    measures_for_notion,
)

ESTIMATOR_NAMES = sorted(ESTIMATORS)


def proxy_data(n=1500, seed=0):
    """A ~ Bern(1/2), Y depends on A; x1 a proxy that predicts Y, x2 predicts Y only, x3 a non-predictive proxy."""
    rng = np.random.default_rng(seed)
    a = rng.integers(0, 2, n)
    y = (rng.random(n) < 0.3 + 0.4 * a).astype(int)
    x = np.stack([a + y + rng.normal(size=n), y + rng.normal(size=n), a + rng.normal(size=n)], axis=1)
    return x, a, y


def test_registry_labels_every_measure():
    assert {"B_SP", "B_EO", "bayes_SP", "bayes_EO", "prod_SP", "prod_EO", "red_SP", "redA_SP", "uniA_EO"} <= set(
        MEASURES
    )
    for name, spec in MEASURES.items():
        assert spec.name == name and spec.notion in NOTIONS and spec.family in FAMILIES and callable(spec.function)
    assert [MEASURES[m].family for m in ("B_SP", "B_EO")] == ["baseline", "baseline"]
    assert {MEASURES[m].family for m in ("bayes_SP", "bayes_EO", "rbayes_SP", "prod_SP", "prod_EO")} == {"ours-assumed"}
    assert set(measures_for_notion("EO")) == {"B_EO", "bayes_EO", "rbayes_EO", "prod_EO", "uniA_EO"}
    with pytest.raises(ValueError, match="unknown notion 'DP'"):
        measures_for_notion("DP")


@pytest.mark.parametrize("estimator", ESTIMATOR_NAMES)
def test_empty_coalition_is_zero_for_every_measure(estimator):
    _, a, y = proxy_data(400)
    values = measure_values(np.empty((400, 0)), a, y, estimator=estimator)
    assert values == {name: 0.0 for name in MEASURES}


@pytest.mark.parametrize("estimator", ESTIMATOR_NAMES)
def test_conflict_witness_separates_sp_from_eo(estimator):
    rng = np.random.default_rng(1)
    n = 4000
    a = rng.integers(0, 2, n)
    y = (rng.random(n) < 0.25 + 0.5 * a).astype(int)
    values = measure_values(y[:, None].astype(float), a, y, estimator=estimator)
    for name in measures_for_notion("SP"):
        assert values[name] > 0.05, (name, values[name])
    for name in measures_for_notion("EO"):
        assert values[name] < 0.01, (name, values[name])


def test_measures_equal_their_information_terms():
    x, a, y = proxy_data()
    for estimator in ESTIMATOR_NAMES:
        est = measure_estimates(x, a, y, estimator=estimator, seed=3)
        i_xa = mutual_information(x, a, estimator, seed=3).value
        i_xy = mutual_information(x, y, estimator, seed=3).value
        i_xa_y = conditional_mutual_information(x, a, y, estimator, seed=3).value
        h_a = -np.sum([p * np.log(p) for p in (a.mean(), 1 - a.mean())])
        assert est["B_SP"].value == pytest.approx(i_xa) and est["B_EO"].value == pytest.approx(i_xa_y)
        assert est["prod_SP"].value == pytest.approx(i_xa * i_xy / h_a)
        assert est["prod_EO"].value == pytest.approx(i_xa_y * i_xy / h_a)
        # the score is a function of X: the data-processing inequality, up to estimation error
        assert est["bayes_SP"].value <= est["B_SP"].value + 0.02
        assert est["bayes_SP"].value > 0.02  # x1 predicts Y and carries A
        assert 0 < est["rbayes_SP"].value <= est["bayes_SP"].value + 0.02
        assert 0 < est["rbayes_EO"].value <= est["B_EO"].value + 0.02
    # the PID measures use the plug-in code whatever the estimator
    pid = ["red_SP", "redA_SP", "uniA_EO", "uniY", "synY"]
    assert measure_values(x, a, y, pid, "ce") == measure_values(x, a, y, pid, "plugin")


def test_intermediate_fits_are_shared_across_measures():
    calls = {"mi": 0, "cmi": 0}
    base = ESTIMATORS["plugin"]

    def counting(kind):
        def wrapped(*args):
            calls[kind] += 1
            return getattr(base, kind)(*args)

        return wrapped

    est = dataclasses.replace(base, mi=counting("mi"), cmi=counting("cmi"))
    x, a, y = proxy_data(600)
    measure_values(x, a, y, list(MEASURES), est)
    assert calls == {"mi": 3, "cmi": 2}  # I(X;A), I(X;Y), I(s;A); I(X;A|Y), I(s;A|Y)


def test_unknown_measure_is_refused():
    x, a, y = proxy_data(200)
    with pytest.raises(ValueError, match=r"unknown measure\(s\) \['khod'\]"):
        measure_values(x, a, y, ["B_SP", "khod"])


@pytest.mark.parametrize("estimator", ESTIMATOR_NAMES)
def test_coalition_table_matches_direct_measure_values(estimator):
    x, a, y = proxy_data(800)
    blocks = [x[:, [0]], x[:, 1:]]  # players may hold several columns
    names = ["B_SP", "bayes_EO", "red_SP"]
    frame = coalition_values(blocks, a, y, names, estimator, seed=2)
    assert sorted(frame["mask"].unique()) == [0, 1, 2, 3] and len(frame) == 4 * len(names)
    assert set(frame["players"]) == {"", "x1", "x2", "x1+x2"}
    assert frame.attrs["coalitions_per_second"] > 0 and frame.attrs["n_players"] == 2
    for mask, cols in ((1, [0]), (2, [1, 2]), (3, [0, 1, 2])):
        direct = measure_values(x[:, cols], a, y, names, estimator, seed=2)
        got = frame[frame["mask"] == mask].set_index("measure")["value"]
        for name in names:
            assert got[name] == pytest.approx(direct[name], abs=1e-9), (mask, name)
    assert (frame[frame["mask"] == 0]["value"] == 0).all()
    table = shapley_table(frame)
    assert set(table["player"]) == {"x1", "x2"}
    for name in names:
        phi = table[table["measure"] == name]["phi"].sum()
        values = value_table(frame, name, 2)
        assert phi == pytest.approx(values[3] - values[0])


def test_coalition_subsets_and_bad_masks():
    x, a, y = proxy_data(300)
    blocks = [x[:, [j]] for j in range(3)]
    frame = coalition_values(blocks, a, y, ["B_SP"], "plugin", coalitions=[5, 0, 5, 7])
    assert frame["mask"].tolist() == [5, 0, 7] and frame["players"].tolist() == ["x1+x3", "", "x1+x2+x3"]
    with pytest.raises(ValueError, match="coalition mask 8 out of range"):
        coalition_values(blocks, a, y, ["B_SP"], "plugin", coalitions=[1, 8])
    with pytest.raises(ValueError, match="d=11 players"):
        coalition_values([x[:, [0]]] * 11, a, y, ["B_SP"], "plugin")
    with pytest.raises(ValueError, match=r"coalition mask 1 missing \(5 of 8 missing\)"):
        value_table(frame, "B_SP", 3)
    assert coalition_name(0b101, ["age", "sex", "zip"]) == "age+zip"
