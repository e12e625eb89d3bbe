"""Paper 06 analysis tables: the join of coalition values and true bias on player sets, rank correlations and their
bootstrap, the data-processing table, the feature-selection experiment read off the true-bias table, rankings from
Shapley tables, and the Shapley split between a player and its exact copy."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from neurips26.fairness_audit.coalitions import coalition_values, shapley_table
from neurips26.fairness_audit.measure_validation import (
    VALIDATION_COLUMNS,
    coalition_lookup,
    dpi_table,
    expected_random_removal,
    measure_pairs,
    random_removal_table,
    rankings_from_shapley,
    rankings_from_singletons,
    redundancy_check,
    selection_from_true_bias,
    spearman_bootstrap,
    validation_table,
)

PLAYERS = ("x1", "x2", "x10")  # player order; the true-bias keys sort them: "x10+x2" is "x2+x10" here


def _coalitions(dataset: str, values: dict[str, dict[tuple[str, ...], float]], estimator: str = "ce"):
    """A coalitions table in player order, with the registry's notion and family of each measure."""
    notion = {
        "B_SP": ("SP", "baseline"),
        "bayes_SP": ("SP", "ours-assumed"),
        "B_EO": ("EO", "baseline"),
        "bayes_EO": ("EO", "ours-assumed"),
        "uniY": ("none", "pid"),
    }
    rows = []
    for measure, by_set in values.items():
        for players, value in by_set.items():
            ordered = "+".join(p for p in PLAYERS if p in players)
            rows.append((dataset, estimator, measure, *notion[measure], ordered, value))
    return pd.DataFrame(rows, columns=["dataset", "estimator", "measure", "notion", "family", "players", "value"])


def _true_bias(dataset: str, rows: dict[str, tuple[float, float, float]], se: float = 0.01):
    """Rows keyed by coalition_key (sorted names): (accuracy, sp_gap, eo_gap); informations equal the gaps."""
    out = [
        {
            "dataset": dataset,
            "coalition": key,
            "size": len(key.split("+")) if key else 0,
            "seed": 0,
            "accuracy": acc,
            "sp_gap": sp,
            "eo_gap": eo,
            "i_yhat_a": sp,
            "i_yhat_a_given_y": eo,
            "i_yhat_a_se": se,
            "i_yhat_a_given_y_se": se,
        }
        for key, (acc, sp, eo) in rows.items()
    ]
    return pd.DataFrame(out)


SETS = [("x1", "x2", "x10"), ("x2", "x10"), ("x1", "x10"), ("x1", "x2"), ("x1",), ("x2",), ("x10",), ()]
KEYS = ["x1+x10+x2", "x10+x2", "x1+x10", "x1+x2", "x1", "x2", "x10", ""]
SP_GAPS = [0.30, 0.05, 0.25, 0.28, 0.20, 0.02, 0.01, 0.0]
EO_GAPS = [0.10, 0.09, 0.02, 0.08, 0.01, 0.07, 0.03, 0.0]
ACCURACY = [0.80, 0.70, 0.75, 0.78, 0.70, 0.60, 0.55, 0.50]


@pytest.fixture(scope="module")
def tables():
    """Two datasets; bayes_SP ranks the sets exactly as the SP gap, bayes_EO as the EO gap, B_SP is constant."""
    coalitions, true_bias = [], []
    for dataset, shift in (("d1", 0.0), ("d2", 0.01)):
        values = {
            "bayes_SP": {s: g + shift for s, g in zip(SETS, SP_GAPS)},
            "bayes_EO": {s: 2 * g for s, g in zip(SETS, EO_GAPS)},
            "B_SP": {s: 0.5 if s else 0.0 for s in SETS},
            "B_EO": {s: g + 0.05 for s, g in zip(SETS, EO_GAPS)},
            "uniY": {s: 1.0 for s in SETS},
        }
        coalitions.append(_coalitions(dataset, values))
        gaps = [(acc, sp + shift, eo) for acc, sp, eo in zip(ACCURACY, SP_GAPS, EO_GAPS)]
        true_bias.append(_true_bias(dataset, dict(zip(KEYS, gaps))))
    return pd.concat(coalitions, ignore_index=True), pd.concat(true_bias, ignore_index=True)


