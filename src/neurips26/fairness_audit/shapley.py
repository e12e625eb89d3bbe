r"""Shapley attribution of a coalition measure to its players (the abstract: Shapley values "deduce feature-level
contributions to global unfairness bias").

Coalitions are bitmasks: player ``i`` (0-based) is bit ``i``, so ``values[mask]`` is ``mu`` of the players whose
bits are set and ``values[0] = mu(empty)``.

* :func:`exact_shapley`: ``phi_i = sum_{S not containing i} |S|! (d - |S| - 1)! / d! (mu(S + i) - mu(S))`` from the
  complete table of ``2^d`` values, as one matrix product ``values @ W`` with ``W[m, i] = w(|m| - 1)`` when ``i``
  is in ``m`` and ``-w(|m|)`` otherwise (no loop over coalitions or players). Each column of ``W`` sums to 0
  and the columns add up to ``+1`` at the full coalition and ``-1`` at the empty one, so efficiency ``sum_i phi_i
  = mu(full) - mu(empty)`` holds up to float round-off. At most :data:`MAX_EXACT_PLAYERS` = 12 players.
* :func:`monte_carlo_shapley`: the mean marginal contribution over ``n_permutations`` uniformly random player orders
  (1,000 in config/fairness_audit.yaml), with its standard error ``std / sqrt(n_permutations)``; coalition values come
  from an array, a mapping, or a callable, each distinct coalition evaluated once (the cache is returned).
* :func:`leave_one_out`: ``mu(full) - mu(full without i)``, a baseline; :func:`singletons`:
  ``mu({i}) - mu(empty)``, the marginal ranking.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from math import factorial

import numpy as np

__all__ = [
    "MAX_EXACT_PLAYERS",
    "MonteCarloShapley",
    "exact_shapley",
    "leave_one_out",
    "monte_carlo_shapley",
    "n_players_of",
    "shapley_weights",
    "singletons",
    "validate_masks",
]

MAX_EXACT_PLAYERS = 12


def validate_masks(masks, d: int) -> np.ndarray:
    """The masks as an int64 array, checked to lie in ``[0, 2^d)``; ValueError names the first bad one."""
    if d < 1:
        raise ValueError(f"the number of players d must be >= 1, got {d}")
    masks = np.asarray(masks)
    if masks.size and not np.issubdtype(masks.dtype, np.integer):
        raise ValueError(f"coalition masks must be integers, got dtype {masks.dtype}")
    masks = masks.astype(np.int64)
    bad = (masks < 0) | (masks >= 1 << d)
    if bad.any():
        raise ValueError(f"coalition mask {int(masks[bad][0])} out of range [0, {(1 << d) - 1}] for d={d} players")
    return masks


def n_players_of(values: np.ndarray) -> int:
    """``d`` for a table of ``2^d`` coalition values; ValueError when the length is not a power of two."""
    size = len(values)
    if size < 2 or size & (size - 1):
        raise ValueError(f"a complete coalition table has 2^d entries (d >= 1), got {size}")
    return size.bit_length() - 1


def shapley_weights(d: int) -> np.ndarray:
    """``w(s) = s! (d - s - 1)! / d!`` for ``s = 0..d-1``."""
    return np.array([factorial(s) * factorial(d - s - 1) / factorial(d) for s in range(d)])


def _table(values) -> tuple[np.ndarray, int]:
    values = np.asarray(values, dtype=np.float64)
    if values.ndim != 1:
        raise ValueError(f"coalition values must be 1-D (indexed by bitmask), got shape {values.shape}")
    d = n_players_of(values)
    if not np.isfinite(values).all():
        raise ValueError(f"coalition values hold {int((~np.isfinite(values)).sum())} NaN or infinite entries")
    return values, d


def exact_shapley(values) -> np.ndarray:
    """Exact Shapley values ``(d,)`` of the game given by the complete table ``values[mask]`` (length ``2^d``)."""
    values, d = _table(values)
    if d > MAX_EXACT_PLAYERS:
        raise ValueError(f"exact Shapley needs d <= {MAX_EXACT_PLAYERS} players, got d={d}; use monte_carlo_shapley")
    masks = np.arange(1 << d)
    members = ((masks[:, None] >> np.arange(d)[None, :]) & 1).astype(bool)
    size = np.bitwise_count(masks).astype(np.int64)[:, None]
    weights = np.r_[shapley_weights(d), 0.0]  # index d (full coalition, player absent) never used
    coef = np.where(members, weights[np.maximum(size - 1, 0)], -weights[np.minimum(size, d)])
    return values @ coef


def leave_one_out(values) -> np.ndarray:
    """``mu(full) - mu(full without i)`` for each player."""
    values, d = _table(values)
    full = (1 << d) - 1
    return values[full] - values[full ^ (1 << np.arange(d))]


def singletons(values) -> np.ndarray:
    """``mu({i}) - mu(empty)`` for each player."""
    values, d = _table(values)
    return values[1 << np.arange(d)] - values[0]


@dataclass(frozen=True)
class MonteCarloShapley:
    """Permutation estimates ``phi`` with standard errors ``se`` (both ``(d,)``), the number of permutations and the
    coalition values that were evaluated (``mask -> value``)."""

    phi: np.ndarray
    se: np.ndarray
    n_permutations: int
    cache: dict[int, float] = field(repr=False)


def monte_carlo_shapley(
    values: np.ndarray | Mapping[int, float] | Callable[[int], float],
    d: int,
    n_permutations: int = 1000,
    seed: int = 0,
    cache: dict[int, float] | None = None,
) -> MonteCarloShapley:
    """Permutation-sampling Shapley estimates for ``d`` players.

    ``values`` is a complete table (array of ``2^d``), a mapping ``mask -> value`` holding every coalition the
    permutations reach (KeyError otherwise), or a callable ``mask -> value``. ``cache`` (updated in place) holds
    values already known; each distinct coalition is evaluated at most once."""
    if n_permutations < 2:
        raise ValueError(f"n_permutations must be >= 2 (for a standard error), got {n_permutations}")
    if isinstance(values, np.ndarray):
        if values.shape != (1 << d,):
            raise ValueError(f"coalition table has shape {values.shape}, d={d} players need ({1 << d},)")
        lookup = values.__getitem__
    elif isinstance(values, Mapping):
        lookup = values.__getitem__
    elif callable(values):
        lookup = values
    else:
        raise ValueError(f"values must be an array, a mapping or a callable, got {type(values).__name__}")
    rng = np.random.default_rng(seed)
    orders = np.argsort(rng.random((n_permutations, d)), axis=1)
    after = np.cumsum(np.left_shift(1, orders), axis=1)  # coalition once each player has joined
    before = after - np.left_shift(1, orders)
    needed = validate_masks(np.unique(np.concatenate([after.ravel(), before.ravel()])), d)
    cache = {} if cache is None else cache
    for mask in needed.tolist():
        if mask not in cache:
            cache[mask] = float(lookup(mask))
    known = np.array([cache[m] for m in needed.tolist()])
    marginal = known[np.searchsorted(needed, after)] - known[np.searchsorted(needed, before)]
    contributions = np.empty_like(marginal)
    np.put_along_axis(contributions, orders, marginal, axis=1)
    return MonteCarloShapley(
        phi=contributions.mean(axis=0),
        se=contributions.std(axis=0, ddof=1) / np.sqrt(n_permutations),
        n_permutations=n_permutations,
        cache=cache,
    )
