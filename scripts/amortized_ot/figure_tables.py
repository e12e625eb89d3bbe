"""Figures from the metrics table: digits RMSE vs projections, and prediction time per method and task."""

from neurips26.common.runtime import start_job

log = start_job(snakemake)  # noqa: F821 (injected by Snakemake)

import pandas as pd  # noqa: E402

from neurips26.amortized_ot.plots import error_vs_projections_figure, save_figure, speed_figure  # noqa: E402

frame = pd.read_parquet(snakemake.input[0])  # noqa: F821
log.info("metrics: %d rows, tasks %s, methods %s", len(frame), sorted(frame["task"].unique()),
         sorted(frame["method"].unique()))

# the main projection count: the largest L the colour task was fitted with (only main L runs there)
colour_ra = frame[(frame["task"] == "colour") & (frame["method"] == "ra")]
if colour_ra.empty:
    raise ValueError("metrics table has no RA-OT rows for the colour task; cannot tell the main projection count")
projections = int(colour_ra["projections"].max())

# plan baselines run at each task's training resolution
swgg = frame[frame["method"] == "min_swgg"]
res_by_task = {task: int(rows["res"].mode().iloc[0]) for task, rows in swgg.groupby("task")}
if "digits" not in res_by_task:
    raise ValueError("metrics table has no min_swgg rows for digits; cannot tell the training resolution")
log.info("main projections L=%d, resolution by task %s", projections, res_by_task)

save_figure(error_vs_projections_figure(frame, res_by_task["digits"]), snakemake.output.error)  # noqa: F821
save_figure(speed_figure(frame, projections, res_by_task), snakemake.output.speed)  # noqa: F821
log.info("wrote %s and %s", snakemake.output.error, snakemake.output.speed)  # noqa: F821
