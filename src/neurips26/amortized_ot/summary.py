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


SPEED_COLUMNS = {
    "route": "route",
    "t_pred_ms": "prediction ms/instance",
    "t_cold_ms": "cold Sinkhorn ms/instance",
    "ratio": "ratio",
    "median_marginal_error_prediction": "median marginal error, prediction",
    "median_marginal_error_cold": "median marginal error, cold Sinkhorn",
    "mean_cold_iterations": "cold iterations (mean)",
    "cold_timing": "cold Sinkhorn timed as",
}


def speed_tables(summary: pd.DataFrame, stages: pd.DataFrame, top: pd.DataFrame) -> dict:
    """The speed profile's tables (speed.profile_prediction) for the report, and the numbers its text quotes:
    the share of pairs cold Sinkhorn matches with no iteration, and from the step times, the ratio a prediction
    whose f cost nothing would still have (its cost matrix and c-transform against cold Sinkhorn's setup and
    mean iterations) and the mean cold iterations at which a 10x speed-up would become possible at all."""
    after = summary[summary["route"] == "after"].iloc[0]
    cold = stages[stages["route"] == "cold Sinkhorn"].set_index("step")["ms_per_instance"]
    setup = cold["cost matrix"] + cold["c-transform of f = 0"]
    iteration = cold["one iteration (f-update and g-update)"]
    numbers = {
        "pairs": int(after["pairs"]),
        "share_zero": float(after["share_zero_iterations"]),
        "mean_iterations": float(after["mean_cold_iterations"]),
        "error_prediction": float(after["median_marginal_error_prediction"]),
        "error_cold": float(after["median_marginal_error_cold"]),
        "ratio": float(after["ratio"]),
        "setup_ms": float(setup),
        "iteration_ms": float(iteration),
        "free_f_ratio": float(setup / (setup + after["mean_cold_iterations"] * iteration)),
        "iterations_for_10x": float(9 * setup / iteration),
    }
    drop = ["git_commit", "config_hash"]  # provenance, shown once at the end of the report
    steps = stages.drop(columns=drop, errors="ignore").rename(columns={"ms_per_instance": "ms/instance"})
    top = top.drop(columns=drop, errors="ignore").rename(
        columns={
            "calls_per_run": "calls per prediction",
            "own_ms_per_instance": "own ms/instance",
            "cumulative_ms_per_instance": "cumulative ms/instance",
        }
    )
    return {
        "speed_summary": summary[list(SPEED_COLUMNS)].rename(columns=SPEED_COLUMNS),
        "speed_stages": steps,
        "speed_top": top,
        "speed": numbers,
    }


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
        **speed_tables(*(pd.read_parquet(path) for path in (inp.speed_summary, inp.speed_stages, inp.speed_top))),
    }