def test_lookup_keys_player_sets_whatever_the_spelling(tables):
    coalitions, true_bias = tables
    lookup = coalition_lookup(coalitions)
    assert lookup[("d1", "ce", "bayes_SP", frozenset({"x2", "x10"}))] == pytest.approx(0.05)
    assert lookup[("d1", "ce", "bayes_SP", frozenset())] == 0.0
    pairs = measure_pairs(coalitions, true_bias, "bayes_SP", "ce", datasets=["d1"])
    assert pairs["coalition"].tolist() == KEYS[:-1]  # the empty coalition is not a pair
    np.testing.assert_allclose(pairs["mu"], pairs["sp_gap"])  # "x10+x2" found as players "x2+x10"
    with pytest.raises(ValueError, match=r"coalition 'x1' twice"):
        coalition_lookup(pd.concat([coalitions, coalitions.iloc[[4]]]))


def test_validation_table_matches_scipy_and_flags_alignment(tables):
    coalitions, true_bias = tables
    table = validation_table(coalitions, true_bias, n_boot=200, seed=0)
    assert list(table.columns) == list(VALIDATION_COLUMNS)
    assert set(table["measure"]) == {"bayes_SP", "bayes_EO", "B_SP", "B_EO"}  # notion "none" is left out
    by = table.set_index(["measure", "gap"])
    assert by.loc[("bayes_SP", "sp_gap"), "spearman"] == pytest.approx(1.0)
    assert by.loc[("bayes_SP", "sp_gap"), "aligned"] and not by.loc[("bayes_SP", "eo_gap"), "aligned"]
    assert by.loc[("bayes_EO", "eo_gap"), "kendall"] == pytest.approx(1.0)
    assert np.isnan(by.loc[("B_SP", "sp_gap"), "spearman"]) and np.isnan(by.loc[("B_SP", "sp_gap"), "ci_low"])
    pairs = measure_pairs(coalitions, true_bias, "bayes_EO")
    rho, tau = stats.spearmanr(pairs["mu"], pairs["sp_gap"]), stats.kendalltau(pairs["mu"], pairs["sp_gap"])
    assert by.loc[("bayes_EO", "sp_gap"), "spearman"] == pytest.approx(rho.statistic)
    assert by.loc[("bayes_EO", "sp_gap"), "kendall"] == pytest.approx(tau.statistic)
    row = by.loc[("bayes_EO", "sp_gap")]
    assert row["n_pairs"] == 14 and -1 <= row["ci_low"] <= row["spearman"] <= row["ci_high"] <= 1
    only_d1 = validation_table(coalitions, true_bias, n_boot=10, datasets=["d1"])
    assert (only_d1["n_pairs"] == 7).all()
    missing = coalitions[~((coalitions["dataset"] == "d2") & (coalitions["players"] == "x2+x10"))]
    with pytest.raises(ValueError, match=r"no bayes_SP value \(ce estimator\) for dataset 'd2', coalition 'x10\+x2'"):
        validation_table(missing, true_bias, n_boot=10)


def test_spearman_bootstrap_equals_ranking_each_resample():
    rng = np.random.default_rng(0)
    x = rng.integers(0, 5, 30).astype(float)  # ties, as resamples have
    y = x + rng.normal(size=30)
    low, high = spearman_bootstrap(x, y, n_boot=300, seed=7)
    index = np.random.default_rng(7).integers(0, 30, size=(300, 30))
    rhos = [stats.spearmanr(x[i], y[i]).statistic for i in index if np.ptp(x[i]) > 0]
    assert (low, high) == pytest.approx(tuple(np.percentile(rhos, [2.5, 97.5])))
    assert np.isnan(spearman_bootstrap(x[:2], y[:2])).all()
    assert np.isnan(spearman_bootstrap(np.ones(10), y[:10])).all()


