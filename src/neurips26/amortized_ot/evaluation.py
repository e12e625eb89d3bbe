"""Evaluation of predictors and plan baselines on the test groups of a task (the metrics pipeline step).

Only test pairs whose ground truth converged are evaluated (converged_group): a pair whose Sinkhorn run did not
reach the solver tolerance has no reference potential to compare with.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd
import torch

from neurips26.amortized_ot import cfm
from neurips26.amortized_ot.artifacts import load_flow
from neurips26.amortized_ot.baselines import exact_plans, expected_sliced_plans, min_swgg_plans
from neurips26.amortized_ot.costs import cost_matrix
from neurips26.amortized_ot.data import TASK_COST, TOY_SAMPLERS, pair_seed
from neurips26.amortized_ot.experiment import parse_name, unpack
from neurips26.amortized_ot.metrics import plan_metrics, potential_metrics
from neurips26.amortized_ot.sinkhorn import error_trajectory, first_below, iterations_to_tolerance
from neurips26.amortized_ot.sliced import directions
from neurips26.common.tables import long_form
from neurips26.common.timing import timed

SLICED_BASELINES = ("min_swgg", "expected_sliced")  # the plan baselines that use the L directions


@dataclass(frozen=True)
class ColdStart:
    """Cold-start Sinkhorn on a test group, run once and shared by every predictor evaluated on it."""

    trajectory: np.ndarray  # (P, T + 1) marginal error after each iteration
    seconds_per_pair_iteration: float
    max_iter: int

    def iterations(self, tol) -> np.ndarray:
        return first_below(self.trajectory, tol, self.max_iter)


def cold_start(a: np.ndarray, b: np.ndarray, cost: torch.Tensor, eps: float, tol: float, max_iter: int) -> ColdStart:
    """Run Sinkhorn from f = 0 until every pair's marginal error is below `tol`, timing it."""
    a_t, b_t = torch.as_tensor(a), torch.as_tensor(b)
    (trajectory, work), seconds = timed(
        lambda: error_trajectory(torch.zeros_like(a_t), a_t, b_t, cost, eps, tol, max_iter), 1, False
    )
    return ColdStart(trajectory, seconds / work, max_iter)


def evaluate_potential(
    f_hat: np.ndarray,
    f_star: np.ndarray,
    g_star: np.ndarray,
    a: np.ndarray,
    b: np.ndarray,
    cost: torch.Tensor,
    eps: float,
    warm_tol: float,
    cold: ColdStart,
) -> dict[str, np.ndarray]:
    """Per-pair metrics of a predicted f and warm vs cold Sinkhorn iterations to `warm_tol`. (The time cold
    Sinkhorn needs to reach the prediction's marginal error is measured beside the prediction, in the
    predict job: speed.side_by_side.)"""
    per_pair = potential_metrics(f_hat, f_star, g_star, a, b, cost, eps)
    a_t, b_t = torch.as_tensor(a), torch.as_tensor(b)
    per_pair["warm_iters"] = iterations_to_tolerance(
        torch.as_tensor(f_hat), a_t, b_t, cost, eps, warm_tol, cold.max_iter
    )
    per_pair["cold_iters"] = cold.iterations(warm_tol)
    return per_pair


def plan_baselines(
    x: np.ndarray,
    a: np.ndarray,
    y: np.ndarray,
    b: np.ndarray,
    f_star: np.ndarray,
    g_star: np.ndarray,
    cost_fn: Callable[[], torch.Tensor],
    eps: float,
    theta: np.ndarray,
    warm_tol: float,
    cold: ColdStart,
) -> dict[str, tuple[dict[str, np.ndarray], float]]:
    """min-SWGG, expected sliced and exact OT plans, and cold Sinkhorn: per-pair metrics, seconds per instance.

    Each timing includes building the cost matrix, as the predictors' timings do.
    """
    solvers = {
        "min_swgg": lambda cost: min_swgg_plans(x, a, y, b, theta),
        "expected_sliced": lambda cost: expected_sliced_plans(x, a, y, b, theta),
        "exact_emd": lambda cost: exact_plans(a, b, cost.numpy()),
    }
    results = {}
    for name, solve in solvers.items():
        pi, seconds = timed(lambda solve=solve: solve(cost_fn()))
        results[name] = (plan_metrics(pi, f_star, g_star, a, b, cost_fn(), eps), seconds / len(x))
    iters = cold.iterations(warm_tol)
    results["sinkhorn_cold"] = ({"cold_iters": iters}, float(np.mean(iters) * cold.seconds_per_pair_iteration))
    return results


@dataclass(frozen=True)
class TestGroup:
    """The converged test pairs of one group: their index among the group's pairs, the measures and the
    ground-truth potentials."""

    keep: np.ndarray
    x: np.ndarray
    a: np.ndarray
    y: np.ndarray
    b: np.ndarray
    f_star: np.ndarray
    g_star: np.ndarray


def converged_group(pairs: dict[str, np.ndarray], truth: dict[str, np.ndarray], group: str) -> TestGroup:
    """The pairs of `group` whose ground-truth Sinkhorn run converged (the others are left out of the metrics)."""
    p, t = unpack(pairs, group), unpack(truth, group)
    keep = np.flatnonzero(t["converged"])
    return TestGroup(keep, *(p[k][keep] for k in "xayb"), t["f"][keep], t["g"][keep])


