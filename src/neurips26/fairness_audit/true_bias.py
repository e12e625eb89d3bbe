"""The "true bias" of a tuned predictor trained on a feature subset (the abstract: "the true bias of an extensively
tuned neural network trained on the same data"), the quantity the data-side measures are validated against.

- `fit_tuned_classifier`: scikit-learn MLPClassifier behind a StandardScaler, one fit per grid point, the point
  with the lowest validation log-loss kept (ties: the first in grid order). The abstract's "extensively tuned" search
  (optuna, 50 trials) is a paper-scale setting; here it is a small grid. An empty feature set gives the constant
  predictor at the training base rate. The protected attribute is never an input (our choice).
- `bias_gaps`: on hard predictions Yhat in {0, 1}: accuracy, SP gap |P(Yhat=1|A=1) - P(Yhat=1|A=0)|, EO gap
  max_y |P(Yhat=1|A=1,Y=y) - P(Yhat=1|A=0,Y=y)|, and the plug-in (empirical-distribution) I(Yhat;A) and
  I(Yhat;A|Y) in nats.
- `information_bootstrap_se`: test-split bootstrap standard errors of those two plug-in informations (the claim C1
  slack: I(Yhat;A) <= B_SP(S) + 2 SE). The rows are triples of bits, so a resample of the n test rows is a
  multinomial draw of the 8 (Yhat, A, Y) cell counts with the observed cell frequencies: each of `n_boot`
  resamples is one row of counts, and both informations come from the counts, vectorised over resamples.
- `true_bias_table`: one stratified train/val/test split, one tuned fit per coalition, gaps on the test split.
  A coalition is written as its sorted player names joined by '+' ('' for the empty one).
"""

from __future__ import annotations

import json
import warnings
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
from sklearn.exceptions import ConvergenceWarning
from sklearn.metrics import log_loss
from sklearn.neural_network import MLPClassifier
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from .data import AuditData, train_val_test_split

__all__ = [
    "DEFAULT_GRID",
    "GAP_METRICS",
    "N_BOOT",
    "SE_METRICS",
    "GRID_KEYS",
    "ConstantClassifier",
    "TunedModel",
    "bias_gaps",
    "coalition_key",
    "evaluate_coalition",
    "fit_tuned_classifier",
    "information_bootstrap_se",
    "parse_coalition",
    "standard_coalitions",
    "true_bias_table",
]

DEFAULT_GRID = (  # quick scale: hidden 32, two configurations, max_iter 200
    {"hidden_layer_sizes": (32,), "alpha": 1e-4},
    {"hidden_layer_sizes": (32,), "alpha": 1e-2},
)
GRID_KEYS = ("hidden_layer_sizes", "alpha", "learning_rate_init", "max_iter", "batch_size", "activation")
GAP_METRICS = ("accuracy", "sp_gap", "eo_gap", "i_yhat_a", "i_yhat_a_given_y")
SE_METRICS = ("i_yhat_a_se", "i_yhat_a_given_y_se")  # bootstrap standard errors of the two informations
N_BOOT = 200


class ConstantClassifier:
    """Predicts P(Y=1) = `rate` whatever the input (the predictor on the empty feature set)."""

    def __init__(self, rate: float):
        self.rate = float(rate)

    def predict_proba(self, x: np.ndarray) -> np.ndarray:
        n = len(x)
        return np.column_stack([np.full(n, 1 - self.rate), np.full(n, self.rate)])

    def predict(self, x: np.ndarray) -> np.ndarray:
        return np.full(len(x), int(self.rate > 0.5), dtype=np.int8)


@dataclass(frozen=True)
class TunedModel:
    model: Any  # a fitted Pipeline(StandardScaler, MLPClassifier) or a ConstantClassifier
    hparams: dict
    val_log_loss: float

    def predict(self, x: np.ndarray) -> np.ndarray:
        return np.asarray(self.model.predict(x)).astype(np.int8)


