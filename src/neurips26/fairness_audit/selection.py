"""The feature-selection experiment (the abstract's "simple feature selection experiment", claim C6): remove the top-k
players of a ranking (most attributed first), retrain the tuned predictor, and record the change in SP gap, EO gap and
accuracy against the full feature set.

All rankings of one call share one stratified split and one fit per distinct feature set (the full set is fitted
once), so rankings are compared on the same data and the same seeds. Deltas are value(k) - value(full): a negative
delta_sp_gap is a reduction of the SP gap. Removing every player leaves the constant predictor (all gaps 0).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd

from .data import AuditData, train_val_test_split
from .true_bias import DEFAULT_GRID, coalition_key, evaluate_coalition

__all__ = [
    "SELECTION_COLUMNS",
    "check_ranking",
    "rank_by_score",
    "random_rankings",
    "removal_curve",
    "selection_table",
]

SELECTION_COLUMNS = (
    "dataset",
    "ranking",
    "k",
    "removed",
    "seed",
    "accuracy",
    "sp_gap",
    "eo_gap",
    "delta_accuracy",
    "delta_sp_gap",
    "delta_eo_gap",
)


def rank_by_score(scores: Mapping[str, float], descending: bool = True) -> list[str]:
    """Players ordered by score (highest first by default); ties broken by name, so the order is deterministic."""
    values = {p: float(s) for p, s in scores.items()}
    bad = {p: s for p, s in values.items() if not np.isfinite(s)}
    if bad:
        raise ValueError(f"scores must be finite, got {bad}")
    sign = -1.0 if descending else 1.0
    return sorted(values, key=lambda p: (sign * values[p], p))


def random_rankings(players: Sequence[str], n: int, seed: int) -> list[list[str]]:
    """`n` uniformly random permutations of the players (same seed, same list)."""
    if n < 1:
        raise ValueError(f"n must be >= 1, got {n}")
    rng = np.random.default_rng(seed)
    players = list(players)
    return [[players[i] for i in rng.permutation(len(players))] for _ in range(n)]


def check_ranking(data: AuditData, ranking: Sequence[str], k_max: int) -> list[str]:
    ranking = list(ranking)
    unknown = [p for p in ranking if p not in data.groups]
    if unknown:
        raise ValueError(f"ranking names unknown player(s) {unknown}; players are {list(data.players)}")
    if len(set(ranking)) != len(ranking):
        raise ValueError(f"ranking names a player twice: {ranking}")
    if not 1 <= k_max <= len(ranking):
        raise ValueError(f"k_max must lie in [1, {len(ranking)}] (the ranking's length), got {k_max}")
    return ranking


def selection_table(
    data: AuditData,
    rankings: Mapping[str, Sequence[str]],
    k_max: int = 1,
    split: Sequence[float] = (0.6, 0.2, 0.2),
    grid: Sequence[Mapping] = DEFAULT_GRID,
    seed: int = 0,
    max_iter: int = 200,
) -> pd.DataFrame:
    """One row per (ranking, k) for k = 0..k_max (k = 0 is the full set): gaps on the test split and their deltas
    against k = 0 (SELECTION_COLUMNS). `rankings` maps a label (e.g. "shapley_bayes_SP", "random_3") to a ranking."""
    if not rankings:
        raise ValueError("no rankings given")
    checked = {label: check_ranking(data, ranking, k_max) for label, ranking in rankings.items()}
    train, val, test = train_val_test_split(data, split, seed)
    cache: dict[str, dict] = {}

    def evaluate(kept: list[str]) -> dict:
        key = coalition_key(kept)
        if key not in cache:
            cache[key] = evaluate_coalition(train, val, test, kept, grid, seed, max_iter)
        return cache[key]

    full = evaluate(list(data.players))
    rows = []
    for label, ranking in checked.items():
        for k in range(k_max + 1):
            removed = ranking[:k]
            result = evaluate([p for p in data.players if p not in removed])
            rows.append(
                {
                    "dataset": data.name,
                    "ranking": label,
                    "k": k,
                    "removed": "+".join(removed),
                    "seed": seed,
                    **{m: result[m] for m in ("accuracy", "sp_gap", "eo_gap")},
                    **{f"delta_{m}": result[m] - full[m] for m in ("accuracy", "sp_gap", "eo_gap")},
                }
            )
    return pd.DataFrame(rows, columns=list(SELECTION_COLUMNS))


def removal_curve(
    data: AuditData,
    ranking: Sequence[str],
    k_max: int = 1,
    split: Sequence[float] = (0.6, 0.2, 0.2),
    grid: Sequence[Mapping] = DEFAULT_GRID,
    seed: int = 0,
    max_iter: int = 200,
) -> pd.DataFrame:
    """`selection_table` for one ranking (labelled "ranking")."""
    return selection_table(data, {"ranking": ranking}, k_max, split, grid, seed, max_iter)
