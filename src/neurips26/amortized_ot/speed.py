"""Prediction time against cold Sinkhorn at equal marginal error, measured side by side in one job (claim C5),
and the profile of a prediction before and after the closed-form sliced duals.

Both sides are timed the same way: batched over all pairs of a test group, wall clock divided by the number of
pairs, after a warm-up, TIMING_REPEATS runs taken in turn (prediction, cold, prediction, ...) so that a
change of machine load hits both, and the median of each. Both sides build the cost matrix, and both return the
potentials (f, g) of a plan whose nu-marginal is exact (g is the c-transform of f):

- prediction: f from the predictor, then g by the c-transform (what the method needs to return a plan);
- cold Sinkhorn: f = 0 and g by the c-transform, then k_p Sinkhorn iterations (an f-update and a g-update each)
  for pair p, where k_p is the first iteration at which the pair's marginal error is below the prediction's
  (or below the evaluation tolerance, if the prediction is more accurate than that). The k_p are read off an
  untimed error trajectory, so the timed solve stops exactly there and computes no marginal errors, as the
  timed prediction computes none either.
"""

from __future__ import annotations

import cProfile
import pstats
import time
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import pandas as pd
import torch

from neurips26.amortized_ot.costs import cost_matrix
from neurips26.amortized_ot.sinkhorn import c_transform, c_transform_rows, chunks, error_trajectory, first_below

TIMING_REPEATS = 3
# the profile times at most this many test pairs (the route before builds the design matrix of all of them at
# once: 7 GB for 200 colour pairs of 1024 colours at L = 128)
PROFILE_PAIRS = 50


def in_chunks(transform, potential: torch.Tensor, weights: torch.Tensor, cost: torch.Tensor, eps: float):
    """A c-transform (sinkhorn.c_transform or c_transform_rows) a cache-sized block of pairs at a time
    (sinkhorn.chunks); the same numbers as one call on all pairs."""
    return torch.cat([transform(potential[p], weights[p], cost[p], eps) for p in chunks(*cost.shape)])


def recover_plan(f_hat: np.ndarray, x, a, y, cost: str, eps: float) -> tuple[torch.Tensor, torch.Tensor]:
    """What a predicted f needs to become a plan: the cost matrix and g = c-transform of f."""
    f = torch.as_tensor(f_hat, dtype=torch.float64)
    return f, in_chunks(c_transform, f, torch.as_tensor(a), cost_matrix(x, y, cost), eps)


def cold_solve(x, a, y, b, cost: str, eps: float, iterations: np.ndarray) -> tuple[torch.Tensor, torch.Tensor]:
    """Sinkhorn from f = 0: the cost matrix, g = c-transform of f, then iterations[p] rounds (f-update,
    g-update) for pair p. The pairs must come in decreasing order of iterations, so that the pairs still
    iterating are a leading block."""
    if np.any(np.diff(iterations) > 0):
        raise ValueError("cold_solve needs the pairs in decreasing order of iterations")
    a_t, b_t = torch.as_tensor(a), torch.as_tensor(b)
    C = cost_matrix(x, y, cost)
    f = torch.zeros_like(a_t)
    g = in_chunks(c_transform, f, a_t, C, eps)
    for it in range(int(iterations[0]) if len(iterations) else 0):
        q = int(np.searchsorted(-iterations, -it, side="left"))  # pairs with more than `it` iterations
        f[:q] = in_chunks(c_transform_rows, g[:q], b_t[:q], C[:q], eps)
        g[:q] = in_chunks(c_transform, f[:q], a_t[:q], C[:q], eps)
    return f, g


def cold_solver(x, a, y, b, cost: str, eps: float, iterations: np.ndarray) -> Callable[[], object]:
    """cold_solve of these pairs with iterations[p] for pair p, as a call without arguments (the pairs are
    put in decreasing order of iterations first, outside the call)."""
    order = np.argsort(-iterations, kind="stable")
    ordered = (x[order], a[order], y[order], b[order])
    return lambda: cold_solve(*ordered, cost, eps, iterations[order])