def _check_xy(x: np.ndarray, y: np.ndarray, what: str) -> tuple[np.ndarray, np.ndarray]:
    x = np.asarray(x, dtype=np.float64)
    y = np.asarray(y)
    if x.ndim != 2 or y.ndim != 1 or len(x) != len(y):
        raise ValueError(f"{what}: x must be (n, k) and y (n,), got {x.shape} and {y.shape}")
    if not np.all(np.isin(y, (0, 1))):
        raise ValueError(f"{what}: y must be binary 0/1, values seen: {sorted(set(np.unique(y).tolist()))[:10]}")
    return x, y.astype(np.int8)


def _check_grid(grid: Sequence[Mapping]) -> list[dict]:
    grid = [dict(point) for point in grid]
    if not grid:
        raise ValueError("grid is empty: give at least one hyper-parameter setting")
    for point in grid:
        unknown = sorted(set(point) - set(GRID_KEYS))
        if unknown:
            raise ValueError(f"unknown grid key(s) {unknown}; allowed: {list(GRID_KEYS)}")
        if "hidden_layer_sizes" in point:
            sizes = point["hidden_layer_sizes"]
            point["hidden_layer_sizes"] = (int(sizes),) if np.isscalar(sizes) else tuple(int(s) for s in sizes)
    return grid


def fit_tuned_classifier(
    x_train: np.ndarray,
    y_train: np.ndarray,
    x_val: np.ndarray,
    y_val: np.ndarray,
    grid: Sequence[Mapping] = DEFAULT_GRID,
    seed: int = 0,
    max_iter: int = 200,
) -> TunedModel:
    """The grid point (MLP hyper-parameters; `max_iter` unless the point sets it) with the lowest validation
    log-loss. With zero features, the constant predictor at the training base rate (hparams {"constant": rate})."""
    x_train, y_train = _check_xy(x_train, y_train, "training set")
    x_val, y_val = _check_xy(x_val, y_val, "validation set")
    if x_train.shape[1] != x_val.shape[1]:
        raise ValueError(f"training and validation sets have {x_train.shape[1]} and {x_val.shape[1]} features")
    if y_train.min() == y_train.max():
        raise ValueError(f"training labels are all {int(y_train[0])}: a classifier needs both classes")
    grid = _check_grid(grid)
    if x_train.shape[1] == 0:
        rate = float(y_train.mean())
        model = ConstantClassifier(rate)
        loss = float(log_loss(y_val, model.predict_proba(x_val)[:, 1], labels=[0, 1]))
        return TunedModel(model, {"constant": rate}, loss)
    best: TunedModel | None = None
    for point in grid:
        params = {"max_iter": max_iter, **point}
        model = make_pipeline(StandardScaler(), MLPClassifier(random_state=seed, **params))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            model.fit(x_train, y_train)
        loss = float(log_loss(y_val, model.predict_proba(x_val)[:, 1], labels=[0, 1]))
        if best is None or loss < best.val_log_loss:
            best = TunedModel(model, params, loss)
    return best


def _mutual_information(counts: np.ndarray) -> float:
    """Plug-in I in nats from a 2-D contingency table of counts."""
    total = counts.sum()
    if total == 0:
        return 0.0
    joint = counts / total
    outer = joint.sum(axis=1, keepdims=True) * joint.sum(axis=0, keepdims=True)
    nz = joint > 0
    return float(np.sum(joint[nz] * np.log(joint[nz] / outer[nz])))


