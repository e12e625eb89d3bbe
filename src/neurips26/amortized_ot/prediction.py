"""Prediction of the source potential f of test pairs by every predictor of a task, timed per instance beside
cold Sinkhorn.

A predictor is named as in experiment.fitted_models: 'ra_L32', 'oa_L32_s1', 'metaot' (fitted models, read from
their files) and 'sliced_mean_L32' (the ablation without regression, which needs no model). The timing covers
what the method needs to return a plan: the prediction of f, the cost matrix and the c-transform giving g
(the paper recovers the plan from the estimated potentials; here g is the c-transform of f); model loading
stays outside the timed call. In the same job and the same way (batched over the group's pairs, in turn), cold
Sinkhorn is timed to the marginal error of each prediction (speed.side_by_side): the two times claim C5 compares.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import numpy as np

from neurips26.amortized_ot import method
from neurips26.amortized_ot.artifacts import load_metaot
from neurips26.amortized_ot.data import TASK_COST
from neurips26.amortized_ot.experiment import parse_name, unpack
from neurips26.amortized_ot.sliced import directions, sliced_potentials
from neurips26.amortized_ot.speed import side_by_side
from neurips26.common.io import load_npz


def predictor(name: str, model_file: str | Path | None, x, a, y, b, seed: int) -> Callable[[], np.ndarray]:
    """A function computing f for the batch (x, a, y, b); `model_file` is the predictor's saved model (None for
    the sliced mean). `seed` is the base seed; the sliced mean draws its directions from the fit seed its name
    gives ('sliced_mean_L32_s1': seed 1, the directions of ra_L32_s1 and oa_L32_s1; 'sliced_mean_L32': the base
    seed)."""
    kind, projections, fit_seed = parse_name(name, seed)
    if kind == "metaot":
        net = load_metaot(model_file, x, y)
        return lambda: net.predict(a, b)
    if kind == "sliced_mean":
        theta = directions(projections, x.shape[2], fit_seed)
        return lambda: method.sliced_mean_potential(sliced_potentials(x, a, y, b, theta)[0], x.shape[2])
    model = method.FittedModel.from_dict(load_npz(model_file))
    return lambda: method.predict_f(model, x, a, y, b)


def predict_runs(
    pairs: dict[str, np.ndarray],
    runs: list[tuple[str, str]],
    model_files: dict[str, str],
    task: str,
    eps: float,
    seed: int,
    tol: float,
    max_iter: int,
    log=None,
) -> dict[str, dict[str, np.ndarray]]:
    """For every (predictor, test group) run: {'name.group': {'f_hat', 'seconds_per_instance',
    'cold_seconds_per_instance', 'cold_iterations'}}: the prediction, its time per instance and that of cold
    Sinkhorn to its marginal error (at most `max_iter` iterations; a prediction more accurate than `tol` is matched
    at `tol`), and each pair's matched cold iterations (0: cold Sinkhorn's starting plan is already as accurate)."""
    out = {}
    for name, group in runs:
        p = unpack(pairs, group)
        x, a, y, b = (p[k] for k in "xayb")
        predict = predictor(name, model_files.get(name), x, a, y, b, seed)
        run = side_by_side(predict, x, a, y, b, TASK_COST[task], eps, tol, max_iter)
        if log is not None:
            log.info(
                "%s on %s: %d pairs, %.3f ms per instance; cold Sinkhorn to its marginal error (median %.3g) "
                "%.3f ms per instance, %.2f iterations on average",
                name,
                group,
                len(x),
                1e3 * run.seconds_per_instance,
                np.median(run.marginal_error),
                1e3 * run.cold_seconds_per_instance,
                np.mean(run.cold_iterations),
            )
        out[f"{name}.{group}"] = {
            "f_hat": run.f_hat,
            "seconds_per_instance": np.array(run.seconds_per_instance),
            "cold_seconds_per_instance": np.array(run.cold_seconds_per_instance),
            "cold_iterations": np.asarray(run.cold_iterations),
        }
    return out