def test_dpi_table_bounds_with_two_standard_errors(tables):
    coalitions, true_bias = tables
    bias = true_bias.copy()
    bias.loc[(bias["dataset"] == "d1") & (bias["coalition"] == "x1"), "i_yhat_a_given_y"] = 0.01 + 0.05 + 0.019
    bias.loc[(bias["dataset"] == "d2") & (bias["coalition"] == "x1"), "i_yhat_a_given_y"] = 0.01 + 0.05 + 0.021
    bias.loc[bias["coalition"] == "x2", "i_yhat_a"] = 0.6
    table = dpi_table(coalitions, bias, "ce")
    assert len(table) == len(bias) and (table["estimator"] == "ce").all()
    by = table.set_index(["dataset", "coalition"])
    assert by.loc[("d1", "x1"), "B_EO"] == pytest.approx(0.06) and by.loc[("d1", "x1"), "holds_eo"]
    assert not by.loc[("d2", "x1"), "holds_eo"]  # 0.021 above the bound: more than 2 SE
    assert not by.loc[("d1", "x2"), "holds_sp"] and by.loc[("d1", "x2"), "excess_sp"] == pytest.approx(0.1)
    assert by.loc[("d1", ""), "holds_sp"] and by.loc[("d1", ""), "size"] == 0
    assert table["holds_sp"].sum() == len(table) - 2
    with pytest.raises(ValueError, match=r"lacks column\(s\) \['i_yhat_a_se'"):
        dpi_table(coalitions, bias.drop(columns="i_yhat_a_se"))


def test_selection_read_off_the_true_bias_table(tables):
    _, true_bias = tables
    rankings = {"d1": {"proxy_first": ["x1", "x10", "x2"], "noise_first": ["x10", "x2", "x1"]}}
    table = selection_from_true_bias(true_bias, rankings, k_max=2)
    by = table.set_index(["ranking", "k"])
    assert len(table) == 6 and (table["dataset"] == "d1").all()
    assert by.loc[("proxy_first", 0), "sp_gap"] == 0.30 and by.loc[("proxy_first", 0), "delta_sp_gap"] == 0
    assert by.loc[("proxy_first", 1), "removed"] == "x1"
    assert by.loc[("proxy_first", 1), "delta_sp_gap"] == pytest.approx(0.05 - 0.30)  # left with {x2, x10}
    assert by.loc[("proxy_first", 2), "removed"] == "x1+x10"
    assert by.loc[("proxy_first", 2), "delta_accuracy"] == pytest.approx(0.60 - 0.80)  # left with {x2}
    assert by.loc[("noise_first", 1), "delta_eo_gap"] == pytest.approx(0.08 - 0.10)
    no_pairs = true_bias[~true_bias["coalition"].isin(["x2"])]
    with pytest.raises(ValueError, match=r"dataset 'd1': coalition 'x2' is not in the true-bias table"):
        selection_from_true_bias(no_pairs, rankings, k_max=2)
    with pytest.raises(ValueError, match=r"unknown: \['x7'\]"):
        selection_from_true_bias(true_bias, {"d1": {"bad": ["x7"]}}, k_max=1)
    with pytest.raises(ValueError, match=r"'d9' is not in the true-bias table"):
        selection_from_true_bias(true_bias, {"d9": {"r": ["x1"]}}, k_max=1)


def test_expected_random_removal_is_the_mean_over_all_subsets(tables):
    _, true_bias = tables
    one = expected_random_removal(true_bias, "d1", k=1)
    assert one["n_subsets"] == 3
    assert one["delta_sp_gap"] == pytest.approx(np.mean([0.05, 0.25, 0.28]) - 0.30)
    assert one["accuracy"] == pytest.approx(np.mean([0.70, 0.75, 0.78]))
    two = expected_random_removal(true_bias, "d1", k=2)
    assert two["delta_eo_gap"] == pytest.approx(np.mean([0.01, 0.07, 0.03]) - 0.10)
    assert expected_random_removal(true_bias, "d1", k=3)["sp_gap"] == 0.0
    table = random_removal_table(true_bias, k_max=1)
    assert table[["dataset", "k", "n_subsets"]].values.tolist() == [
        ["d1", 0, 1],
        ["d1", 1, 3],
        ["d2", 0, 1],
        ["d2", 1, 3],
    ]
    with pytest.raises(ValueError, match=r"coalition 'x1' is not in the true-bias table"):
        expected_random_removal(true_bias[true_bias["coalition"] != "x1"], "d1", k=2)
    with pytest.raises(ValueError, match=r"several seeds"):
        expected_random_removal(pd.concat([true_bias, true_bias]), "d1")


