r"""Telling noise-induced from learning-rate-induced divergence by the activations (Zhang et al. 2026, arXiv
2602.02400: "noise-induced divergences exhibit activation patterns distinct from those caused by high learning
rates ... we provide diagnostics that differentiate these two failure modes"). The paper's diagnostics could not be
read here; features and classifier are our reconstruction from the quantities of Wortsman et al. 2023.

Features of a run at a step t (the diagnostic step at or before a divergence's onset, or the last one), each the
log-ratio to the run's first diagnostic step:

* ``depth_of_growth``: the normalised depth (0 = first layer, 1 = last) of the layer whose max attention logit grew
  most; ``growth_concentration``: that layer's log growth minus the median layer's;
* ``attn_logit_growth``: log growth of the largest max attention logit over layers;
* ``output_logit_growth``: of the largest |output logit|; ``resid_growth``: of the largest residual RMS over layers;
* ``update_growth``: of the update norm.

:func:`loso` fits a standardised logistic regression (scikit-learn) on all seeds but one and predicts the held-out
seed's runs, for every seed; accuracy is over all held-out predictions. It is skipped, with the reason as data, when
either class has fewer than ``min_per_class`` runs or the runs span fewer than 2 seeds.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

__all__ = ["FEATURES", "features_at", "loso"]

FEATURES = (
    "depth_of_growth",
    "growth_concentration",
    "attn_logit_growth",
    "output_logit_growth",
    "resid_growth",
    "update_growth",
)


def _log_ratio(a: float, b: float) -> float:
    return math.log(max(a, 1e-12) / max(b, 1e-12)) if math.isfinite(a) and math.isfinite(b) else math.nan


def features_at(diag: pd.DataFrame, steps: pd.DataFrame, step: int) -> dict:
    """The features of one run at the last diagnostic step <= ``step`` (``diag``: the run's rows of
    ``diag.parquet``; ``steps``: its rows of ``curves.parquet``); NaN features when no diagnostic step precedes."""
    recorded = np.sort(diag["step"].unique())
    at = recorded[recorded <= step]
    if len(at) < 2:
        return dict.fromkeys(FEATURES, math.nan)
    first, last = (
        diag[diag["step"] == recorded[0]].sort_values("layer"),
        diag[diag["step"] == at[-1]].sort_values("layer"),
    )
    growth = np.log(np.maximum(last["max_logit"].to_numpy(), 1e-12)) - np.log(
        np.maximum(first["max_logit"].to_numpy(), 1e-12)
    )
    layers = len(growth)
    top = int(np.argmax(growth))
    rows = steps.set_index("step")
    return {
        "depth_of_growth": top / max(1, layers - 1),
        "growth_concentration": float(growth[top] - np.median(growth)),
        "attn_logit_growth": _log_ratio(last["max_logit"].max(), first["max_logit"].max()),
        "output_logit_growth": _log_ratio(rows.at[at[-1], "logit_max"], rows.at[recorded[0], "logit_max"]),
        "resid_growth": _log_ratio(last["resid_rms"].max(), first["resid_rms"].max()),
        "update_growth": _log_ratio(rows.at[at[-1], "update_norm"], rows.at[recorded[0], "update_norm"]),
    }


def loso(frame: pd.DataFrame, label: str, min_per_class: int, C: float = 1.0) -> dict:
    """Leave-one-seed-out accuracy of a logistic regression of ``label`` (0/1) on :data:`FEATURES` over the rows
    of ``frame`` (one per run, with ``seed``); rows with a non-finite feature are dropped first. Returns
    ``status`` (``ok`` or ``skipped``), ``reason``, ``n``, the class counts, ``accuracy``, ``folds`` and the
    coefficients of the fit on every row."""
    data = frame.replace([np.inf, -np.inf], np.nan).dropna(subset=list(FEATURES))
    counts = data[label].value_counts()
    n0, n1 = int(counts.get(0, 0)), int(counts.get(1, 0))
    seeds = sorted(data["seed"].unique())
    out = {"n": len(data), "n_class0": n0, "n_class1": n1, "folds": len(seeds), "accuracy": math.nan, "reason": ""}
    out.update({f"coef_{f}": math.nan for f in FEATURES})
    if min(n0, n1) < min_per_class:
        return {
            **out,
            "status": "skipped",
            "reason": f"too few runs per class: {n0} and {n1}, fewer than min_per_class {min_per_class}",
        }
    if len(seeds) < 2:
        return {**out, "status": "skipped", "reason": f"the runs span {len(seeds)} seed(s): nothing to leave out"}
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    def model():
        return make_pipeline(StandardScaler(), LogisticRegression(C=C, max_iter=1000))

    X, y, groups = data[list(FEATURES)].to_numpy(float), data[label].to_numpy(int), data["seed"].to_numpy()
    correct = 0
    for seed in seeds:
        train, test = groups != seed, groups == seed
        if len(np.unique(y[train])) < 2:  # one class only in the training folds: predict it
            correct += int(np.sum(y[test] == y[train][0]))
            continue
        correct += int(np.sum(model().fit(X[train], y[train]).predict(X[test]) == y[test]))
    full = model().fit(X, y)
    coefs = full[-1].coef_[0]
    return {
        **out,
        "status": "ok",
        "accuracy": correct / len(y),
        **{f"coef_{f}": float(c) for f, c in zip(FEATURES, coefs)},
    }