def marginal_errors(f_hat: np.ndarray, x, a, y, b, cost: str, eps: float) -> np.ndarray:
    """L1 error of both marginals of the plan of (f, c-transform of f), per pair (as metrics.potential_metrics),
    a block of pairs at a time (the plans of all pairs at once would not fit in memory at paper scale)."""
    from neurips26.amortized_ot.metrics import potentials_from_f
    from neurips26.amortized_ot.sinkhorn import marginal_error, plan

    errors = []
    for p in chunks(*f_hat.shape, y.shape[1]):
        C = cost_matrix(x[p], y[p], cost)
        f, g = potentials_from_f(f_hat[p], a[p], b[p], C, eps)
        a_t, b_t = torch.as_tensor(a[p]), torch.as_tensor(b[p])
        errors.append(marginal_error(plan(f, g, a_t, b_t, C, eps), a_t, b_t).numpy())
    return np.concatenate(errors)


def matched_iterations(error: np.ndarray, a, b, C: torch.Tensor, eps: float, tol: float, max_iter: int):
    """Cold-start iterations until each pair's marginal error is below max(error, tol) (max_iter if never)
    and the cold errors reached there."""
    target = np.maximum(error, tol)
    trajectory, _ = error_trajectory(
        torch.zeros(a.shape, dtype=torch.float64), torch.as_tensor(a), torch.as_tensor(b), C, eps, target, max_iter
    )
    k = first_below(trajectory, target, max_iter)
    return k, trajectory[np.arange(len(k)), np.minimum(k, trajectory.shape[1] - 1)]


def alternate(
    fns: dict[str, Callable[[], object]], repeats: int = TIMING_REPEATS, warm: bool = True
) -> dict[str, float]:
    """Median wall seconds of each function, timed in turn `repeats` times, after one warm-up call each
    (`warm`; pass False where each has just run)."""
    for fn in fns.values() if warm else ():
        fn()
    times: dict[str, list[float]] = {name: [] for name in fns}
    for _ in range(repeats):
        for name, fn in fns.items():
            start = time.perf_counter()
            fn()
            times[name].append(time.perf_counter() - start)
    return {name: float(np.median(t)) for name, t in times.items()}


@dataclass(frozen=True)
class SideBySide:
    """A prediction and the cold Sinkhorn solve to the same marginal error, timed in turn (seconds per pair)."""

    f_hat: np.ndarray  # (P, n)
    seconds_per_instance: float  # prediction and plan recovery
    cold_seconds_per_instance: float  # cold Sinkhorn to the prediction's marginal error
    marginal_error: np.ndarray  # (P,) of the predicted plan
    cold_iterations: np.ndarray  # (P,) matched iterations k_p
    cold_error: np.ndarray  # (P,) cold Sinkhorn's marginal error after k_p iterations


def side_by_side(
    predict: Callable[[], np.ndarray],
    x,
    a,
    y,
    b,
    cost: str,
    eps: float,
    tol: float,
    max_iter: int,
    repeats: int = TIMING_REPEATS,
) -> SideBySide:
    """Time `predict` (with its plan recovery) and cold Sinkhorn to the same marginal error on the same pairs."""
    f_hat = predict()
    error = marginal_errors(f_hat, x, a, y, b, cost, eps)
    k, cold_error = matched_iterations(error, a, b, cost_matrix(x, y, cost), eps, tol, max_iter)
    cold = cold_solver(x, a, y, b, cost, eps, k)
    cold()  # the warm-up of both: the prediction, the cost matrix and c-transforms have run above
    seconds = alternate(
        {"prediction": lambda: recover_plan(predict(), x, a, y, cost, eps), "cold": cold}, repeats, warm=False
    )
    P = len(x)
    return SideBySide(f_hat, seconds["prediction"] / P, seconds["cold"] / P, error, k, cold_error)


# --------------------------------------------------------------------------- profile before / after


