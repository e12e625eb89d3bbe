"""Paper 17's measured values for the claims and checks of ``config/claims/gplvm_assvi.yaml``.

Trained methods are compared over seeds: a seed's runs of every method share the dataset, so differences are paired
by seed and decided by their 95% t interval. "Improves on a metric" (C1, C6) means the paired difference to *both*
mean-field baselines has an interval entirely on the better side: lower RMSE, NLPD, |coverage - 0.95| and distance
to the manifold. The count of improved metrics is then bracketed: ``low`` counts the metrics improved for certain
(both intervals on the better side), ``high`` the metrics not worse for certain (no interval entirely on the worse
side), ``value`` the metrics whose mean differences are both better; with a threshold of ``min_metrics`` the claim
holds when ``low`` reaches it, fails when ``high`` does not, and is inconclusive between.

Evidence must be complete: a metric is left out (and said so) only when no method has a value for it on the dataset
(oil flow has no true manifold); a missing seed or a non-finite value of a compared method (a diverged run's
infinite NLPD, say) leaves the claim inconclusive with the reason in the note, never a comparison of the rest.
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


class Incomplete(ValueError):
    """A compared method lacks a seed or has a non-finite value: the claim cannot be decided."""


def _values(metrics: pd.DataFrame, dataset: str, method: str, column: str) -> pd.Series:
    rows = metrics[(metrics["dataset"] == dataset) & (metrics["method"] == method)]
    return rows.set_index("seed")[column] if column in rows else pd.Series(dtype=float)


def paired(metrics: pd.DataFrame, dataset: str, a: str, b: str, column: str, transform=lambda v: v) -> pd.Series:
    """Per seed, ``transform(a) - transform(b)`` of ``column`` on ``dataset``; :class:`Incomplete` naming the
    problem when a seed of either method is missing or a value is not finite."""
    va, vb = _values(metrics, dataset, a, column), _values(metrics, dataset, b, column)
    if va.empty or vb.empty:
        raise Incomplete(f"{dataset}: no {column} of {a if va.empty else b}")
    if set(va.index) != set(vb.index):
        raise Incomplete(f"{dataset} {column}: seeds {sorted(va.index)} of {a} against {sorted(vb.index)} of {b}")
    bad = [f"{m} seed {s}: {v}" for m, vals in ((a, va), (b, vb)) for s, v in vals.items() if not np.isfinite(v)]
    if bad:
        raise Incomplete(f"{dataset} {column}: non-finite values ({'; '.join(bad)})")
    return (va.map(transform) - vb.map(transform).reindex(va.index)).sort_index()


def _spread(claim_id: str, metrics, dataset, a, b, column, note: str) -> Measured:
    try:
        return measured_from_spread(claim_id, t_interval(paired(metrics, dataset, a, b, column)), note)
    except Incomplete as error:
        return Measured(claim_id, math.nan, 0, note=str(error))


def _improves(claim_id: str, metrics: pd.DataFrame, dataset: str | None, comp: dict) -> Measured:
    if dataset is None:
        return Measured(claim_id, math.nan, 0, note="no dataset named for this comparison at this scale")
    proposed, baselines = comp["proposed"], [comp["free_baseline"], comp["amortized_baseline"]]
    compared = metrics[(metrics["dataset"] == dataset) & metrics["method"].isin([proposed, *baselines])]
    sure, possible, point, parts, seeds = 0, 0, 0, [], []
    for metric, transform in IMPROVEMENT_METRICS.items():
        if metric not in compared or compared[metric].isna().all():
            parts.append(f"{metric}: no values on {dataset} (left out)")
            continue
        try:
            spreads = [t_interval(paired(metrics, dataset, proposed, b, metric, transform)) for b in baselines]
        except Incomplete as error:
            return Measured(claim_id, math.nan, 0, note=str(error))
        seeds.append(min(s.runs for s in spreads))
        better = all(s.high < 0 for s in spreads)  # NaN bounds (one seed) compare False: not sure
        worse = any(s.low > 0 for s in spreads)
        sure += better
        possible += not worse
        point += all(s.mean < 0 for s in spreads)
        parts.append(f"{metric}: " + ", ".join(f"vs {b} {s.text()}" for b, s in zip(baselines, spreads)))
    runs = min(seeds) if seeds else 0
    note = f"{dataset}, {proposed} - baseline per seed (lower is better); " + "; ".join(parts)
    if runs < 2:
        return Measured(claim_id, float(point) if seeds else math.nan, runs, note=note)
    return Measured(claim_id, float(point), runs, low=float(sure), high=float(possible), note=note)


def _elbo_margin(metrics: pd.DataFrame, dataset: str, a: str, b: str, tolerance: float) -> Measured:
    """C3: per seed, ELBO(a) - ELBO(b) per observed entry, plus ``tolerance`` nats per observed entry."""
    try:
        diff = paired(metrics, dataset, a, b, "elbo")
    except Incomplete as error:
        return Measured("C3", math.nan, 0, note=str(error))
    points = _values(metrics, dataset, a, "points").reindex(diff.index)
    observed = _values(metrics, dataset, a, "observed_entries").reindex(diff.index)
    if not (np.isfinite(points).all() and np.isfinite(observed).all() and (points > 0).all() and (observed > 0).all()):
        return Measured("C3", math.nan, 0, note=f"{dataset}: points {list(points)}, observed entries {list(observed)}")
    margin = diff * points / observed + tolerance
    note = f"{dataset}: ELBO of {a} minus {b} per observed entry, plus {tolerance} nats, paired by seed"
    return measured_from_spread("C3", t_interval(margin), note)


def measure_claims(metrics: pd.DataFrame, comp: dict) -> list[Measured]:
    primary = comp["primary"]
    proposed, amortized = comp["proposed"], comp["amortized_baseline"]
    out = [
        _improves("C1", metrics, primary, comp),
        _spread("C2", metrics, primary, proposed, amortized, "nlpd",
                f"{primary}: NLPD of {proposed} minus {amortized}, paired by seed"),
        _elbo_margin(metrics, primary, proposed, amortized, comp["elbo_tolerance"]),
        _pca(metrics, primary, comp["gplvms"]),
        _spread("C5", metrics, primary, proposed, amortized, "error_spearman",
                f"{primary}: Spearman(predictive sd, |error|) over the hidden entries, {proposed} minus {amortized}"),
        _improves("C6", metrics, comp.get("secondary"), comp),
    ]  # fmt: skip
    note = f"{primary}: NLPD of {proposed} minus ssvi_indep (the same encoder and inner steps, no dependence on U)"
    out.append(_spread("C8", metrics, primary, proposed, "ssvi_indep", "nlpd", note))
    broad = comp.get("broad")
    if broad is None:
        out += [Measured(c, math.nan, 0, note="no broad-q(U) dataset at this scale") for c in ("C9", "C10")]
    else:
        out.append(
            _spread(
                "C9",
                metrics,
                broad,
                proposed,
                "ssvi_indep",
                "nlpd",
                f"{broad}: NLPD of {proposed} minus ssvi_indep (no dependence on U), paired by seed",
            )
        )
        out.append(
            _spread(
                "C10",
                metrics,
                broad,
                proposed,
                "ssvi_summary",
                "nlpd",
                f"{broad}: NLPD of {proposed} minus ssvi_summary (one global summary of U), paired by seed",
            )
        )
    dependence = _values(metrics, primary, proposed, "latent_dependence")
    if dependence.empty or not np.isfinite(dependence).all():
        out.append(Measured("C7", math.nan, 0, note=f"{primary}: latent dependence of {proposed}: {list(dependence)}"))
    else:
        out.append(measured_from_spread("C7", t_interval(dependence), f"{primary}: per seed of {proposed}"))
    gp = metrics[metrics["method"] != "pca"]
    out.append(_all_finite("K1", gp["crosscheck_relative"], max, "largest relative difference"))
    out.append(_all_finite("K2", gp["uncertainty_spearman"], min, "smallest Spearman correlation"))
    if "crosscheck_psi_z" in gp:
        out.append(_all_finite("K3", gp["crosscheck_psi_z"].abs(), max, "largest |z|"))
    else:
        out.append(Measured("K3", math.nan, 0, note="no psi-statistics cross-check in the table"))
    given_u = gp[gp["method"].isin(["ssvi_amort", "ssvi_summary", "ssvi_indep"])]
    if "crosscheck_given_u_z" in given_u:
        out.append(_all_finite("K4", given_u["crosscheck_given_u_z"].abs(), max, "largest |z| (structured runs)"))
    else:
        out.append(Measured("K4", math.nan, 0, note="no structured cross-check in the table"))
    return out


def _pca(metrics: pd.DataFrame, dataset: str, gplvms: list[str]) -> Measured:
    """C4: the smallest over GPLVM methods of RMSE(PCA) - RMSE(method), its interval the smallest of each's ends."""
    pca = metrics[(metrics["dataset"] == dataset) & (metrics["method"] == "pca")]["rmse"]
    if len(pca) != 1 or not np.isfinite(pca.iloc[0]):
        return Measured("C4", math.nan, 0, note=f"{dataset}: no finite PCA RMSE ({list(pca)})")
    spreads = {}
    for m in gplvms:
        values = _values(metrics, dataset, m, "rmse")
        if values.empty or not np.isfinite(values).all():
            return Measured("C4", math.nan, 0, note=f"{dataset}: RMSE of {m}: {list(values)}")
        spreads[m] = t_interval(float(pca.iloc[0]) - values)
    worst = min(spreads, key=lambda m: spreads[m].mean)
    runs = min(s.runs for s in spreads.values())
    note = f"{dataset}: RMSE of PCA minus each GPLVM: " + "; ".join(f"{m} {s.text()}" for m, s in spreads.items())
    if runs < 2:
        return Measured("C4", spreads[worst].mean, runs, note=note)
    low, high = min(s.low for s in spreads.values()), min(s.high for s in spreads.values())
    return Measured("C4", spreads[worst].mean, runs, low=low, high=high, note=note)


def _all_finite(claim_id: str, values: pd.Series, pick, what: str) -> Measured:
    """A check over every GPLVM run: NaN (inconclusive) when a run has no finite value."""
    if values.empty:
        return Measured(claim_id, math.nan, 0, note="no GPLVM run")
    if not np.isfinite(values).all():
        return Measured(claim_id, math.nan, 0, note=f"{int((~np.isfinite(values)).sum())} run(s) without a value")
    return Measured(claim_id, float(pick(values)), int(len(values)),
                    note=f"{what} over {len(values)} runs; median {np.median(values):.3g}")  # fmt: skip
