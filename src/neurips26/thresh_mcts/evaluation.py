"""Paper 12's evaluation of the runs: error rates with Clopper-Pearson intervals, stopping times against the lower
bound T* kl(delta, 1 - delta) (Garivier and Kaufmann 2016, Theorem 1) and T* ln(1/delta), and log-log slopes of
the per-round cost (the abstract: "from linear to logarithmic in the number of arms")."""

from __future__ import annotations

import numpy as np
import pandas as pd

from neurips26.common.claims import clopper_pearson

from .theory import kl_bernoulli


def summarise(runs: pd.DataFrame, theory: pd.DataFrame) -> pd.DataFrame:
    """One row per (rule, instance, delta): error rate over the runs that stopped (censored runs count as
    neither correct nor wrong; their share is reported), its Clopper-Pearson 95% interval, and the stopping
    time's mean, sd and quantiles against T* ln(1/delta) and the lower bound T* kl(delta, 1 - delta); and claim M1's
    null, the error rate of the same runs stopped by the threshold without its confidence term (``null_*``)."""
    t_star = theory.set_index("instance")["t_star"]
    rows = []
    for (rule, instance, delta), group in runs.groupby(["rule", "instance", "delta"]):
        done = group[~group["censored"]]
        errors = int((~done["correct"]).sum())
        low, high = clopper_pearson(errors, len(done))
        tau = done["tau"].to_numpy(float)
        ts = float(t_star[instance])
        # M1's null: the same runs stopped by the threshold without its confidence term (-1: never stopped there)
        null_done = group[group["null_tau"] >= 0] if "null_tau" in group else group.iloc[:0]
        null_errors = int((~null_done["null_correct"].astype(bool)).sum()) if len(null_done) else 0
        rows.append(
            {
                "rule": rule,
                "instance": instance,
                "delta": delta,
                "runs": len(group),
                "censored": float(group["censored"].mean()),
                "errors": errors,
                "error_rate": errors / len(done) if len(done) else np.nan,
                "cp_low": low,
                "cp_high": high,
                "mean_tau": tau.mean() if len(tau) else np.nan,
                "sd_tau": tau.std(ddof=1) if len(tau) > 1 else np.nan,
                "q10_tau": np.quantile(tau, 0.1) if len(tau) else np.nan,
                "median_tau": np.median(tau) if len(tau) else np.nan,
                "q90_tau": np.quantile(tau, 0.9) if len(tau) else np.nan,
                "t_star": ts,
                "lower_bound": ts * kl_bernoulli(delta, 1 - delta),
                "tau_over_tstar_log": (tau.mean() / (ts * np.log(1 / delta))) if len(tau) else np.nan,
                "null_stopped": len(null_done),
                "null_errors": null_errors,
                "null_error_rate": null_errors / len(null_done) if len(null_done) else np.nan,
                "null_mean_tau": float(null_done["null_tau"].mean()) if len(null_done) else np.nan,
            }
        )
    return pd.DataFrame(rows)


def loglog_slope(x, y) -> float:
    """Least-squares slope of log y against log x (positive finite points only)."""
    x, y = np.asarray(x, float), np.asarray(y, float)
    keep = (x > 0) & (y > 0) & np.isfinite(x) & np.isfinite(y)
    if keep.sum() < 2:
        return float("nan")
    return float(np.polyfit(np.log(x[keep]), np.log(y[keep]), 1)[0])


def cost_slopes(cost: pd.DataFrame) -> pd.DataFrame:
    """Per rule: log-log slopes of node operations and of wall time per round (medians over the timing repeats)
    against the number of leaves K."""
    if "repeat" in cost:
        cost = cost.groupby(["rule", "n_leaves"], as_index=False).median(numeric_only=True)
    return pd.DataFrame(
        [
            {
                "rule": rule,
                "n_sizes": int(g["n_leaves"].nunique()),
                "ops_slope": loglog_slope(g["n_leaves"], g["ops_per_round"]),
                "wall_seconds_slope": loglog_slope(g["n_leaves"], g["microseconds_per_round"]),
                "rounds_per_second_at_max_k": float(1e6 / g.sort_values("n_leaves")["microseconds_per_round"].iloc[-1]),
            }
            for rule, g in cost.groupby("rule")
        ]
    )


def wall_slopes_by_repeat(cost: pd.DataFrame) -> pd.DataFrame:
    """Per (rule, repeat): the log-log slope of wall time per round against K, one timing pass each."""
    return pd.DataFrame(
        [
            {
                "rule": rule,
                "repeat": repeat,
                "n_sizes": int(g["n_leaves"].nunique()),
                "wall_seconds_slope": loglog_slope(g["n_leaves"], g["microseconds_per_round"]),
            }
            for (rule, repeat), g in cost.groupby(["rule", "repeat"])
        ],
        columns=["rule", "repeat", "n_sizes", "wall_seconds_slope"],
    )