def profile_top(fn: Callable[[], object], n_pairs: int, runs: int, top: int = 12) -> pd.DataFrame:
    """cProfile of `runs` calls of fn: the `top` functions by own time, in ms per instance."""
    profiler = cProfile.Profile()
    profiler.enable()
    for _ in range(runs):
        fn()
    profiler.disable()
    stats = pstats.Stats(profiler).stats
    rows = []
    for (path, line, name), (_, calls, own, cumulative, _) in stats.items():
        where = name if path == "~" else f"{path.rsplit('site-packages/', 1)[-1].rsplit('src/', 1)[-1]}:{line}({name})"
        rows.append(
            {
                "function": where,
                "calls_per_run": calls / runs,
                "own_ms_per_instance": 1e3 * own / runs / n_pairs,
                "cumulative_ms_per_instance": 1e3 * cumulative / runs / n_pairs,
            }
        )
    table = pd.DataFrame(rows).sort_values("own_ms_per_instance", ascending=False, kind="stable").head(top)
    return table.reset_index(drop=True)


def predict_f_before(model, x, a, y, b) -> np.ndarray:
    """RA/OA's f as predict_f computed it before: POT's autograd duals and the design matrix of all pairs."""
    from neurips26.amortized_ot.method import design_matrix, rbf_basis
    from neurips26.amortized_ot.sliced import sliced_potentials_backprop

    phi, _ = sliced_potentials_backprop(x, a, y, b, model.theta)
    return design_matrix(rbf_basis(x, model.centres, model.bandwidth), phi) @ model.coef


def recover_plan_before(f_hat: np.ndarray, x, a, y, cost: str, eps: float) -> torch.Tensor:
    """The plan recovery timed before: one c-transform of all pairs at once."""
    return c_transform(torch.as_tensor(f_hat), torch.as_tensor(a), cost_matrix(x, y, cost), eps)


def _stages(model, x, a, y, b, cost: str, eps: float, f_hat: np.ndarray) -> dict[str, dict[str, Callable]]:
    """The steps of a prediction and of the cold solve, each callable on its own (inputs precomputed)."""
    from neurips26.amortized_ot.method import design_matrix, functional_potential, rbf_basis
    from neurips26.amortized_ot.sliced import sliced_potentials, sliced_potentials_backprop

    phi, _ = sliced_potentials(x, a, y, b, model.theta)
    basis = rbf_basis(x, model.centres, model.bandwidth)
    design = design_matrix(basis, phi)
    C = cost_matrix(x, y, cost)
    f, a_t, b_t = torch.as_tensor(f_hat), torch.as_tensor(a), torch.as_tensor(b)
    g = in_chunks(c_transform, f, a_t, C, eps)
    return {
        "before": {
            "sliced potentials (POT autograd)": lambda: sliced_potentials_backprop(x, a, y, b, model.theta),
            "RBF basis": lambda: rbf_basis(x, model.centres, model.bandwidth),
            "design matrix, all pairs": lambda: design_matrix(basis, phi),
            "design @ coefficients": lambda: design @ model.coef,
            "cost matrix": lambda: cost_matrix(x, y, cost),
            "c-transform, all pairs at once": lambda: c_transform(f, a_t, C, eps),
        },
        "after": {
            "sliced potentials (closed form)": lambda: sliced_potentials(x, a, y, b, model.theta),
            "RBF basis": lambda: rbf_basis(x, model.centres, model.bandwidth),
            "design blocks @ coefficients": lambda: functional_potential(basis, phi, model.coef),
            "cost matrix": lambda: cost_matrix(x, y, cost),
            "c-transform, in blocks of pairs": lambda: in_chunks(c_transform, f, a_t, C, eps),
        },
        "cold Sinkhorn": {
            "cost matrix": lambda: cost_matrix(x, y, cost),
            "c-transform of f = 0": lambda: in_chunks(c_transform, torch.zeros_like(f), a_t, C, eps),
            "one iteration (f-update and g-update)": lambda: in_chunks(
                c_transform, in_chunks(c_transform_rows, g, b_t, C, eps), a_t, C, eps
            ),
        },
    }


