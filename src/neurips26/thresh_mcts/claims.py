"""Paper 12's claims as checks that can fail (notes 12.7, M1-M7)."""

from __future__ import annotations

import numpy as np
import pandas as pd

from neurips26.common.claims import Claim

TRACK_AND_STOP = ("d_tracking", "c_tracking", "ratio")


def _paired(summary: pd.DataFrame, a: str, b: str) -> pd.DataFrame:
    wide = summary.pivot_table(index=["instance", "delta"], columns="rule", values="mean_tau")
    if a not in wide or b not in wide:
        return pd.DataFrame(columns=["ratio"])
    return pd.DataFrame({"ratio": wide[a] / wide[b]}).dropna()


def check_claims(summary: pd.DataFrame, slopes: pd.DataFrame, equivalence: pd.DataFrame,
                 lp_check: pd.DataFrame) -> list[Claim]:
    tas = summary[summary["rule"].isin(TRACK_AND_STOP)]
    excess = (tas["cp_low"] / tas["delta"]).max() if len(tas) else np.nan
    worst = tas.loc[(tas["error_rate"] / tas["delta"]).idxmax()] if len(tas) else None
    ratio_vs_d = _paired(summary, "ratio", "d_tracking")["ratio"]
    vs_uniform = [(_paired(summary, rule, "uniform")["ratio"] <= 1.0) for rule in ("ratio", "d_tracking")]
    both_beat_uniform = (pd.concat(vs_uniform, axis=1).all(axis=1).mean()
                         if all(len(v) for v in vs_uniform) else np.nan)
    trend = []
    for _, group in tas.groupby(["rule", "instance"]):
        group = group.sort_values("delta", ascending=False)
        values = group["tau_over_tstar_log"].to_numpy()
        if len(values) >= 2:
            trend.append(bool(np.all(np.diff(values) <= 0)))
    slope = slopes.set_index("rule")
    d_slope = float(slope.loc["d_tracking", "ops_slope"]) if "d_tracking" in slope.index else np.nan
    r_slope = float(slope.loc["ratio_incremental", "ops_slope"]) if "ratio_incremental" in slope.index else np.nan
    return [
        Claim("M1", "The algorithm is delta-correct (GLR stopping rule)", "hard",
              "max over TaS rules, instances and deltas of the 95% Clopper-Pearson lower bound of the error rate "
              "divided by delta", float(excess), 1.0, "<=",
              note=(f"worst observed: {worst['rule']} on {worst['instance']} at delta {worst['delta']:g}: "
                    f"{int(worst['errors'])} errors in {int(worst['runs'])} runs" if worst is not None else "")),
        Claim("M2a", "Ratio-based tracking needs substantially fewer samples than D-Tracking", "soft",
              "share of (instance, delta) cells with mean tau(ratio) <= 0.9 mean tau(D-Tracking)",
              float((ratio_vs_d <= 0.9).mean()) if len(ratio_vs_d) else np.nan, 2 / 3, ">=",
              note=f"median ratio {np.median(ratio_vs_d):.2f}" if len(ratio_vs_d) else ""),
        Claim("M2b", "... and never many more", "soft", "max over cells of mean tau(ratio) / mean tau(D-Tracking)",
              float(ratio_vs_d.max()) if len(ratio_vs_d) else np.nan, 1.1, "<="),
        Claim("M3", "Both Track-and-Stop variants beat uniform sampling", "soft",
              "share of (instance, delta) cells where ratio and D-Tracking both need fewer samples than uniform",
              float(both_beat_uniform), 2 / 3, ">="),
        Claim("M4", "Asymptotic optimality trend: tau / (T* ln(1/delta)) falls as delta shrinks", "info",
              "share of (TaS rule, instance) pairs where tau / (T* ln(1/delta)) does not grow as delta falls",
              float(np.mean(trend)) if trend else np.nan, 0.5, ">",
              note="a trend at two or three deltas, not the limit delta -> 0"),
        Claim("M5a", "D-Tracking's per-round cost is linear in the number of leaves K", "hard",
              "log-log slope of node operations per round against K, D-Tracking", d_slope, 0.9, ">="),
        Claim("M5b", "The ratio rule's per-round cost is logarithmic in K", "hard",
              "log-log slope of node operations per round against K, incremental ratio rule", r_slope, 0.3, "<=",
              note="log K has a log-log slope of 1/ln K: about 0.2 to 0.3 over K = 9..2187"),
        Claim("M6", "The incremental ratio rule picks the same leaves as the full recomputation", "hard",
              "share of (instance, seed) runs with identical pull sequences",
              float(equivalence["identical"].mean()) if len(equivalence) else np.nan, 1.0, ">="),
        Claim("M7", "The characteristic time T* of the dynamic program equals the lower bound's LP optimum", "hard",
              "max relative |T*_DP - T*_LP| over the checked trees",
              float(lp_check["relative_error"].max()) if len(lp_check) else np.nan, 1e-6, "<"),
    ]
