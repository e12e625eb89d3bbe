r"""Compute scaling of the validation loss (bbo-pile's ``scaling_laws.py``, added in 1700643).

bbo-pile's procedure, as its script and ``data_neurips.csv`` show:

* every logged evaluation of every run is a point ``(C, L)``, ``C = 6 N D``; the compute-optimal
  frontier keeps a point when its loss is below that of every point with less compute (their csv is
  exactly such a running minimum over many checkpoints of several runs);
* ``L = a C^b`` is fitted by least squares on ``log10 L = log10 a + b log10 C`` over the frontier
  points with ``1e16 <= C <= 7e17``; R² is computed on the losses themselves,
  ``1 - sum (L - a C^b)^2 / sum (L - mean L)^2`` (0 when all losses are equal);
* the frontier points with ``C > 7e17`` (the 80M run) are held out and scored by MAE, RMSE and R².

Here the held-out set is chosen by run instead of a fixed compute threshold (claim B5): the
fit uses the frontier of every run but the held-out one (by default the run with the most
compute), and the held-out points are the frontier points (over all runs) beyond the fit's largest
compute. The relative error of the held-out run's final loss is reported as well.
``points="final"`` gives a variant: one point per run, its last evaluation.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import NamedTuple

import numpy as np
import pandas as pd

__all__ = [
    "PowerLaw",
    "compute_frontier",
    "fit_power_law",
    "holdout_check",
    "long_rows",
    "r_squared",
    "scaling_summary",
]

POINTS = ("all", "final")


class PowerLaw(NamedTuple):
    """``L = a C^b`` and the R² of the fit on the losses."""

    a: float
    b: float
    r2: float

    def predict(self, flops) -> np.ndarray:
        return self.a * np.power(np.asarray(flops, dtype=np.float64), self.b)


def r_squared(y_true, y_pred) -> float:
    """``1 - SS_res / SS_tot``; 0.0 when ``SS_tot`` is 0 (one point, or equal values), as
    bbo-pile's ``compute_r2``."""
    y_true, y_pred = np.asarray(y_true, dtype=np.float64), np.asarray(y_pred, dtype=np.float64)
    ss_tot = float(np.sum((y_true - y_true.mean()) ** 2))
    return 1.0 - float(np.sum((y_true - y_pred) ** 2)) / ss_tot if ss_tot > 0 else 0.0


def fit_power_law(flops, losses) -> PowerLaw:
    """Least-squares fit of ``log10 L = log10 a + b log10 C``; returns ``(a, b, r2)``."""
    flops, losses = np.asarray(flops, dtype=np.float64).ravel(), np.asarray(losses, dtype=np.float64).ravel()
    if flops.shape != losses.shape:
        raise ValueError(f"{flops.size} compute values for {losses.size} losses")
    if not (np.isfinite(flops).all() and np.isfinite(losses).all()):
        raise ValueError("compute and losses must be finite")
    if (flops <= 0).any() or (losses <= 0).any():
        raise ValueError("compute and losses must be positive for a log-log fit")
    if np.unique(flops).size < 2:
        raise ValueError(f"a power-law fit needs two distinct compute values, got {np.unique(flops).size}")
    b, log_a = np.polyfit(np.log10(flops), np.log10(losses), 1)
    law = PowerLaw(float(10.0**log_a), float(b), 0.0)
    return law._replace(r2=r_squared(losses, law.predict(flops)))


def long_rows(rows_by_run: Mapping[str, Sequence[dict] | pd.DataFrame] | pd.DataFrame) -> pd.DataFrame:
    """One frame of every run's evaluation rows with a ``run`` column (a frame that already has one
    passes through); each row needs ``flops`` and ``val_loss``."""
    if isinstance(rows_by_run, pd.DataFrame):
        frame = rows_by_run.copy()
        if "run" not in frame:
            raise ValueError("a frame of rows needs a 'run' column")
    else:
        if not rows_by_run:
            raise ValueError("no runs given")
        frames = []
        for run, rows in rows_by_run.items():
            part = pd.DataFrame(rows).copy()
            if part.empty:
                raise ValueError(f"run {run!r} has no evaluation rows")
            part.insert(0, "run", run)
            frames.append(part)
        frame = pd.concat(frames, ignore_index=True)
    missing = {"flops", "val_loss"} - set(frame.columns)
    if missing:
        raise ValueError(f"evaluation rows lack column(s) {sorted(missing)}")
    bad = ~(np.isfinite(frame["flops"].to_numpy(float)) & np.isfinite(frame["val_loss"].to_numpy(float)))
    if bad.any():
        raise ValueError(
            f"{int(bad.sum())} row(s) have non-finite flops or val_loss (run {frame.loc[bad, 'run'].iloc[0]!r})"
        )
    return frame


def _final_rows(frame: pd.DataFrame) -> pd.DataFrame:
    """Each run's row with the most compute (its last evaluation)."""
    return frame.loc[frame.groupby("run", sort=False)["flops"].idxmax()]