def bias_gaps(yhat: np.ndarray, a: np.ndarray, y: np.ndarray) -> dict[str, float]:
    """accuracy, sp_gap, eo_gap, i_yhat_a and i_yhat_a_given_y (nats) of binary predictions (module docstring).
    Every (A, Y) cell must be non-empty, else the EO gap is undefined and the error names the empty cells."""
    arrays = {}
    for what, values in (("yhat", yhat), ("a", a), ("y", y)):
        values = np.asarray(values)
        if values.ndim != 1 or not np.all(np.isin(values, (0, 1))):
            raise ValueError(f"{what} must be a binary 0/1 vector; values seen: {np.unique(values).tolist()[:10]}")
        arrays[what] = values.astype(np.int64)
    yhat, a, y = arrays["yhat"], arrays["a"], arrays["y"]
    if not len(yhat) == len(a) == len(y):
        raise ValueError(f"lengths differ: yhat {len(yhat)}, a {len(a)}, y {len(y)}")
    cells = np.bincount(2 * a + y, minlength=4)
    empty = [f"(A={c // 2}, Y={c % 2})" for c in range(4) if cells[c] == 0]
    if empty:
        raise ValueError(f"empty cell(s) {', '.join(empty)}: SP and EO gaps need every (A, Y) cell")
    positive = np.bincount(2 * a + y, weights=yhat, minlength=4)
    rate_ay = positive / cells  # P(Yhat=1 | A=a, Y=y), index 2a + y
    rate_a = np.array([positive[0:2].sum() / cells[0:2].sum(), positive[2:4].sum() / cells[2:4].sum()])
    counts_ya = np.bincount(2 * yhat + a, minlength=4).reshape(2, 2)  # rows Yhat, columns A
    i_given_y = 0.0
    for label in (0, 1):
        rows = y == label
        table = np.bincount(2 * yhat[rows] + a[rows], minlength=4).reshape(2, 2)
        i_given_y += rows.mean() * _mutual_information(table)
    return {
        "accuracy": float(np.mean(yhat == y)),
        "sp_gap": float(abs(rate_a[1] - rate_a[0])),
        "eo_gap": float(max(abs(rate_ay[2] - rate_ay[0]), abs(rate_ay[3] - rate_ay[1]))),
        "i_yhat_a": _mutual_information(counts_ya),
        "i_yhat_a_given_y": float(i_given_y),
    }


def _xlogy_ratio(joint: np.ndarray, numerator: np.ndarray, denominator: np.ndarray) -> np.ndarray:
    """Elementwise p log(p num / den), 0 where p = 0 (then num and den may be 0 too)."""
    safe = joint > 0
    ratio = np.where(safe, joint * numerator, 1.0) / np.where(safe, denominator, 1.0)
    return np.where(safe, joint * np.log(ratio), 0.0)


