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
* ``update_growth``: of the update norm;
* read on the noisy probe that every run shares (:func:`.streams.probe_stream`) and on the run's gradients
  (:mod:`.training`): ``noise_mass_growth``, the log growth of the largest over layers of the attention mass from
  clean queries onto noise keys over its uniform-attention value; ``embed_noise_growth``, the log growth of the
  reference noise ids' mean embedding row norm over the median row norm; ``grad_growth``, the log growth of the
  largest block gradient norm.

Every feature is a change from the run's first diagnostic step, on inputs identical for every run: issue 40's review
found that levels (noise mass, embedding ratio) read on each run's own probe encoded whether a run had trained on
noise, which separates the classes without any divergence. :func:`loso` is therefore also run on the runs that did
not diverge (noise-trained at the base rate against clean at the raised rate): that balanced accuracy is the null of
the onset classifier's (what the features tell apart without a divergence).

The classifier reads :data:`FEATURES` only, not :data:`CELL_FEATURES` (computed and kept in the features table): the
two classes are runs of different cells (noisy data at the base rate against clean data at a raised rate), and these
three read the cell, whatever happens at a divergence (the second review of issue 40: with them the null scored 1.000
at quick scale). ``noise_mass_growth`` and ``embed_noise_growth`` read how the model treats the reference noise ids,
which only a noise-trained run sees often in training (they are rare in clean text: their embeddings get little input
gradient and decay); ``update_growth`` is the growth of the weights' change per step, whose size the learning-rate
multiplier sets (in the ratio to the first diagnostic step the multiplier cancels only as far as AdamW's normalised
step and the weights behave alike at both rates: it encodes the rate less directly than the other two the noise, and
its quick ranges overlap between the cells). Dropping them is the simpler of the review's two fixes (the other:
differences from the non-diverged runs of the same cell, which need such runs in every cell and their features at each
onset step). The remaining features may still differ between the cells without a divergence; the null measures by how
much, and a null that reaches the threshold leaves the onset classifier's verdict inconclusive.

:func:`loso` fits a standardised logistic regression (scikit-learn) on all seeds but one and predicts the held-out
seed's runs, for every seed; the score is the balanced accuracy over all held-out predictions (the mean of the two
classes' recalls, so that guessing the larger class scores 0.5), with a percentile bootstrap over seeds. It is
skipped, with the reason as data, when either class has fewer than ``min_per_class`` runs or the runs span fewer
than 2 seeds.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

__all__ = ["CELL_FEATURES", "FEATURES", "RECORDED", "balanced_accuracy", "features_at", "loso", "seed_bootstrap"]

RECORDED = (
    "depth_of_growth",
    "growth_concentration",
    "attn_logit_growth",
    "output_logit_growth",
    "resid_growth",
    "update_growth",
    "noise_mass_growth",
    "embed_noise_growth",
    "grad_growth",
)
# what records a run's cell (learning rate, noise-trained or not) by construction: kept in the table, not classified
CELL_FEATURES = ("update_growth", "noise_mass_growth", "embed_noise_growth")
FEATURES = tuple(f for f in RECORDED if f not in CELL_FEATURES)


def _log_ratio(a: float, b: float) -> float:
    return math.log(max(a, 1e-12) / max(b, 1e-12)) if math.isfinite(a) and math.isfinite(b) else math.nan


def features_at(diag: pd.DataFrame, steps: pd.DataFrame, step: int) -> dict:
    """The :data:`RECORDED` features of one run at the last diagnostic step <= ``step`` (``diag``: the run's rows of
    ``diag.parquet``; ``steps``: its rows of ``curves.parquet``); NaN features when no diagnostic step precedes."""
    recorded = np.sort(diag["step"].unique())
    at = recorded[recorded <= step]
    if len(at) < 2:
        return dict.fromkeys(RECORDED, math.nan)
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
    grads_first, grads_last = _column(first, "block_grad_norm"), _column(last, "block_grad_norm")
    return {
        "depth_of_growth": top / max(1, layers - 1),
        "growth_concentration": float(growth[top] - np.median(growth)),
        "attn_logit_growth": _log_ratio(last["max_logit"].max(), first["max_logit"].max()),
        "output_logit_growth": _log_ratio(rows.at[at[-1], "logit_max"], rows.at[recorded[0], "logit_max"]),
        "resid_growth": _log_ratio(last["resid_rms"].max(), first["resid_rms"].max()),
        "update_growth": _log_ratio(rows.at[at[-1], "update_norm"], rows.at[recorded[0], "update_norm"]),
        "noise_mass_growth": _log_ratio(
            float(np.max(_column(last, "noise_mass_ratio"))), float(np.max(_column(first, "noise_mass_ratio")))
        ),
        "embed_noise_growth": _log_ratio(
            rows.at[at[-1], "embed_noise_ratio"], rows.at[recorded[0], "embed_noise_ratio"]
        )
        if "embed_noise_ratio" in rows
        else math.nan,
        "grad_growth": _log_ratio(float(np.max(grads_last)), float(np.max(grads_first))),
    }


