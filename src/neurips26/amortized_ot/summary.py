"""The tables paper 18's report shows, built from its metrics (medians over test pairs)."""

from __future__ import annotations

import pandas as pd

from neurips26.amortized_ot.experiment import METHOD_LABELS

POTENTIAL_METRICS = ["rmse_f", "rmse_g", "marginal_error", "cost_rel_error", "warm_iters", "cold_iters"]


def accuracy_table(frame: pd.DataFrame, projections: int, res_by_task: dict[str, int]) -> pd.DataFrame:
    """Median per-pair metrics per task and method at the main projection count and training resolution."""
    rows = frame[(frame["pair"] >= 0) & frame["task"].isin(res_by_task)]
    rows = rows[rows["res"] == rows["task"].map(res_by_task)]
    rows = rows[(rows["projections"] == projections) | ~rows["method"].isin(["ra", "oa", "sliced_mean"])]
    table = rows.pivot_table(index=["task", "method"], columns="metric", values="value", aggfunc="median")
    timing = frame[(frame["pair"] < 0) & (frame["metric"] == "t_pred_ms") & frame["task"].isin(res_by_task)]
    timing = timing[(timing["res"] == timing["task"].map(res_by_task))]
    timing = timing[(timing["projections"] == projections) | ~timing["method"].isin(["ra", "oa", "sliced_mean"])]
    table = table.join(timing.groupby(["task", "method"])["value"].mean().rename("t_pred_ms"), how="outer")
    columns = [c for c in POTENTIAL_METRICS + ["t_pred_ms"] if c in table.columns]
    table = table[columns].reset_index()
    table["method"] = table["method"].map(METHOD_LABELS).fillna(table["method"])
    return table


def projections_table(frame: pd.DataFrame, res: int) -> pd.DataFrame:
    rows = frame[
        (frame["task"] == "digits") & (frame["res"] == res) & (frame["metric"] == "rmse_f") & (frame["pair"] >= 0)
    ]
    rows = rows[rows["method"].isin(["ra", "oa", "sliced_mean"])]
    table = rows.pivot_table(index="projections", columns="method", values="value", aggfunc="median").reset_index()
    return table.rename(columns=METHOD_LABELS)


def resolution_table(frame: pd.DataFrame, projections: int) -> pd.DataFrame:
    rows = frame[(frame["task"] == "digits") & (frame["projections"] == projections) & (frame["pair"] >= 0)]
    rows = rows[rows["method"].isin(["ra", "oa"]) & rows["metric"].isin(["rmse_f", "marginal_error", "cost_rel_error"])]
    table = rows.pivot_table(
        index=["res", "n_atoms", "method"], columns="metric", values="value", aggfunc="median"
    ).reset_index()
    table["method"] = table["method"].map(METHOD_LABELS)
    return table


def cfm_table(frame: pd.DataFrame) -> pd.DataFrame:
    rows = frame[frame["task"] == "cfm"]
    return rows.pivot_table(index="method", columns="metric", values="value", aggfunc="mean").reset_index()


def seeds_table(frame: pd.DataFrame, projections: int, res_by_task: dict[str, int]) -> pd.DataFrame:
    """Median RMSE of f over test pairs per fit seed (rows) and method (columns), each task at its training
    resolution; RA/OA at the main projection count."""
    rows = frame[(frame["pair"] >= 0) & (frame["metric"] == "rmse_f") & frame["task"].isin(res_by_task)]
    rows = rows[(rows["res"] == rows["task"].map(res_by_task)) & rows["method"].isin(["ra", "oa", "metaot"])]
    rows = rows[(rows["projections"] == projections) | (rows["method"] == "metaot")]
    table = rows.pivot_table(index=["task", "seed"], columns="method", values="value", aggfunc="median").reset_index()
    return table.rename(columns=METHOD_LABELS)


def report_tables(inp, params) -> dict:
    """Every table of the report (report.md.j2) from the metrics table (input `metrics`): the per-seed table
    over every fit seed, the others at the base fit seed (`params.seed`); `res` is each task's training
    resolution."""
    all_seeds = pd.read_parquet(inp.metrics)
    metrics = all_seeds[all_seeds["seed"] == params.seed]
    L, res = params.main_projections, dict(params.res_by_task)
    return {
        "res": res,
        "accuracy": accuracy_table(metrics, L, res),
        "seeds": seeds_table(all_seeds, L, res),
        "projections": projections_table(metrics, res["digits"]),
        "resolution": resolution_table(metrics, L),
        "cfm": cfm_table(all_seeds),
    }
