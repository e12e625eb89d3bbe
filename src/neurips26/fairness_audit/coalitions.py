r"""Measure values of feature coalitions in long form, each coalition computed
once, and the Shapley tables built from them.

Players are feature blocks (one ``(n, k_i)`` matrix each: a feature, or the one-hot columns of a categorical one).
Player ``i`` is bit ``i`` of the coalition mask and is named ``x{i+1}`` unless names are given; a coalition is
written ``x1+x3`` (the empty one ``""``). Each block is encoded once (the estimator's per-column representation,
the spline features of the Bayes score, the plug-in bins of the PID code, as the measures need them); a coalition
concatenates its players' encodings and evaluates every requested measure through one
:class:`~.measures.SharedQuantities`, so ``I(X_S; A)`` is fitted once per coalition whatever the number of
measures using it. All coalitions share the seed (common random numbers: the same folds and k-means seeding in
every coalition, so the differences that Shapley values sum are not inflated by fold noise).

Speed: the fits are small, so a multi-threaded BLAS costs more than it gains; run with ``OMP_NUM_THREADS=1``
(Snakemake sets it from the rule's ``threads``). The achieved rate is in ``frame.attrs["coalitions_per_second"]``.
"""

from __future__ import annotations

import time
from collections.abc import Sequence

import numpy as np
import pandas as pd

from .cross_entropy import spline_features
from .estimators import ESTIMATORS, NEG_TOL, Estimator, get_estimator, validate_inputs
from .measures import MEASURES, SharedQuantities, check_measure_names
from .plugin import quantile_bins
from .shapley import MAX_EXACT_PLAYERS, exact_shapley, leave_one_out, singletons, validate_masks

__all__ = [
    "MAX_ALL_COALITIONS",
    "coalition_name",
    "coalition_values",
    "shapley_table",
    "value_table",
]

MAX_ALL_COALITIONS = 10  # all coalitions when d <= 10, otherwise a given (sampled) list


def coalition_name(mask: int, names: Sequence[str]) -> str:
    """``"x1+x3"`` for mask ``0b101`` and names ``x1, x2, x3`` (``""`` for the empty coalition)."""
    return "+".join(name for i, name in enumerate(names) if mask >> i & 1)


def _check_blocks(blocks: Sequence[np.ndarray], a, y) -> tuple[list[np.ndarray], np.ndarray, np.ndarray]:
    if len(blocks) == 0:
        raise ValueError("coalition_values needs at least one player block")
    checked = []
    for i, block in enumerate(blocks):
        block = np.asarray(block, dtype=np.float64)
        if block.ndim == 1:
            block = block[:, None]
        if block.ndim != 2 or block.shape[1] == 0:
            raise ValueError(f"player block {i} must be (n, k) with k >= 1, got shape {block.shape}")
        checked.append(block)
    _, a, y = validate_inputs(np.concatenate(checked, axis=1), a, y)
    return checked, a, y


def _join(per_block: list[np.ndarray] | None, members: list[int]) -> np.ndarray | None:
    """The members' encodings side by side ((n, 0) for the empty coalition); None when not encoded."""
    if per_block is None:
        return None
    return np.concatenate([per_block[i] for i in members], axis=1) if members else per_block[0][:, :0]