def _column(rows: pd.DataFrame, name: str) -> np.ndarray:
    """A diagnostic column of one step's layer rows (NaN where the tables predate it)."""
    return rows[name].to_numpy(float) if name in rows else np.full(len(rows), math.nan)


def balanced_accuracy(y: np.ndarray, pred: np.ndarray) -> float:
    """Mean of the two classes' recalls (NaN when a class is absent): guessing the larger class scores 0.5."""
    recalls = [float(np.mean(pred[y == c] == c)) for c in (0, 1) if np.any(y == c)]
    return float(np.mean(recalls)) if len(recalls) == 2 else math.nan


def seed_bootstrap(y, pred, groups, resamples: int = 2000, level: float = 0.95, seed: int = 0) -> tuple[float, float]:
    """Percentile interval of the balanced accuracy when the seeds (the folds) are resampled with replacement: the
    runs of one seed share an initialisation, so seeds, not runs, are the independent units."""
    rng = np.random.default_rng(seed)
    seeds = np.unique(groups)
    rows = {g: np.flatnonzero(groups == g) for g in seeds}
    draws = []
    for _ in range(resamples):
        take = np.concatenate([rows[g] for g in rng.choice(seeds, size=len(seeds))])
        draws.append(balanced_accuracy(y[take], pred[take]))
    draws = np.asarray([d for d in draws if math.isfinite(d)])
    if not len(draws):
        return math.nan, math.nan
    tail = (1 - level) / 2
    low, high = np.quantile(draws, [tail, 1 - tail])
    return float(low), float(high)


def loso(frame: pd.DataFrame, label: str, min_per_class: int, C: float = 1.0) -> tuple[dict, pd.Series]:
    """Leave-one-seed-out logistic regression of ``label`` (0/1) on :data:`FEATURES` over the rows of ``frame`` (one
    per run, with ``seed``); rows with a non-finite feature are dropped first. Returns (summary, predictions indexed
    like the rows used): ``status`` (``ok`` or ``skipped``), ``reason``, ``n``, the class counts, ``folds``,
    ``balanced_accuracy`` with its bootstrap interval over seeds (``low``, ``high``), plain ``accuracy`` and the
    coefficients of the fit on every row."""
    data = frame.replace([np.inf, -np.inf], np.nan).dropna(subset=list(FEATURES))
    counts = data[label].value_counts()
    n0, n1 = int(counts.get(0, 0)), int(counts.get(1, 0))
    seeds = sorted(data["seed"].unique())
    out = {
        "n": len(data),
        "n_class0": n0,
        "n_class1": n1,
        "folds": len(seeds),
        "balanced_accuracy": math.nan,
        "low": math.nan,
        "high": math.nan,
        "accuracy": math.nan,
        "reason": "",
    }
    out.update({f"coef_{f}": math.nan for f in FEATURES})
    none = pd.Series(dtype=float)
    if min(n0, n1) < min_per_class:
        return {
            **out,
            "status": "skipped",
            "reason": f"too few runs per class: {n0} and {n1}, fewer than min_per_class {min_per_class}",
        }, none
    if len(seeds) < 2:
        return {**out, "status": "skipped", "reason": f"the runs span {len(seeds)} seed(s): nothing to leave out"}, none
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    def model():
        return make_pipeline(StandardScaler(), LogisticRegression(C=C, max_iter=1000))

    X, y, groups = data[list(FEATURES)].to_numpy(float), data[label].to_numpy(int), data["seed"].to_numpy()
    pred = np.empty_like(y)
    for seed in seeds:
        train, test = groups != seed, groups == seed
        if len(np.unique(y[train])) < 2:  # one class only in the training folds: predict it
            pred[test] = y[train][0]
            continue
        pred[test] = model().fit(X[train], y[train]).predict(X[test])
    low, high = seed_bootstrap(y, pred, groups)
    coefs = model().fit(X, y)[-1].coef_[0]
    summary = {
        **out,
        "status": "ok",
        "balanced_accuracy": balanced_accuracy(y, pred),
        "low": low,
        "high": high,
        "accuracy": float(np.mean(pred == y)),
        **{f"coef_{f}": float(c) for f, c in zip(FEATURES, coefs)},
    }
    return summary, pd.Series(pred, index=data.index)
