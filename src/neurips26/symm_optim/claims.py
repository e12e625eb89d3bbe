"""Paper 07's measured values for the claims and checks of ``config/claims/symm_optim.yaml``.

Checks S1-S3 read the float64 symmetry table and identities (:mod:`.theory`). Claims S4-S6 read the per-run
outcomes and the best-LR table (:mod:`.summary`) and decide from paired differences over seeds: a method and
the baseline are compared seed by seed (same data order, same initialisation), each at its own best grid point,
and the mean difference is given with its t interval. S4 and S5 choose each method's best grid point on one seed
(the smallest) and score the other seeds (:func:`held_out_selection`); S6 reads the best-LR table of all seeds.
Where the compared method is the better of several candidates (S4, S5), the interval is Bonferroni-adjusted for
that choice. S7 reads the side-by-side step times.

Missing or non-finite evidence gives NaN (an inconclusive verdict), never a value that passes.
"""

from __future__ import annotations

import math
from dataclasses import replace

import numpy as np
import pandas as pd

from neurips26.common.claims import Measured, measured_from_spread, t_interval

from .summary import best_learning_rates

ORTHOGONAL = ("left_orth", "right_orth")
COORDINATEWISE = ("adam", "sign")
# the paper's embedding + LM head proposals (the repo's README runs: RowNormM and HybridPolarGradM)
EMBEDDING_HEAD_CANDIDATES = ("row_norm", "hybrid")
CONFIDENCE = 0.95

__all__ = ["measure_claims", "paired_deltas"]


def _nan_propagating(values: pd.Series, reduce) -> float:
    """``reduce`` (np.max / np.min) of ``values``; NaN when empty or when any value is NaN."""
    array = values.to_numpy(dtype=float)
    return float(reduce(array)) if array.size else math.nan


def _best_index(best: pd.DataFrame, arch: str, method: str) -> int | None:
    row = best[(best["arch"] == arch) & (best["method"] == method)]
    if row.empty or bool(row["all_diverged"].iloc[0]):
        return None
    return int(row["best_lr_index"].iloc[0])


def _at_best(runs: pd.DataFrame, best: pd.DataFrame, arch: str, method: str, column: str) -> pd.Series:
    """``column`` per seed of ``method``'s runs at its best grid point (empty if it has none)."""
    index = _best_index(best, arch, method)
    if index is None:
        return pd.Series(dtype=float)
    sel = runs[(runs["arch"] == arch) & (runs["method"] == method) & (runs["lr_index"] == index)]
    return sel.set_index("seed")[column].astype(float)


def paired_deltas(
    runs: pd.DataFrame, best: pd.DataFrame, arch: str, method: str, baseline: str, column: str = "final_val_loss"
) -> pd.Series:
    """Per seed: ``column`` of ``method`` at its best grid point minus the baseline's at its best grid point,
    over the seeds both have with finite values."""
    delta = _at_best(runs, best, arch, method, column) - _at_best(runs, best, arch, baseline, column)
    return delta[np.isfinite(delta)]


def _better_of(
    runs: pd.DataFrame, best: pd.DataFrame, arch: str, candidates: list[str], baseline: str, claim_id: str
) -> Measured:
    """The candidate with the lowest mean paired difference to the baseline, with its t interval at
    ``1 - (1 - CONFIDENCE) / len(candidates)`` (Bonferroni for choosing among the candidates)."""
    if not candidates:
        return Measured(claim_id, math.nan, 0, note=f"no {arch} method to compare with {baseline}")
    confidence = 1 - (1 - CONFIDENCE) / len(candidates)
    method = f"{confidence:.1%} t interval" + (
        f" (Bonferroni for {len(candidates)} candidates)" if len(candidates) > 1 else ""
    )
    spreads = {
        m: replace(t_interval(paired_deltas(runs, best, arch, m, baseline).tolist(), confidence), method=method)
        for m in candidates
    }
    notes = [
        f"{m} {s.mean:+.4f} [{s.low:+.4f}, {s.high:+.4f}] on {s.runs} seeds{_grid_note(best, arch, m)}"
        for m, s in spreads.items()
    ]
    notes.append(f"{baseline}{_grid_note(best, arch, baseline)}")
    finite = {m: s for m, s in spreads.items() if math.isfinite(s.mean)}
    if not finite:
        return Measured(claim_id, math.nan, 0, note="; ".join(["no paired seeds", *notes]))
    chosen = min(finite, key=lambda m: finite[m].mean)
    return measured_from_spread(claim_id, finite[chosen], "; ".join([f"better: {chosen}", *notes]))