def evaluate_task(
    pairs: dict[str, np.ndarray],
    truth: dict[str, np.ndarray],
    predictions: dict[str, np.ndarray],
    runs: list[tuple[str, str]],
    groups: dict[str, int],
    task: str,
    eps: float,
    warm_tol: float,
    max_iter: int,
    projections: int,
    seed: int,
    log=None,
) -> pd.DataFrame:
    """Long-form metrics of every (predictor, test group) run and of the plan baselines on the 'test' group.

    `groups` maps each test group to its resolution; `projections` is the L of the sliced plan baselines; `seed`
    the base seed (their directions, and the fit seed of models named without one). One cold-start Sinkhorn run
    per group is shared by every predictor evaluated on it."""
    cost_kind = TASK_COST[task]
    frames, cold = [], {}
    for name, group in runs:
        t = converged_group(pairs, truth, group)
        pred = unpack(predictions, f"{name}.{group}")
        cost = cost_matrix(t.x, t.y, cost_kind)
        if group not in cold:
            cold[group] = cold_start(t.a, t.b, cost, eps, warm_tol, max_iter)
        per_pair = evaluate_potential(
            pred["f_hat"][t.keep], t.f_star, t.g_star, t.a, t.b, cost, eps, warm_tol, cold[group]
        )
        method, L, fit_seed = parse_name(name, seed)
        if log is not None:
            log.info(
                "%s on %s: median rmse_f %.4g, warm %.0f vs cold %.0f iterations",
                name,
                group,
                np.median(per_pair["rmse_f"]),
                np.median(per_pair["warm_iters"]),
                np.median(per_pair["cold_iters"]),
            )
        # both times are measured in turn in the predict job, batched over all pairs of the group
        batch = {
            "t_pred_ms": 1e3 * float(pred["seconds_per_instance"]),
            "t_cold_match_ms": 1e3 * float(pred["cold_seconds_per_instance"]),
            # share of the group's pairs where cold Sinkhorn's starting plan (f = 0) already has the prediction's
            # marginal error: there the time ratio compares accuracy, not speed
            "cold_zero_share": float(np.mean(np.asarray(pred["cold_iterations"]) == 0)),
        }
        frames.append(
            long_form(
                per_pair,
                batch,
                item_index=t.keep,
                task=task,
                method=method,
                projections=L,
                res=groups[group],
                n_atoms=t.x.shape[1],
                seed=fit_seed,
            )
        )
    t = converged_group(pairs, truth, "test")
    theta = directions(projections, t.x.shape[2], seed)
    baselines = plan_baselines(
        t.x,
        t.a,
        t.y,
        t.b,
        t.f_star,
        t.g_star,
        lambda: cost_matrix(t.x, t.y, cost_kind),
        eps,
        theta,
        warm_tol,
        cold["test"],
    )
    for name, (per_pair, seconds) in baselines.items():
        if log is not None:
            log.info("%s: %.3f ms per instance", name, 1e3 * seconds)
        frames.append(
            long_form(
                per_pair,
                {"t_pred_ms": 1e3 * seconds},
                item_index=t.keep,
                task=task,
                method=name,
                projections=projections if name in SLICED_BASELINES else 0,
                res=groups["test"],
                n_atoms=t.x.shape[1],
                seed=seed,
            )
        )
    return pd.concat(frames, ignore_index=True)


def flow_seed(path: str | Path, base_seed: int) -> int:
    """The training seed of a saved flow: flow.pt is the base seed, flow_s{seed}.pt another one."""
    stem = Path(path).stem
    return int(stem.split("_s")[1]) if "_s" in stem else base_seed


def evaluate_flows(
    flow_files: list[str], eval_samples: int, ode_steps: int, batch_size: int, seed: int, log=None
) -> tuple[dict[str, dict[str, np.ndarray]], pd.DataFrame]:
    """Sample every trained flow (plan = its folder's name) by Euler steps from the same source points: W2 to
    fresh target samples and the path length / chord ratio (1 for straight paths). Returns the samples of the
    base-seed flows per plan (for the figure) and the long-form metrics of every flow."""
    rng = np.random.default_rng(pair_seed(seed, "cfm", "test"))
    source = TOY_SAMPLERS["8gaussians"](eval_samples, rng)
    target = TOY_SAMPLERS["moons"](eval_samples, rng)
    samples, frames = {}, []
    for path in flow_files:
        plan_name, run_seed = Path(path).parent.name, flow_seed(path, seed)
        flow, saved = load_flow(path)
        generated, path_ratio = cfm.integrate(flow, source, ode_steps)
        w2 = cfm.wasserstein2(generated, target)
        if log is not None:
            log.info("%s plan, seed %d: W2 %.4f, path length / chord %.4f", plan_name, run_seed, w2, path_ratio)
        if run_seed == seed:
            samples[plan_name] = {"source": source, "generated": generated, "target": target}
        metrics = {"w2": w2, "path_ratio": path_ratio, "train_seconds": saved["train_seconds"]}
        frames.append(
            long_form(
                {},
                metrics,
                task="cfm",
                method=plan_name,
                projections=0,
                res=batch_size,
                n_atoms=batch_size,
                seed=run_seed,
            )
        )
    return samples, pd.concat(frames, ignore_index=True)
