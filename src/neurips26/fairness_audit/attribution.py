"""Shapley attributions of every measure from a coalition-value table: exact (a complete table, ``d <= 12``) or
Monte Carlo over random orders (the table holds the coalitions those orders reach, see
``experiment.coalition_masks``), with the leave-one-out and singleton baselines beside them; and the removal
orders of the feature-selection experiment read from them."""

from __future__ import annotations

import numpy as np
import pandas as pd

from .coalitions import shapley_table
from .shapley import monte_carlo_shapley

__all__ = ["attribution_table", "ranking", "selection_rankings"]


def attribution_table(
    frame: pd.DataFrame, players: list[str], method: str, permutations: int, seed: int
) -> pd.DataFrame:
    """One row per (measure, player): ``phi`` (and its Monte Carlo standard error ``phi_se``, 0 when exact),
    ``loo`` (mu(all) - mu(all without i)) and ``singleton`` (mu({i}) - mu(empty))."""
    d = len(players)
    if method == "exact":
        frame = frame.copy()
        frame.attrs.update(n_players=d, players=list(players))
        return shapley_table(frame, players).assign(phi_se=0.0)
    if method != "monte_carlo":
        raise ValueError(f"unknown Shapley method {method!r}, expected 'exact' or 'monte_carlo'")
    full, rows = (1 << d) - 1, []
    for measure, group in frame.groupby("measure", sort=False):
        values = dict(zip(group["mask"].astype(int), group["value"].astype(float)))
        estimate = monte_carlo_shapley(values, d, permutations, seed)
        for i, player in enumerate(players):
            rows.append(
                {
                    "measure": measure,
                    "player": player,
                    "phi": float(estimate.phi[i]),
                    "phi_se": float(estimate.se[i]),
                    "loo": values[full] - values[full ^ (1 << i)],
                    "singleton": values[1 << i] - values[0],
                }
            )
    return pd.DataFrame(rows)


def ranking(attributions: pd.DataFrame, measure: str, column: str = "phi") -> list[str]:
    """Players by decreasing ``column`` of ``measure`` (ties by name)."""
    sel = attributions[attributions["measure"] == measure]
    if sel.empty:
        raise ValueError(f"no attributions of measure {measure!r}")
    order = sorted(zip(-np.asarray(sel[column], float), sel["player"]))
    return [player for _, player in order]


def selection_rankings(
    attributions: pd.DataFrame, players: list[str], selection: dict, measures: list[str], seed: int
) -> dict[str, list[str]]:
    """The removal orders of the feature-selection experiment: ``shapley_<measure>`` for the aligned measure of each
    notion (``selection["measures"]``, ``{notion: measure}``), ``marginal_B_SP`` / ``marginal_B_EO`` (the
    baseline's singleton values ``I(X_i; A)`` or ``I(X_i; A | Y)`` alone) when that baseline is measured, and
    ``selection["random_rankings"]`` uniformly random orders ``random_{i}``."""
    from .selection import random_rankings

    rankings = {}
    for notion, measure in selection["measures"].items():
        rankings[f"shapley_{measure}"] = ranking(attributions, measure)
        baseline = {"SP": "B_SP", "EO": "B_EO"}[notion]
        if baseline in measures:
            rankings[f"marginal_{baseline}"] = ranking(attributions, baseline, "singleton")
    for i, order in enumerate(random_rankings(players, selection["random_rankings"], seed)):
        rankings[f"random_{i}"] = list(order)
    return rankings
