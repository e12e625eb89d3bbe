"""Paper 17's measured values for the claims and checks of ``config/claims/gplvm_assvi.yaml``.

Trained methods are compared over seeds: a seed's runs of every method share the dataset, so differences are paired
by seed and decided by their 95% t interval. "Improves on a metric" (C1, C6) means the paired difference to *both*
mean-field baselines has an interval entirely on the better side: lower RMSE, NLPD, |coverage - 0.95| and distance
to the manifold. The count of improved metrics is then bracketed: ``low`` counts the metrics improved for certain
(both intervals on the better side), ``high`` the metrics not worse for certain (no interval entirely on the worse
side), ``value`` the metrics whose mean differences are both better; with a threshold of ``min_metrics`` the claim
holds when ``low`` reaches it, fails when ``high`` does not, and is inconclusive between. A metric with NaN values
(no true manifold on oil) is left out and said so. Fewer seeds than two give no interval: inconclusive.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from neurips26.common.claims import Measured, measured_from_spread, t_interval

__all__ = ["IMPROVEMENT_METRICS", "measure_claims", "paired"]

# metric -> how a value is scored (lower is better after the transform)
IMPROVEMENT_METRICS = {
    "rmse": lambda v: v,
    "nlpd": lambda v: v,
    "coverage": lambda v: abs(v - 0.95),
    "manifold_distance": lambda v: v,
}


def paired(metrics: pd.DataFrame, dataset: str, a: str, b: str, column: str, transform=lambda v: v) -> pd.Series:
    """Per seed, ``transform(a) - transform(b)`` of ``column`` on ``dataset`` (seeds present for both methods)."""
    rows = metrics[metrics["dataset"] == dataset]
    va = rows[rows["method"] == a].set_index("seed")[column].map(transform)
    vb = rows[rows["method"] == b].set_index("seed")[column].map(transform)
    return (va - vb).dropna()


def _improves(claim_id: str, metrics: pd.DataFrame, dataset: str | None, comp: dict) -> Measured:
    if dataset is None:
        return Measured(claim_id, math.nan, 0, note="no dataset named for this comparison at this scale")
    proposed, baselines = comp["proposed"], [comp["free_baseline"], comp["amortized_baseline"]]
    sure, possible, point, parts, seeds = 0, 0, 0, [], []
    for metric, transform in IMPROVEMENT_METRICS.items():
        spreads = [t_interval(paired(metrics, dataset, proposed, b, metric, transform)) for b in baselines]
        if any(s.runs == 0 for s in spreads):
            parts.append(f"{metric}: no values")
            continue
        seeds.append(min(s.runs for s in spreads))
        better = all(s.high < 0 for s in spreads)  # NaN bounds (one seed) compare False: not sure
        worse = any(s.low > 0 for s in spreads)
        sure += better
        possible += not worse
        point += all(s.mean < 0 for s in spreads)
        parts.append(f"{metric}: " + ", ".join(f"vs {b} {s.text()}" for b, s in zip(baselines, spreads)))
    runs = min(seeds) if seeds else 0
    if runs < 2:
        return Measured(claim_id, math.nan if not seeds else float(point), runs, note="; ".join(parts))
    note = f"{dataset}, {proposed} - baseline per seed (lower is better); " + "; ".join(parts)
    return Measured(claim_id, float(point), runs, low=float(sure), high=float(possible), note=note)


def measure_claims(metrics: pd.DataFrame, comp: dict) -> list[Measured]:
    primary = comp["primary"]
    proposed, free, amortized = comp["proposed"], comp["free_baseline"], comp["amortized_baseline"]
    out = [
        _improves("C1", metrics, primary, comp),
        measured_from_spread(
            "C2", t_interval(paired(metrics, primary, proposed, amortized, "nlpd")),
            f"{primary}: NLPD of {proposed} minus {amortized}, paired by seed",
        ),
    ]  # fmt: skip
    rows = metrics[metrics["dataset"] == primary]
    e_p = rows[rows["method"] == proposed].set_index("seed")["elbo"]
    e_f = rows[rows["method"] == free].set_index("seed")["elbo"]
    margin = (e_p - e_f + comp["elbo_tolerance"] * e_f.abs()).dropna()
    out.append(measured_from_spread("C3", t_interval(margin),
                                    f"{primary}: ELBO per point of {proposed} minus {free}, plus "
                                    f"{comp['elbo_tolerance']:.0%} of |ELBO({free})|, paired by seed"))  # fmt: skip
    pca = rows[rows["method"] == "pca"]["rmse"]
    if len(pca) != 1:
        out.append(Measured("C4", math.nan, 0, note=f"{primary}: no PCA row"))
    else:
        spreads = {m: t_interval(float(pca.iloc[0]) - rows[rows["method"] == m]["rmse"]) for m in comp["gplvms"]}
        worst = min(spreads, key=lambda m: spreads[m].mean)
        runs = min(s.runs for s in spreads.values())
        note = f"{primary}: RMSE of PCA minus each GPLVM: " + "; ".join(f"{m} {s.text()}" for m, s in spreads.items())
        if runs < 2:
            out.append(Measured("C4", spreads[worst].mean if runs else math.nan, runs, note=note))
        else:
            out.append(Measured("C4", spreads[worst].mean, runs, low=min(s.low for s in spreads.values()),
                                high=min(s.high for s in spreads.values()), note=note))  # fmt: skip
    rho = rows[rows["method"] == proposed]["uncertainty_spearman"]
    out.append(measured_from_spread("C5", t_interval(rho), f"{primary}: Spearman correlation per seed of {proposed}"))
    out.append(_improves("C6", metrics, comp.get("secondary"), comp))
    gp = metrics[metrics["method"] != "pca"]["crosscheck_relative"]
    if len(gp):
        note = f"largest relative difference over {len(gp)} runs; median {np.median(gp):.2e}"
        out.append(Measured("K1", float(gp.max()), int(len(gp)), note=note))
    else:
        out.append(Measured("K1", math.nan, 0, note="no GPLVM run"))
    return out