def profile_prediction(
    model, x, a, y, b, cost: str, eps: float, tol: float, max_iter: int, repeats: int = TIMING_REPEATS, log=None
) -> dict[str, pd.DataFrame]:
    """RA/OA prediction before and after, against cold Sinkhorn at the prediction's marginal error, on one batch.

    Returns 'summary' (one row per route: ms per instance of the prediction and of cold Sinkhorn, their
    ratio, the marginal errors and matched iterations), 'stages' (ms per instance of each step) and 'top'
    (cProfile's functions with the most own time, per route). Cold Sinkhorn 'before' is the accounting the
    evaluation used before (matched iterations times the time per iteration of a cold run with error checks,
    setup not charged, measured in another job); 'after' is the measured solve of `side_by_side`.
    """
    from neurips26.amortized_ot.evaluation import cold_start
    from neurips26.amortized_ot.method import predict_f

    P = len(x)
    before, after = (lambda: predict_f_before(model, x, a, y, b)), (lambda: predict_f(model, x, a, y, b))
    # the two routes give the same f where no projection or cumulative weight ties; on colour (ties) 'before' keeps
    # POT's duals, which are not Kantorovich potentials there (issue 41): the profile compares the time of the steps
    f_after = after()
    run = side_by_side(after, x, a, y, b, cost, eps, tol, max_iter, repeats)
    seconds = alternate(
        {
            "before": lambda: recover_plan_before(before(), x, a, y, cost, eps),
            "after": lambda: recover_plan(after(), x, a, y, cost, eps),
            "cold": cold_solver(x, a, y, b, cost, eps, run.cold_iterations),
        },
        repeats,
    )
    old_cold = cold_start(a, b, cost_matrix(x, y, cost), eps, tol, max_iter)
    old_match = np.mean(old_cold.iterations(np.maximum(run.marginal_error, tol))) * old_cold.seconds_per_pair_iteration
    common = {
        "pairs": P,
        "median_marginal_error_prediction": float(np.median(run.marginal_error)),
        "median_marginal_error_cold": float(np.median(run.cold_error)),
        "mean_cold_iterations": float(np.mean(run.cold_iterations)),
        "share_zero_iterations": float(np.mean(run.cold_iterations == 0)),
    }
    summary = pd.DataFrame(
        [
            {
                "route": "before",
                "t_pred_ms": 1e3 * seconds["before"] / P,
                "t_cold_ms": 1e3 * old_match,
                "cold_timing": "matched iterations x time per iteration of a cold run (error checks in, setup out)",
                **common,
            },
            {
                "route": "after",
                "t_pred_ms": 1e3 * seconds["after"] / P,
                "t_cold_ms": 1e3 * seconds["cold"] / P,
                "cold_timing": "measured solve: cost matrix, c-transform of f = 0, matched iterations",
                **common,
            },
        ]
    )
    summary.insert(3, "ratio", summary["t_pred_ms"] / summary["t_cold_ms"])
    stage_rows = []
    for route, steps in _stages(model, x, a, y, b, cost, eps, f_after).items():
        for step, ms in alternate(steps, repeats).items():
            stage_rows.append({"route": route, "step": step, "ms_per_instance": 1e3 * ms / P})
    top = pd.concat(
        [
            profile_top(lambda: recover_plan_before(before(), x, a, y, cost, eps), P, repeats).assign(route="before"),
            profile_top(lambda: recover_plan(after(), x, a, y, cost, eps), P, repeats).assign(route="after"),
        ],
        ignore_index=True,
    )
    if log is not None:
        for row in summary.itertuples():
            log.info("%s: prediction %.3f ms, cold %.3f ms per instance", row.route, row.t_pred_ms, row.t_cold_ms)
    return {"summary": summary, "stages": pd.DataFrame(stage_rows), "top": top[["route", *top.columns[:-1]]]}
