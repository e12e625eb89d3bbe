"""Claim checks of paper 18 (notes 18.7), computed from the long-form metrics table."""

from __future__ import annotations

import pandas as pd

from neurips26.common.claims import Claim


def _median(frame: pd.DataFrame, metric: str, **where) -> float:
    rows = frame[(frame["metric"] == metric) & (frame["pair"] >= 0)]
    for key, value in where.items():
        rows = rows[rows[key] == value]
    if rows.empty:
        raise KeyError(f"no rows for {metric} where {where}")
    return float(rows["value"].median())


def _batch(frame: pd.DataFrame, metric: str, **where) -> float:
    rows = frame[(frame["metric"] == metric) & (frame["pair"] < 0)]
    for key, value in where.items():
        rows = rows[rows[key] == value]
    if rows.empty:
        raise KeyError(f"no rows for {metric} where {where}")
    return float(rows["value"].mean())


def check_claims(frame: pd.DataFrame, main_projections: int, res_by_task: dict[str, int], test_res: list[int]) -> list[Claim]:
    """res_by_task: the training resolution of each task, where the main comparisons are made."""
    L = main_projections
    train_res = res_by_task["digits"]
    digits = dict(task="digits", res=train_res)
    claims = []

    ratios = [_median(frame, "rmse_f", method=m, projections=L, **digits) / _median(frame, "rmse_f", method="metaot", **digits) for m in ("ra", "oa")]
    claims.append(Claim(
        "C1", "RA-OT and OA-OT predict potentials with lower RMSE than Meta-OT (digits, 'achieving high accuracy').",
        "hard", "max(RA, OA) / Meta-OT median RMSE of f, digits", max(ratios), 1.0, "<",
        note=f"RA/Meta-OT {ratios[0]:.3f}, OA/Meta-OT {ratios[1]:.3f}",
    ))

    warm = {}
    for task in ("digits", "colour"):
        res = res_by_task[task]
        cold = _median(frame, "cold_iters", task=task, method="ra", projections=L, res=res)
        for m in ("ra", "oa"):
            warm[f"{task}/{m}"] = _median(frame, "warm_iters", task=task, method=m, projections=L, res=res) / cold
    claims.append(Claim(
        "C2", "Predicted potentials warm-start Sinkhorn: median iterations <= 0.7 x cold start (digits, colour).",
        "hard", "max warm/cold median Sinkhorn iterations", max(warm.values()), 0.7, "<=",
        note=", ".join(f"{k} {v:.2f}" for k, v in warm.items()),
    ))

    others = sorted(r for r in test_res if r != train_res)
    base = _median(frame, "rmse_f", method="ra", projections=L, **digits)
    by_res = {r: _median(frame, "rmse_f", method="ra", projections=L, task="digits", res=r) / base for r in others}
    worst = max(by_res, key=by_res.get) if by_res else None
    claims.append(Claim(
        "C3", "The model is independent of the number of atoms: RA-OT fitted at one resolution works at another.",
        "hard", f"max over other grids of RA-OT RMSE of f there / at {train_res}x{train_res}",
        by_res[worst] if by_res else float("nan"), 2.0, "<=",
        note=(", ".join(f"{r}x{r}: {v:.2f}" for r, v in by_res.items()) or "no other test resolution configured")
        + "; Meta-OT: not applicable, its MLP input is tied to the atom count of the training support",
    ))

    sweep = sorted(frame.loc[(frame["method"] == "ra") & (frame["task"] == "digits") & (frame["res"] == train_res), "projections"].unique())
    steps, notes = [], []
    for m in ("ra", "oa"):
        rmse = [_median(frame, "rmse_f", method=m, projections=int(p), **digits) for p in sweep]
        steps += [later / earlier for earlier, later in zip(rmse, rmse[1:])]
        notes.append(f"{m.upper()}: " + ", ".join(f"L={p} {r:.4g}" for p, r in zip(sweep, rmse)))
    claims.append(Claim(
        "C4", "Accuracy depends on the number of projections: RMSE is non-increasing in L.",
        "soft", "max RMSE(L_next) / RMSE(L), RA-OT and OA-OT, digits", max(steps, default=float("nan")), 1.0, "<=",
        note="; ".join(notes),
    ))

    colour_res = res_by_task["colour"]
    t_pred = _batch(frame, "t_pred_ms", task="colour", method="ra", projections=L, res=colour_res)
    t_cold = _batch(frame, "t_cold_match_ms", task="colour", method="ra", projections=L, res=colour_res)
    claims.append(Claim(
        "C5", "Amortization solves new instances faster: RA-OT prediction beats cold Sinkhorn run to the same marginal error (colour).",
        "soft", "t_pred(RA) / t(cold Sinkhorn to RA's marginal error)", t_pred / t_cold, 1.0, "<",
        note=f"{t_pred:.2f} ms vs {t_cold:.2f} ms per instance",
    ))

    cfm = {m: _batch(frame, "w2", task="cfm", method=m) for m in frame.loc[frame["task"] == "cfm", "method"].unique()}
    if {"ra", "exact", "indep"} <= set(cfm):
        value = max(cfm["ra"] / (1.1 * cfm["exact"]), cfm["ra"] / cfm["indep"])
        note = ", ".join(f"W2({m}) {v:.4f}" for m, v in cfm.items())
    else:
        value, note = float("nan"), f"needs plans ra, exact and indep; ran {sorted(cfm)}"
    claims.append(Claim(
        "C6", "Minibatch OT-CFM with the predicted plan: W2 <= 1.1 x exact plan and < independent plan.",
        "soft", "max(W2(RA)/(1.1 W2(exact)), W2(RA)/W2(indep))", value, 1.0, "<=", note=note,
    ))

    cost = {}
    for task in ("digits", "colour", "sphere"):
        res = res_by_task[task]
        cost[task] = _median(frame, "cost_rel_error", task=task, method="ra", projections=L, res=res) / _median(frame, "cost_rel_error", task=task, method="min_swgg", res=res)
    claims.append(Claim(
        "C7", "More accurate than min-SWGG on all tasks (transport cost of the recovered plan).",
        "soft", "max over tasks of RA / min-SWGG median relative cost error", max(cost.values()), 1.0, "<",
        note=", ".join(f"{k} {v:.2f}" for k, v in cost.items()),
    ))

    speed = {}
    for task in ("digits", "colour", "sphere"):
        res = res_by_task[task]
        speed[task] = _batch(frame, "t_pred_ms", task=task, method="ra", projections=L, res=res) / _batch(frame, "t_pred_ms", task=task, method="exact_emd", res=res)
    claims.append(Claim(
        "C8", "Up to an order of magnitude faster than solving each instance (exact OT, network simplex).",
        "info", "min over tasks of t_pred(RA) / t(exact OT)", min(speed.values()), 0.1, "<=",
        note="timings on 2 CPU cores at small atom counts; " + ", ".join(f"{k} {v:.3f}" for k, v in speed.items()),
    ))
    return claims
