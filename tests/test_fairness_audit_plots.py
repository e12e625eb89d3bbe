"""Paper 06 figures: each function returns a Figure with the expected panels on tiny inputs."""

from __future__ import annotations

import matplotlib.pyplot as plt
import pandas as pd
import pytest
from matplotlib.figure import Figure

from neurips26.fairness_audit.plots import axiom_figure, measure_vs_true_bias, selection_curves, shapley_bars

SETS = {"x1+x2": (0.3, 0.2), "x1": (0.25, 0.1), "x2": (0.05, 0.15), "": (0.0, 0.0)}


@pytest.fixture(autouse=True)
def close_figures():
    yield
    plt.close("all")


def test_measure_vs_true_bias_has_one_panel_per_notion():
    coalitions = pd.DataFrame(
        [
            dict(dataset="d1", estimator="ce", measure=m, notion=m[-2:], family="x", players=key, value=value * (1 + i))
            for key, (value, _) in SETS.items()
            for i, m in enumerate(["B_SP", "B_EO"])
        ]
    )
    true_bias = pd.DataFrame(
        [dict(dataset="d1", coalition=key, sp_gap=sp, eo_gap=eo) for key, (sp, eo) in SETS.items()]
    )
    fig = measure_vs_true_bias(coalitions, true_bias, {"SP": ["B_SP"], "EO": ["B_EO"]}, "ce")
    assert isinstance(fig, Figure) and len(fig.axes) == 2
    assert "rho 1.00" in fig.axes[0].get_legend().get_texts()[0].get_text()


def test_shapley_bars_has_one_panel_per_dataset():
    shapley = pd.DataFrame(
        [
            dict(dataset=d, measure=m, player=p, index=i, phi=0.1 * (i + 1))
            for d in ("d1", "d2", "d3", "d4")
            for m in ("B_SP", "bayes_SP")
            for i, p in enumerate(["x1", "x2"])
        ]
    )
    fig = shapley_bars(shapley, ["d1", "d2", "d3", "d4"], ["B_SP", "bayes_SP"], ncols=3)
    assert isinstance(fig, Figure) and len(fig.axes) == 4  # the grid's unused fifth and sixth panels are removed


def test_axiom_figure_is_one_table():
    axioms = pd.DataFrame(
        [
            dict(
                measure=m,
                notion=n,
                family="f",
                property=p,
                kind="desired",
                premise="p",
                instance=f"i{j}",
                condition="c",
                criterion="c",
                value=0.1 * j,
                satisfied=ok,
                outcome=outcome,
            )
            for m, n, p, outcome, oks in (
                ("B_SP", "SP", "P1", "pass", [True, True]),
                ("B_SP", "SP", "P2", "fail", [False, False]),
                ("B_EO", "EO", "Q1", "holds_under_condition", [True, False]),
            )
            for j, ok in enumerate(oks)
        ]
    )
    fig = axiom_figure(axioms)
    assert isinstance(fig, Figure) and len(fig.axes) == 1
    assert [t.get_text() for t in fig.axes[0].get_xticklabels()] == ["P1", "P2", "Q1"]


def test_selection_curves_has_one_panel_per_notion():
    selection = pd.DataFrame(
        [
            dict(dataset="d1", ranking=r, k=k, delta_sp_gap=-0.1 * k, delta_eo_gap=0.02 * k)
            for r in ("shapley_B_SP", "marginal_B_SP")
            for k in (0, 1)
        ]
    )
    random = pd.DataFrame([dict(dataset="d1", k=k, delta_sp_gap=-0.03 * k, delta_eo_gap=0.0) for k in (0, 1)])
    fig = selection_curves(selection, random)
    assert isinstance(fig, Figure) and len(fig.axes) == 2
    assert len(fig.axes[0].get_lines()) == 2 + 1 + 1  # two rankings, random, the zero line
    without_k = selection_curves(selection, random[random["k"] == 1].drop(columns="k"))  # expected_random_removal rows
    assert len(without_k.axes[1].get_lines()) == 4
