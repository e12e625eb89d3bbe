"""Shapley attributions of every measure from a coalition-value table: exact (a complete table, ``d <= 12``) or
Monte Carlo over random orders (the table holds the coalitions those orders reach, see
``experiment.coalition_masks``), with the leave-one-out and singleton baselines beside them."""

from __future__ import annotations

import numpy as np
import pandas as pd

from .coalitions import shapley_table
from .shapley import monte_carlo_shapley

__all__ = ["attribution_table"]


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
