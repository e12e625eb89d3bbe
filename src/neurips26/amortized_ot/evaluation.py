"""Evaluation of predictors and plan baselines on the test groups of a task (the metrics pipeline step).

Only test pairs whose ground truth converged are evaluated (converged_group): a pair whose Sinkhorn run did not
reach the solver tolerance has no reference potential to compare with.

Every metric is per pair, so a group is evaluated a block of pairs at a time (EVALUATION_ENTRIES), each block's cost
matrix and plans built and freed in turn: at paper scale the costs of all 200 sphere test pairs are 6.4 GB, and their
plans and temporaries several times that. The blocks are whole chunks of the chunked Sinkhorn runs
(sinkhorn.aligned_blocks), so the metrics are the same as on the whole group.
"""

from __future__ import annotations

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
from neurips26.amortized_ot.sinkhorn import aligned_blocks, error_trajectory, first_below, iterations_to_tolerance
from neurips26.amortized_ot.sliced import directions
from neurips26.common.tables import long_form
from neurips26.common.timing import timed

SLICED_BASELINES = ("min_swgg", "expected_sliced")  # the plan baselines that use the L directions
# a test group is evaluated in blocks of pairs of at most this many cost entries (128 MB of float64: 4 sphere pairs
# at paper scale); a block's plans, the reference plans and their temporaries are a few times that
EVALUATION_ENTRIES = 2**24


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


def group_blocks(t: TestGroup, budget: int = EVALUATION_ENTRIES) -> list[slice]:
    """The blocks of pairs a test group is evaluated in (sinkhorn.aligned_blocks of its cost matrices)."""
    return aligned_blocks(len(t.a), t.x.shape[1], t.y.shape[1], budget)


@dataclass(frozen=True)
class ColdStart:
    """Cold-start Sinkhorn on a test group, run once and shared by every predictor evaluated on it."""

    trajectory: np.ndarray  # (P, T + 1) marginal error after each iteration
    seconds_per_pair_iteration: float
    max_iter: int

    def iterations(self, tol) -> np.ndarray:
        return first_below(self.trajectory, tol, self.max_iter)

    def pairs(self, part: slice) -> ColdStart:
        """The cold start of the pairs `part` of the group."""
        return ColdStart(self.trajectory[part], self.seconds_per_pair_iteration, self.max_iter)


def cold_start(a: np.ndarray, b: np.ndarray, cost: torch.Tensor, eps: float, tol: float, max_iter: int) -> ColdStart:
    """Run Sinkhorn from f = 0 until every pair's marginal error is below `tol`, timing it."""
    a_t, b_t = torch.as_tensor(a), torch.as_tensor(b)
    (trajectory, work), seconds = timed(
        lambda: error_trajectory(torch.zeros_like(a_t), a_t, b_t, cost, eps, tol, max_iter), 1, False
    )
    return ColdStart(trajectory, seconds / work, max_iter)


def cold_start_blocks(
    t: TestGroup, cost_kind: str, eps: float, tol: float, max_iter: int, budget: int = EVALUATION_ENTRIES
) -> ColdStart:
    """cold_start of a test group a block of pairs at a time (each block's cost matrix built untimed, as
    cold_start's caller builds it); trajectories padded with each pair's last error, times and work added."""
    runs = [
        cold_start(t.a[s], t.b[s], cost_matrix(t.x[s], t.y[s], cost_kind), eps, tol, max_iter)
        for s in group_blocks(t, budget)
    ]
    length = max(run.trajectory.shape[1] for run in runs)
    trajectory = np.concatenate(
        [np.pad(run.trajectory, ((0, 0), (0, length - run.trajectory.shape[1])), mode="edge") for run in runs]
    )
    pair_iterations = [run.trajectory.size for run in runs]  # what cold_start divided each block's time by
    seconds = sum(run.seconds_per_pair_iteration * work for run, work in zip(runs, pair_iterations))
    return ColdStart(trajectory, seconds / sum(pair_iterations), max_iter)


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


def evaluate_potential_blocks(
    f_hat: np.ndarray,
    t: TestGroup,
    cost_kind: str,
    eps: float,
    warm_tol: float,
    cold: ColdStart,
    budget: int = EVALUATION_ENTRIES,
) -> dict[str, np.ndarray]:
    """evaluate_potential on a test group a block of pairs at a time."""
    parts = [
        evaluate_potential(
            f_hat[s],
            t.f_star[s],
            t.g_star[s],
            t.a[s],
            t.b[s],
            cost_matrix(t.x[s], t.y[s], cost_kind),
            eps,
            warm_tol,
            cold.pairs(s),
        )
        for s in group_blocks(t, budget)
    ]
    return {key: np.concatenate([part[key] for part in parts]) for key in parts[0]}


def plan_baselines(
    t: TestGroup,
    cost_kind: str,
    eps: float,
    theta: np.ndarray,
    warm_tol: float,
    cold: ColdStart,
    budget: int = EVALUATION_ENTRIES,
) -> dict[str, tuple[dict[str, np.ndarray], float]]:
    """min-SWGG, expected sliced and exact OT plans, and cold Sinkhorn: per-pair metrics, seconds per instance.

    Each timing includes building the cost matrix, as the predictors' timings do. The plans are made and scored a
    block of pairs at a time; each solver's time is the sum over the blocks.
    """
    solvers = {
        "min_swgg": lambda s, cost: min_swgg_plans(t.x[s], t.a[s], t.y[s], t.b[s], theta),
        "expected_sliced": lambda s, cost: expected_sliced_plans(t.x[s], t.a[s], t.y[s], t.b[s], theta),
        "exact_emd": lambda s, cost: exact_plans(t.a[s], t.b[s], cost.numpy()),
    }
    results = {}
    for name, solve in solvers.items():
        parts, seconds = [], 0.0
        for s in group_blocks(t, budget):
            pi, block_seconds = timed(lambda solve=solve, s=s: solve(s, cost_matrix(t.x[s], t.y[s], cost_kind)))
            cost = cost_matrix(t.x[s], t.y[s], cost_kind)
            parts.append(plan_metrics(pi, t.f_star[s], t.g_star[s], t.a[s], t.b[s], cost, eps))
            seconds += block_seconds
        per_pair = {key: np.concatenate([part[key] for part in parts]) for key in parts[0]}
        results[name] = (per_pair, seconds / len(t.x))
    iters = cold.iterations(warm_tol)
    results["sinkhorn_cold"] = ({"cold_iters": iters}, float(np.mean(iters) * cold.seconds_per_pair_iteration))
    return results


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
    budget: int = EVALUATION_ENTRIES,
) -> pd.DataFrame:
    """Long-form metrics of every (predictor, test group) run and of the plan baselines on the 'test' group.

    `groups` maps each test group to its resolution; `projections` is the L of the sliced plan baselines; `seed`
    the base seed (their directions, and the fit seed of models named without one). One cold-start Sinkhorn run
    per group is shared by every predictor evaluated on it. Each group is evaluated in blocks of at most `budget`
    cost entries."""
    cost_kind = TASK_COST[task]
    frames, cold = [], {}
    for name, group in runs:
        t = converged_group(pairs, truth, group)
        pred = unpack(predictions, f"{name}.{group}")
        if group not in cold:
            cold[group] = cold_start_blocks(t, cost_kind, eps, warm_tol, max_iter, budget)
        per_pair = evaluate_potential_blocks(pred["f_hat"][t.keep], t, cost_kind, eps, warm_tol, cold[group], budget)
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
    baselines = plan_baselines(t, cost_kind, eps, theta, warm_tol, cold["test"], budget)
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