def held_out_selection(
    runs: pd.DataFrame, arch: str, baselines: dict[str, str]
) -> tuple[pd.DataFrame, pd.DataFrame, float]:
    """S4, S5: each method's best grid point chosen on one seed, the arch's smallest (fixed before any run), and
    the runs of the other seeds, on which the claim is scored: (best-LR table of the selection seed, as
    :func:`summary.best_learning_rates` builds it, the scored runs, the selection seed; NaN without runs). The
    learning rate is then not picked on the losses it is scored on (issue 41's review)."""
    rows = runs[runs["arch"] == arch]
    if rows.empty:
        return pd.DataFrame(columns=["arch", "method", "best_lr_index", "all_diverged"]), rows, math.nan
    seed = rows["seed"].min()
    return best_learning_rates(rows[rows["seed"] == seed], baselines), rows[rows["seed"] != seed], float(seed)


def _held_out_better_of(
    runs: pd.DataFrame, arch: str, candidates: list[str], baselines: dict[str, str], claim_id: str
) -> Measured:
    """:func:`_better_of` with every best grid point chosen on the selection seed and scored on the other seeds."""
    best, scored, seed = held_out_selection(runs, arch, baselines)
    measured = _better_of(scored, best, arch, candidates, baselines[arch], claim_id)
    seeds = sorted(scored["seed"].unique())
    selection = (
        f"learning rates chosen on seed {seed:g} (each method's lowest final validation loss of the grid there), "
        f"scored on seeds {', '.join(f'{s:g}' for s in seeds) or 'none'}"
    )
    return replace(measured, note="; ".join(p for p in (measured.note, selection) if p))


def _grid_note(best: pd.DataFrame, arch: str, method: str) -> str:
    row = best[(best["arch"] == arch) & (best["method"] == method)]
    if row.empty:
        return " (not run)"
    if bool(row["all_diverged"].iloc[0]):
        return " (every grid point diverged)"
    r = row.iloc[0]
    return f" (best x{r['multiplier']:g}{', grid edge' if r['at_grid_edge'] else ''})"


def _spikes(runs: pd.DataFrame, best: pd.DataFrame, methods: list[str], baseline: str) -> Measured:
    """S6: per seed, the mean spike count of ``methods`` at their best grid points minus the baseline's, over
    the seeds where every one of them ran; NaN when neither arm has a spike."""
    base = _at_best(runs, best, "dense", baseline, "spikes")
    columns = {m: _at_best(runs, best, "dense", m, "spikes") for m in methods}
    if base.empty or not any(len(c) for c in columns.values()):
        return Measured("S6", math.nan, 0, note=f"no runs of the symmetric methods {methods} or of {baseline}")
    symmetric = pd.concat(columns, axis=1).dropna()
    seeds = symmetric.index.intersection(base.index)
    symmetric, base = symmetric.loc[seeds], base.loc[seeds]
    note = (
        f"{symmetric.to_numpy().sum():g} spikes in {symmetric.size} runs of {', '.join(symmetric.columns)}; "
        f"{base.sum():g} in {len(base)} {baseline} runs"
    )
    if symmetric.to_numpy().sum() + base.sum() == 0:
        return Measured(
            "S6", math.nan, len(seeds), note=f"no loss spike in either arm, no evidence about stability: {note}"
        )
    return measured_from_spread("S6", t_interval((symmetric.mean(axis=1) - base).tolist(), CONFIDENCE), note)


