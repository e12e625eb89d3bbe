"""Paper 06: the report's tables (validation pivot, aligned rows, DPI summary, first removal) and the pipeline
helpers moved out of the scripts (selection rankings, the data-set dispatch)."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest

from neurips26.fairness_audit.attribution import selection_rankings
from neurips26.fairness_audit.experiment import make_dataset
from neurips26.fairness_audit.summary import aligned_intervals, dpi_summary, first_removal, validation_pivot


def validation_rows() -> pd.DataFrame:
    rows = []
    for measure, notion in (("B_SP", "SP"), ("B_EO", "EO")):
        for gap, aligned in (("sp_gap", notion == "SP"), ("eo_gap", notion == "EO")):
            rows.append(
                {
                    "estimator": "ce",
                    "measure": measure,
                    "notion": notion,
                    "family": "baseline",
                    "gap": gap,
                    "aligned": aligned,
                    "spearman": 0.5 if aligned else 0.1,
                    "ci_low": 0.4,
                    "ci_high": 0.6,
                    "n_pairs": 12,
                }
            )
    return pd.DataFrame(rows)


def test_validation_pivot_has_one_spearman_column_per_gap():
    pivot = validation_pivot(validation_rows())
    assert list(pivot.columns) == ["estimator", "measure", "notion", "family", "eo_gap", "sp_gap"]
    assert pivot.set_index("measure").loc["B_SP", "sp_gap"] == 0.5
    assert pivot.set_index("measure").loc["B_SP", "eo_gap"] == 0.1


def test_aligned_intervals_keep_only_the_measure_of_the_gaps_notion():
    aligned = aligned_intervals(validation_rows())
    assert sorted(zip(aligned["measure"], aligned["gap"])) == [("B_EO", "eo_gap"), ("B_SP", "sp_gap")]
    assert list(aligned.columns) == ["estimator", "measure", "gap", "spearman", "ci_low", "ci_high", "n_pairs"]


def test_dpi_summary_counts_shares_and_largest_excess():
    dpi = pd.DataFrame(
        {"holds_sp": [True, False], "holds_eo": [True, True], "excess_sp": [-0.1, 0.2], "excess_eo": [-0.3, -0.1]}
    )
    row = dpi_summary(dpi).iloc[0]
    assert row["predictors"] == 2
    assert row["share_sp_bound_holds"] == 0.5 and row["share_eo_bound_holds"] == 1.0
    assert row["max_excess_sp"] == 0.2 and row["max_excess_eo"] == -0.1


def test_first_removal_averages_k1_over_data_sets():
    selection = pd.DataFrame(
        {
            "ranking": ["r", "r", "r"],
            "k": [1, 1, 2],
            "delta_sp_gap": [-0.2, -0.4, -9.0],
            "delta_eo_gap": [0.0, 0.2, 9.0],
            "delta_accuracy": [0.0, -0.1, 9.0],
        }
    )
    row = first_removal(selection).iloc[0]
    assert row["ranking"] == "r"
    assert row["delta_sp_gap"] == pytest.approx(-0.3) and row["delta_eo_gap"] == pytest.approx(0.1)


def test_selection_rankings_order_players_by_shapley_and_singleton_and_add_random_orders():
    attributions = pd.DataFrame(
        {
            "measure": ["M", "M", "B_SP", "B_SP"],
            "player": ["x1", "x2", "x1", "x2"],
            "phi": [0.1, 0.3, 0.0, 0.0],
            "singleton": [0.0, 0.0, 0.5, 0.2],
        }
    )
    rankings = selection_rankings(
        attributions, ["x1", "x2"], {"measures": {"SP": "M"}, "random_rankings": 2}, ["M", "B_SP"], seed=0
    )
    assert rankings["shapley_M"] == ["x2", "x1"]
    assert rankings["marginal_B_SP"] == ["x1", "x2"]
    assert sorted(k for k in rankings if k.startswith("random_")) == ["random_0", "random_1"]
    assert all(sorted(rankings[k]) == ["x1", "x2"] for k in ("random_0", "random_1"))


def test_make_dataset_draws_an_scm_scenario_without_raw_files():
    settings = SimpleNamespace(seed=0, min_group=5, scm={"n": 400, "d": 3}, real=None)
    data, params = make_dataset("redundant_proxy_s0", settings, [])
    assert data.n == 400 and len(data.players) == 3
    assert set(np.unique(data.a)) <= {0, 1}
    assert isinstance(params, dict)