def test_rankings_from_shapley_and_singletons():
    shapley = pd.DataFrame(
        {
            "dataset": ["d1"] * 6 + ["d2"] * 3,
            "estimator": "ce",
            "measure": ["bayes_SP"] * 3 + ["B_SP"] * 3 + ["bayes_SP"] * 3,
            "player": ["x1", "x2", "x3"] * 3,
            "phi": [0.1, 0.3, 0.1, 0.2, 0.0, 0.5, 0.0, 0.0, 0.2],
            "singleton": [0.4, 0.1, 0.2, 0.1, 0.3, 0.2, 0.1, 0.3, 0.2],
        }
    )
    assert rankings_from_shapley(shapley[shapley["dataset"] == "d1"], ["bayes_SP", "B_SP"]) == {
        "d1": {"shapley_bayes_SP": ["x2", "x1", "x3"], "shapley_B_SP": ["x3", "x1", "x2"]}
    }
    assert rankings_from_singletons(shapley, ["bayes_SP"]) == {
        "d1": {"marginal_bayes_SP": ["x1", "x3", "x2"]},
        "d2": {"marginal_bayes_SP": ["x2", "x3", "x1"]},
    }
    with pytest.raises(ValueError, match=r"dataset 'd2': measure 'B_SP' is not in the Shapley table"):
        rankings_from_shapley(shapley, ["B_SP"])
    mixed = shapley.assign(estimator=["ce"] * 8 + ["plugin"])
    with pytest.raises(ValueError, match=r"mixes estimators"):
        rankings_from_shapley(mixed, ["bayes_SP"])


@pytest.fixture(scope="module")
def small_sample():
    rng = np.random.default_rng(3)
    n = 800
    a = rng.integers(0, 2, n)
    x = rng.normal(size=(n, 2)) + np.outer(a, [1.0, 0.0])
    y = (x[:, 0] + x[:, 1] + rng.normal(size=n) > 0.5).astype(int)
    return x, a, y


def test_a_lone_player_and_its_copy_split_its_value_exactly(small_sample):
    x, a, y = small_sample
    table = redundancy_check([x[:, 0]], a, y, 0, ["B_SP", "B_EO"], "plugin").set_index("measure")
    assert (table["player"] == "x1").all() and (table["estimator"] == "plugin").all()
    assert table.loc["B_SP", "phi_orig"] > 0.05
    np.testing.assert_allclose(table["phi_i"], table["phi_orig"] / 2, atol=1e-12)
    np.testing.assert_allclose(table[["rel_err", "asym"]], 0, atol=1e-10)


def test_copy_of_a_player_in_a_larger_game(small_sample):
    x, a, y = small_sample
    blocks = [x[:, 0], x[:, 1]]
    table = redundancy_check(blocks, a, y, 0, ["B_SP", "prod_SP"], "plugin").set_index("measure")
    original = shapley_table(coalition_values(blocks, a, y, ["B_SP", "prod_SP"], "plugin"))
    assert table.loc["B_SP", "phi_orig"] == pytest.approx(original.query("measure == 'B_SP'")["phi"].iat[0])
    np.testing.assert_allclose(table["asym"], 0, atol=1e-12)  # same encoding, same seed: identical values
    expected = abs(table["phi_i"] + table["phi_copy"] - table["phi_orig"]) / table["phi_orig"].abs()
    np.testing.assert_allclose(table["rel_err"], expected)
    assert table.loc["B_SP", "rel_err"] < 0.1
    with pytest.raises(ValueError, match=r"player must index one of the 2 blocks"):
        redundancy_check(blocks, a, y, 2, ["B_SP"])
