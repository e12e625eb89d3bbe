"""Prediction of the source potential f of test pairs by every predictor of a task, timed per instance.

A predictor is named as in experiment.fitted_models: 'ra_L32', 'oa_L32_s1', 'metaot' (fitted models, read from
their files) and 'sliced_mean_L32' (the ablation without regression, which needs no model). The timing covers
what the method needs to return a plan: the prediction of f, the cost matrix and the c-transform giving g
(the paper recovers the plan from the estimated potentials; here g is the c-transform of f); model loading
stays outside the timed call.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import numpy as np
import torch

from neurips26.amortized_ot import method
from neurips26.amortized_ot.artifacts import load_metaot
from neurips26.amortized_ot.costs import cost_matrix
from neurips26.amortized_ot.data import TASK_COST
from neurips26.amortized_ot.experiment import parse_name, unpack
from neurips26.amortized_ot.sinkhorn import c_transform
from neurips26.amortized_ot.sliced import directions, sliced_potentials
from neurips26.common.io import load_npz
from neurips26.common.timing import timed


def predictor(name: str, model_file: str | Path | None, x, a, y, b, seed: int) -> Callable[[], np.ndarray]:
    """A function computing f for the batch (x, a, y, b); `model_file` is the predictor's saved model (None for
    the sliced mean). `seed` is the base seed: the sliced mean draws its directions from it."""
    if parse_name(name, seed)[0] == "metaot":
        net = load_metaot(model_file, x, y)
        return lambda: net.predict(a, b)
    if name.startswith("sliced_mean"):
        theta = directions(int(name.split("_L")[1]), x.shape[2], seed)
        return lambda: method.sliced_mean_potential(sliced_potentials(x, a, y, b, theta)[0], x.shape[2])
    model = method.FittedModel.from_dict(load_npz(model_file))
    return lambda: method.predict_f(model, x, a, y, b)


def timed_prediction(predict: Callable[[], np.ndarray], x, a, y, cost: str, eps: float) -> tuple[np.ndarray, float]:
    """f from `predict` and the seconds per instance of predicting f and recovering g (cost matrix and
    c-transform included), one timed run after a warm-up."""

    def predict_and_recover():
        f_hat = predict()
        c_transform(torch.as_tensor(f_hat), torch.as_tensor(a), cost_matrix(x, y, cost), eps)
        return f_hat

    f_hat, seconds = timed(predict_and_recover, repeats=1)
    return f_hat, seconds / len(x)


def predict_runs(
    pairs: dict[str, np.ndarray],
    runs: list[tuple[str, str]],
    model_files: dict[str, str],
    task: str,
    eps: float,
    seed: int,
    log=None,
) -> dict[str, dict[str, np.ndarray]]:
    """For every (predictor, test group) run: {'name.group': {'f_hat', 'seconds_per_instance'}}."""
    out = {}
    for name, group in runs:
        p = unpack(pairs, group)
        x, a, y, b = (p[k] for k in "xayb")
        predict = predictor(name, model_files.get(name), x, a, y, b, seed)
        f_hat, per_instance = timed_prediction(predict, x, a, y, TASK_COST[task], eps)
        if log is not None:
            log.info("%s on %s: %d pairs, %.3f ms per instance", name, group, len(x), 1e3 * per_instance)
        out[f"{name}.{group}"] = {"f_hat": f_hat, "seconds_per_instance": np.array(per_instance)}
    return out