def _informations_from_counts(counts: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Plug-in I(Yhat;A) and I(Yhat;A|Y) (nats) of cell counts `(..., 2, 2, 2)` indexed [Yhat, A, Y]."""
    p = counts / counts.sum(axis=(-3, -2, -1), keepdims=True)
    p_ha = p.sum(axis=-1)  # [Yhat, A]
    p_h, p_a = p_ha.sum(axis=-1, keepdims=True), p_ha.sum(axis=-2, keepdims=True)
    i_ha = _xlogy_ratio(p_ha, 1.0, p_h * p_a).sum(axis=(-2, -1))
    p_y = p.sum(axis=(-3, -2), keepdims=True)
    p_hy, p_ay = p.sum(axis=-2, keepdims=True), p.sum(axis=-3, keepdims=True)
    i_ha_y = _xlogy_ratio(p, p_y, p_hy * p_ay).sum(axis=(-3, -2, -1))
    return i_ha, i_ha_y


def information_bootstrap_se(
    yhat: np.ndarray, a: np.ndarray, y: np.ndarray, n_boot: int = N_BOOT, seed: int = 0
) -> dict[str, float]:
    """Bootstrap standard errors (ddof 1) of the plug-in I(Yhat;A) and I(Yhat;A|Y) over `n_boot` resamples of the
    rows (module docstring: multinomial cell counts, no loop over rows), as {"i_yhat_a_se", "i_yhat_a_given_y_se"}.
    The inputs are binary 0/1 vectors of one length (checked by the caller, `bias_gaps`)."""
    if n_boot < 2:
        raise ValueError(f"n_boot must be >= 2 for a standard error, got {n_boot}")
    yhat, a, y = (np.asarray(v, dtype=np.int64) for v in (yhat, a, y))
    observed = np.bincount(4 * yhat + 2 * a + y, minlength=8)
    rng = np.random.default_rng(seed)
    counts = rng.multinomial(len(yhat), observed / observed.sum(), size=n_boot).reshape(n_boot, 2, 2, 2)
    i_ha, i_ha_y = _informations_from_counts(counts.astype(np.float64))
    return {"i_yhat_a_se": float(np.std(i_ha, ddof=1)), "i_yhat_a_given_y_se": float(np.std(i_ha_y, ddof=1))}


# ---------------------------------------------------------------------------------------------------------------------
# Coalitions


def coalition_key(players: Iterable[str]) -> str:
    """Sorted player names joined by '+' ('' for the empty coalition). Names may not contain '+'."""
    players = [players] if isinstance(players, str) else list(players)
    bad = [p for p in players if not p or "+" in p]
    if bad:
        raise ValueError(f"player names must be non-empty and free of '+', got {bad}")
    if len(set(players)) != len(players):
        raise ValueError(f"player(s) named twice in coalition {players}")
    return "+".join(sorted(players))


def parse_coalition(key: str) -> tuple[str, ...]:
    return tuple(key.split("+")) if key else ()


def standard_coalitions(players: Sequence[str], empty: bool = False) -> list[tuple[str, ...]]:
    """The quick S-grid: the full set, every leave-one-out set and every singleton (and () if `empty`),
    without duplicates (d = 1 or 2 make some of them coincide)."""
    players = tuple(players)
    sets = [players] + [tuple(p for p in players if p != q) for q in players] + [(p,) for p in players]
    sets = sets + [()] if empty else [s for s in sets if s]
    out: dict[str, tuple[str, ...]] = {}
    for s in sets:
        out.setdefault(coalition_key(s), s)
    return list(out.values())


def evaluate_coalition(
    train: AuditData,
    val: AuditData,
    test: AuditData,
    coalition: Iterable[str],
    grid: Sequence[Mapping] = DEFAULT_GRID,
    seed: int = 0,
    max_iter: int = 200,
    n_boot: int = N_BOOT,
) -> dict[str, Any]:
    """Tune on (train, val) with the coalition's columns, then the gaps on test and the bootstrap SEs of the two
    informations (`n_boot` resamples of the test rows, seeded by `seed`); plus hparams and val_log_loss."""
    players = [coalition] if isinstance(coalition, str) else list(coalition)
    tuned = fit_tuned_classifier(train.block(players), train.y, val.block(players), val.y, grid, seed, max_iter)
    yhat = tuned.predict(test.block(players))
    gaps = bias_gaps(yhat, test.a, test.y)
    errors = information_bootstrap_se(yhat, test.a, test.y, n_boot, seed)
    return {**gaps, **errors, "val_log_loss": tuned.val_log_loss, "hparams": tuned.hparams}


def true_bias_table(
    data: AuditData,
    coalitions: Iterable[Iterable[str]],
    split: Sequence[float] = (0.6, 0.2, 0.2),
    grid: Sequence[Mapping] = DEFAULT_GRID,
    seed: int = 0,
    max_iter: int = 200,
    n_boot: int = N_BOOT,
) -> pd.DataFrame:
    """One row per coalition: dataset, coalition, size, seed, the GAP_METRICS on the test split, their SE_METRICS
    (bootstrap over the test rows, `n_boot` resamples), val_log_loss and hparams (a JSON string). The split is
    stratified on (A, Y) with `seed`; the MLPs and the bootstrap use `seed` too."""
    train, val, test = train_val_test_split(data, split, seed)
    rows, seen = [], set()
    for coalition in coalitions:
        players = [coalition] if isinstance(coalition, str) else list(coalition)
        key = coalition_key(players)
        if key in seen:
            raise ValueError(f"coalition {key!r} is listed twice")
        seen.add(key)
        result = evaluate_coalition(train, val, test, players, grid, seed, max_iter, n_boot)
        rows.append(
            {
                "dataset": data.name,
                "coalition": key,
                "size": len(players),
                "seed": seed,
                **{m: result[m] for m in (*GAP_METRICS, *SE_METRICS)},
                "val_log_loss": result["val_log_loss"],
                "hparams": json.dumps(result["hparams"], sort_keys=True),
            }
        )
    return pd.DataFrame(
        rows, columns=["dataset", "coalition", "size", "seed", *GAP_METRICS, *SE_METRICS, "val_log_loss", "hparams"]
    )