def compute_frontier(rows_by_run, points: str = "all") -> pd.DataFrame:
    """The compute-optimal frontier, sorted by compute: the points whose ``val_loss`` is strictly
    below that of every point with less compute (among equal compute, the lowest loss). ``points``:
    ``"all"`` evaluation rows (bbo-pile) or each run's ``"final"`` row (runs not dominated by a
    cheaper run). Points with ``flops <= 0`` (before any training) are left out."""
    if points not in POINTS:
        raise ValueError(f"points must be one of {POINTS}, got {points!r}")
    frame = long_rows(rows_by_run)
    frame = _final_rows(frame) if points == "final" else frame
    frame = frame[frame["flops"] > 0].sort_values(["flops", "val_loss"], kind="stable")
    loss = frame["val_loss"].to_numpy(float)
    best_before = np.concatenate([[np.inf], np.minimum.accumulate(loss)[:-1]])
    return frame[loss < best_before].reset_index(drop=True)


def holdout_check(points, holdout: str | None = None, kind: str = "all", min_flops: float = 0.0) -> dict:
    """Fit on every run but ``holdout`` and predict it (claim B5; bbo-pile's held-out 80M run).

    ``points``: evaluation rows by run (a mapping, or a frame with a ``run`` column). ``holdout``
    defaults to the run with the most compute. The law is fitted on the frontier (``kind``) of the
    other runs with ``flops >= min_flops``; it is scored on the frontier points of all runs beyond
    the largest fitted compute (``mae``, ``rmse``, ``r2``, ``n_holdout``) and on the held-out run's
    final row (``predicted_loss``, ``final_loss``, ``relative_error`` = (predicted - actual) /
    actual).
    """
    frame = long_rows(points)
    finals = _final_rows(frame)
    if holdout is None:
        holdout = finals.loc[finals["flops"].idxmax(), "run"]
    if holdout not in set(frame["run"]):
        raise ValueError(f"held-out run {holdout!r} is not among the runs {sorted(set(frame['run']))}")
    fit_points = compute_frontier(frame[frame["run"] != holdout], kind)
    fit_points = fit_points[fit_points["flops"] >= min_flops]
    if len(fit_points) < 2:
        raise ValueError(
            f"{len(fit_points)} frontier point(s) outside the held-out run {holdout!r} "
            f"(flops >= {min_flops:g}): a fit needs two"
        )
    law = fit_power_law(fit_points["flops"], fit_points["val_loss"])
    frontier = compute_frontier(frame, kind)
    beyond = frontier[frontier["flops"] > fit_points["flops"].max()]
    final = finals[finals["run"] == holdout].iloc[0]
    predicted = float(law.predict(final["flops"]))
    residuals = beyond["val_loss"].to_numpy(float) - law.predict(beyond["flops"])
    return {
        "holdout": holdout,
        "a": law.a,
        "b": law.b,
        "r2_fit": law.r2,
        "n_fit": len(fit_points),
        "final_flops": float(final["flops"]),
        "final_loss": float(final["val_loss"]),
        "predicted_loss": predicted,
        "relative_error": (predicted - float(final["val_loss"])) / float(final["val_loss"]),
        "n_holdout": len(beyond),
        "mae": float(np.mean(np.abs(residuals))) if len(beyond) else float("nan"),
        "rmse": float(np.sqrt(np.mean(residuals**2))) if len(beyond) else float("nan"),
        "r2": r_squared(beyond["val_loss"], law.predict(beyond["flops"])) if len(beyond) else float("nan"),
    }


def scaling_summary(training: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The runs table (each run's last evaluation, ``frontier``: it has a point on the frontier) and the
    one-row scaling table of the evaluation rows of every run (``run``, ``model``, ``parameters``,
    ``tokens``, ``flops``, ``val_loss``, ``tokens_per_s``): the frontier fit (``a``, ``b``, ``r2``,
    ``frontier`` points), ``runs``, Spearman(FLOPs, final loss) over the runs and the held-out check of
    the largest-compute run. What thin evidence cannot give is NaN (no frontier fit below two frontier
    points, no Spearman below three runs, no held-out check below two runs), never an error or a
    stand-in value."""
    from scipy.stats import spearmanr

    finals = _final_rows(long_rows(training))
    runs = finals[["run", "model", "parameters", "tokens", "flops", "val_loss", "tokens_per_s"]].copy()
    frontier = compute_frontier(training[["run", "flops", "val_loss"]], points="all")
    nan = float("nan")
    law = fit_power_law(frontier["flops"], frontier["val_loss"]) if len(frontier) >= 2 else PowerLaw(nan, nan, nan)
    runs["frontier"] = runs["run"].isin(set(frontier["run"]))
    held = {"holdout": "", "a": nan, "b": nan, "predicted_loss": nan, "final_loss": nan, "relative_error": nan}
    if len(runs) >= 2:
        try:
            held = holdout_check(training[["run", "flops", "val_loss"]])
        except ValueError:  # fewer than two frontier points outside the held-out run
            pass
    spearman = float(spearmanr(runs["flops"], runs["val_loss"])[0]) if len(runs) > 2 else nan
    scaling = pd.DataFrame(
        [
            {
                "a": law.a,
                "b": law.b,
                "r2": law.r2,
                "frontier": len(frontier),
                "runs": len(runs),
                "spearman": spearman,
                "holdout_run": held["holdout"],
                "holdout_a": held["a"],
                "holdout_b": held["b"],
                "holdout_predicted": held["predicted_loss"],
                "holdout_actual": held["final_loss"],
                "holdout_rel_error": abs(held["relative_error"]),
            }
        ]
    )
    return runs.reset_index(drop=True), scaling