def coalition_values(
    blocks: Sequence[np.ndarray],
    a,
    y,
    measures: Sequence[str] | None = None,
    estimator: str | Estimator = "ce",
    seed: int = 0,
    coalitions: Sequence[int] | None = None,
    names: Sequence[str] | None = None,
    tol: float = NEG_TOL,
) -> pd.DataFrame:
    """Long table of measure values: one row per (coalition, measure) with ``mask``, ``players``, ``size``,
    ``measure``, ``notion``, ``family``, ``value``, ``raw``, ``clipped`` and ``negative`` (see
    :func:`~.estimators.clip_estimate`).

    ``coalitions`` None means all ``2^d`` masks, allowed for ``d <= MAX_ALL_COALITIONS``; otherwise give the masks
    (each is computed once, duplicates dropped, order kept). ``attrs`` hold ``estimator``, ``seed``,
    ``n_players``, ``players``, ``seconds`` and ``coalitions_per_second``."""
    measures = check_measure_names(measures)
    blocks, a, y = _check_blocks(blocks, a, y)
    est = get_estimator(estimator)
    d = len(blocks)
    names = [f"x{i + 1}" for i in range(d)] if names is None else list(names)
    if len(names) != d or len(set(names)) != d:
        raise ValueError(f"names must be {d} distinct player names, got {names}")
    if coalitions is None:
        if d > MAX_ALL_COALITIONS:
            raise ValueError(
                f"all coalitions of d={d} players is too many (limit {MAX_ALL_COALITIONS}); pass a list of masks"
            )
        masks = np.arange(1 << d)
    else:
        masks = validate_masks(list(coalitions), d)
        masks = masks[np.sort(np.unique(masks, return_index=True)[1])]
    uses = {use for name in measures for use in MEASURES[name].uses}
    start = time.perf_counter()
    parts: dict[str, list[np.ndarray] | None] = {"rep": None, "splines": None, "bins": None}
    if "estimator" in uses or ("bins" in uses and est.name == "plugin"):  # a plug-in PID code is est's own code
        parts["rep"] = [est.encode(block) for block in blocks]
    if "splines" in uses:
        parts["splines"] = parts["rep"] if est is ESTIMATORS["ce"] else [spline_features(b) for b in blocks]
    if "bins" in uses and est.name != "plugin":
        parts["bins"] = [quantile_bins(block) for block in blocks]
    rows = []
    for mask in masks.tolist():
        members = [i for i in range(d) if mask >> i & 1]
        joined = {kind: _join(per_block, members) for kind, per_block in parts.items()}
        quantities = SharedQuantities(None, a, y, est, seed, tol, **joined)
        player_names = coalition_name(mask, names)
        for name in measures:
            spec = MEASURES[name]
            estimate = spec.function(quantities)
            rows.append(
                (
                    mask,
                    player_names,
                    len(members),
                    name,
                    spec.notion,
                    spec.family,
                    estimate.value,
                    estimate.raw,
                    estimate.clipped,
                    estimate.negative,
                )
            )
    seconds = time.perf_counter() - start
    frame = pd.DataFrame(
        rows, columns=["mask", "players", "size", "measure", "notion", "family", "value", "raw", "clipped", "negative"]
    )
    frame["mask"] = frame["mask"].astype(np.int64)
    frame.attrs.update(
        estimator=est.name,
        seed=seed,
        n_players=d,
        players=list(names),
        seconds=seconds,
        coalitions_per_second=len(masks) / seconds if seconds > 0 else float("inf"),
    )
    return frame


def value_table(frame: pd.DataFrame, measure: str, d: int) -> np.ndarray:
    """The complete table ``values[mask]`` (length ``2^d``) of one measure from a :func:`coalition_values`
    frame; ValueError names the first missing coalition."""
    rows = frame[frame["measure"] == measure]
    if rows.empty:
        raise ValueError(f"measure {measure!r} not in the frame; it has {sorted(frame['measure'].unique())}")
    masks = validate_masks(rows["mask"].to_numpy(), d)
    values = np.full(1 << d, np.nan)
    values[masks] = rows["value"].to_numpy(dtype=np.float64)
    missing = np.flatnonzero(np.isnan(values))
    if len(missing):
        raise ValueError(
            f"measure {measure!r}: coalition mask {int(missing[0])} missing ({len(missing)} of {1 << d} missing)"
        )
    return values


def shapley_table(frame: pd.DataFrame, names: Sequence[str] | None = None) -> pd.DataFrame:
    """One row per (measure, player): exact Shapley ``phi``, leave-one-out ``loo`` and ``singleton``
    (``mu({i}) - mu(empty)``), from a complete :func:`coalition_values` frame (``d <= 12``)."""
    d = int(frame.attrs.get("n_players", int(frame["mask"].max()).bit_length()))
    if d > MAX_EXACT_PLAYERS:
        raise ValueError(f"exact Shapley needs d <= {MAX_EXACT_PLAYERS} players, got d={d}")
    names = list(frame.attrs.get("players", [f"x{i + 1}" for i in range(d)]) if names is None else names)
    rows = []
    for measure in frame["measure"].unique():
        values = value_table(frame, measure, d)
        spec = MEASURES.get(measure)
        for i, (phi, loo, single) in enumerate(zip(exact_shapley(values), leave_one_out(values), singletons(values))):
            rows.append((measure, spec.notion if spec else "", names[i], i, phi, loo, single))
    return pd.DataFrame(rows, columns=["measure", "notion", "player", "index", "phi", "loo", "singleton"])