def _step_time(step_time: pd.DataFrame, baselines: dict[str, str]) -> Measured:
    """S7: the largest whole-step time ratio to the arch's baseline over the non-baseline methods."""
    steps = step_time[step_time["part"] == "step"]
    others = steps[steps["method"] != steps["arch"].map(baselines)]
    if others.empty:
        return Measured("S7", math.nan, 0, note="no non-baseline step times")
    ratio = _nan_propagating(others["ratio_to_baseline"], np.max)
    slowest = others.loc[others["ratio_to_baseline"].idxmax()] if math.isfinite(ratio) else None
    listing = ", ".join(f"{r.arch}/{r.method} {r.ratio_to_baseline:.2f}" for r in others.itertuples())
    head = f"slowest {slowest['arch']}/{slowest['method']}; " if slowest is not None else ""
    return Measured("S7", ratio, len(others), note=head + listing)


def measure_claims(
    equivariance: pd.DataFrame,
    identities: pd.DataFrame,
    runs: pd.DataFrame,
    best: pd.DataFrame,
    step_time: pd.DataFrame,
    baseline: str,
    router_baseline: str,
) -> list[Measured]:
    """``equivariance``: :func:`theory.equivariance_table` rows; ``identities``: (identity, value) rows of
    :func:`theory.identities_table`; ``runs`` / ``best``: ``runs.parquet`` and
    :func:`summary.best_learning_rates` of both sweeps; ``step_time``: :func:`step_time.step_times` rows."""
    expected = equivariance[equivariance["expected"].astype(bool)]
    broken = equivariance[~equivariance["expected"].astype(bool)]
    coordinatewise = broken[broken["optimizer"].isin(COORDINATEWISE) & broken["group"].isin(ORTHOGONAL)]
    ident = identities.set_index("identity")["value"]
    lifting = float(ident.get("diagonal_lifting", math.nan))
    polar_sv = float(ident.get("polar_singular_values", math.nan))
    adam_sign = float(ident.get("adam_sign_limit", math.nan))
    dense_methods = list(dict.fromkeys(runs.loc[runs["arch"] == "dense", "method"]))
    routers = [m for m in dict.fromkeys(runs.loc[runs["arch"] == "moe", "method"]) if m != router_baseline]
    candidates = [m for m in EMBEDDING_HEAD_CANDIDATES if m in dense_methods]
    symmetric = [m for m in dense_methods if m != baseline]
    baselines = {"dense": baseline, "moe": router_baseline}
    return [
        Measured(
            "S1",
            _nan_propagating(expected["rel_err"], np.max),
            len(expected),
            note=f"{len(expected)} (rule, group) pairs incl. the routers' shift invariance",
        ),
        Measured(
            "S2a",
            _nan_propagating(coordinatewise["rel_err"], np.min),
            len(coordinatewise),
            note=f"{len(coordinatewise)} (rule, rotation) pairs",
        ),
        Measured(
            "S2b", _nan_propagating(broken["rel_err"], np.min), len(broken), note=f"{len(broken)} (rule, group) pairs"
        ),
        Measured(
            "S3",
            lifting,
            int(math.isfinite(lifting)),
            note=f"polar factor singular values |sigma - 1| <= {polar_sv:.1e}; Adam's first step vs sign "
            f"{adam_sign:.1e}",
        ),
        _held_out_better_of(runs, "dense", candidates, baselines, "S4"),
        _held_out_better_of(runs, "moe", routers, baselines, "S5"),
        _spikes(runs, best, symmetric, baseline),
        _step_time(step_time, {"dense": baseline, "moe": router_baseline}),
    ]
