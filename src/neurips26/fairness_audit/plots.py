"""Figures of paper 06 (matplotlib): each measure against the true gap of its notion, the
Shapley attributions per dataset, the axiom table as a coloured grid, and the feature-selection curves."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
from matplotlib.ticker import MaxNLocator  # noqa: E402
from scipy import stats  # noqa: E402

from .axioms import axiom_summary  # noqa: E402
from .measure_validation import GAPS, measure_pairs  # noqa: E402

__all__ = ["axiom_figure", "measure_vs_true_bias", "selection_curves", "shapley_bars"]

GAP_OF = {notion: gap for gap, notion in GAPS.items()}  # SP -> sp_gap, EO -> eo_gap
OUTCOME_COLOURS = {"pass": "#a6dba0", "fail": "#f4a582", "holds_under_condition": "#fee08b"}
PROPERTY_ORDER = ("P1", "P2", "U_SP", "Q1", "Q2", "W")


def measure_vs_true_bias(
    coalitions: pd.DataFrame,
    true_bias: pd.DataFrame,
    measures_by_notion: Mapping[str, Sequence[str]],
    estimator: str = "ce",
):
    """One panel per notion: ``mu(S)`` (scaled by the measure's largest value, so the measures share an axis)
    against the true gap of that notion over the (dataset, S) pairs, one colour per measure, Spearman's rho in
    the legend."""
    notions = list(measures_by_notion)
    fig, axes = plt.subplots(1, len(notions), figsize=(5.5 * len(notions), 4.5), squeeze=False)
    for ax, notion in zip(axes[0], notions):
        gap = GAP_OF[notion]
        for measure in measures_by_notion[notion]:
            pairs = measure_pairs(coalitions, true_bias, measure, estimator)
            top = pairs["mu"].max()
            scaled = pairs["mu"] / top if top > 0 else pairs["mu"]
            rho = (
                stats.spearmanr(pairs["mu"], pairs[gap]).statistic
                if len(pairs) > 1 and np.ptp(pairs["mu"]) > 0 and np.ptp(pairs[gap]) > 0
                else np.nan
            )
            ax.scatter(scaled, pairs[gap], s=14, alpha=0.6, label=f"{measure} (rho {rho:.2f})")
        ax.set(
            xlabel="mu(S) / max mu",
            ylabel=f"true {gap} of the tuned MLP",
            title=f"{notion}-aligned measures vs true {notion} gap ({estimator})",
        )
        ax.legend(fontsize=7)
    fig.tight_layout()
    return fig


def shapley_bars(shapley: pd.DataFrame, datasets: Sequence[str], measures: Sequence[str], ncols: int = 3):
    """A grid of small panels, one per dataset: the Shapley value of each player, one bar per measure."""
    datasets = list(datasets)
    nrows = max(1, math.ceil(len(datasets) / ncols))
    ncols = min(ncols, max(len(datasets), 1))
    fig, axes = plt.subplots(nrows, ncols, figsize=(3.6 * ncols, 2.8 * nrows), squeeze=False)
    width = 0.8 / max(len(measures), 1)
    for ax, dataset in zip(axes.ravel(), datasets):
        rows = shapley[shapley["dataset"] == dataset]
        players = list(dict.fromkeys(rows.sort_values("index")["player"]))
        positions = np.arange(len(players))
        for j, measure in enumerate(measures):
            phi = rows[rows["measure"] == measure].set_index("player")["phi"].reindex(players)
            ax.bar(positions + (j - (len(measures) - 1) / 2) * width, phi.to_numpy(), width, label=measure)
        ax.axhline(0, color="black", lw=0.6)
        ax.set_xticks(positions, players, fontsize=7)
        ax.set_title(dataset, fontsize=8)
        ax.tick_params(axis="y", labelsize=7)
    for ax in axes.ravel()[len(datasets) :]:
        fig.delaxes(ax)
    if datasets:
        axes[0, 0].set_ylabel("phi (nats)")
        axes[0, 0].legend(fontsize=6)
    fig.tight_layout()
    return fig


def axiom_figure(axioms: pd.DataFrame):
    """The axiom table as a grid (measures x properties): green pass, red fail, yellow holds under condition, grey
    not applicable; each cell shows the outcome and the instance values."""
    outcomes = axiom_summary(axioms)
    measures = list(dict.fromkeys(outcomes["measure"]))
    present = set(outcomes["property"])
    properties = [p for p in PROPERTY_ORDER if p in present] + sorted(present - set(PROPERTY_ORDER))
    cells = outcomes.set_index(["measure", "property"])
    fig, ax = plt.subplots(figsize=(2.3 * len(properties) + 1.5, 0.55 * len(measures) + 1.2))
    for i, measure in enumerate(measures):
        for j, prop in enumerate(properties):
            if (measure, prop) in cells.index:
                outcome, values = cells.loc[(measure, prop), ["outcome", "values"]]
                colour = OUTCOME_COLOURS.get(outcome, "white")
                text = f"{outcome.replace('holds_under_condition', 'conditional')}\n{values.replace(', ', chr(10))}"
            else:
                colour, text = "#e0e0e0", "n/a"
            ax.add_patch(plt.Rectangle((j, i), 1, 1, facecolor=colour, edgecolor="white"))
            ax.text(j + 0.5, i + 0.5, text, ha="center", va="center", fontsize=5.5)
    ax.set_xlim(0, len(properties))
    ax.set_ylim(len(measures), 0)
    ax.set_xticks(np.arange(len(properties)) + 0.5, properties)
    ax.set_yticks(np.arange(len(measures)) + 0.5, measures)
    ax.xaxis.tick_top()
    ax.tick_params(length=0)
    for side in ax.spines.values():
        side.set_visible(False)
    ax.set_title("Axiom table: outcome and measured values (nats) per instance", fontsize=9, pad=20)
    fig.tight_layout()
    return fig


def selection_curves(selection: pd.DataFrame, random_expectation: pd.DataFrame):
    """One panel per notion: the change of the true gap against the number k of removed players, averaged over
    datasets, one line per ranking; the exact expectation of random removal dashed (``random_expectation``: a
    :func:`~.measure_validation.random_removal_table`, or expected_random_removal rows of k = 1 without a ``k``
    column)."""
    if "k" not in random_expectation:
        random_expectation = random_expectation.assign(k=1)
    fig, axes = plt.subplots(1, 2, figsize=(11, 4), squeeze=False)
    for ax, (gap, notion) in zip(axes[0], GAPS.items()):
        curves = selection.groupby(["ranking", "k"])[f"delta_{gap}"].mean().unstack(0)
        for ranking in curves.columns:
            ax.plot(curves.index, curves[ranking], marker="o", ms=4, label=ranking)
        if not random_expectation.empty:
            random = random_expectation.groupby("k")[f"delta_{gap}"].mean()
            random = pd.concat([pd.Series({0: 0.0}), random[random.index > 0]])  # removing nothing changes nothing
            ax.plot(random.index, random.to_numpy(), "--", color="black", label="random (exact expectation)")
        ax.axhline(0, color="grey", lw=0.6)
        ax.set(
            xlabel="k players removed",
            ylabel=f"delta {gap} vs full set (mean over datasets)",
            title=f"Feature selection, {notion} gap",
        )
        ax.xaxis.set_major_locator(MaxNLocator(integer=True))
        ax.legend(fontsize=7)
    fig.tight_layout()
    return fig
