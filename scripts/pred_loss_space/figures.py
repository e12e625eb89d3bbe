"""Figures of paper 01 from the metrics table and the jobs' samples: MSE and FD (proxy) heatmaps of the 3x3
matrix, error amplification, loss weights, and sample grids. Runs in the report environment (no torch)."""

from pathlib import Path

import pandas as pd

from neurips26.common.io import load_npz
from neurips26.common.runtime import start_job
from neurips26.pred_loss_space import plots, summary

log = start_job(snakemake)
params, out = snakemake.params, snakemake.output
noise = dict(params.noise)
metrics = pd.read_parquet(snakemake.input.metrics)
as_list = lambda value: [value] if isinstance(value, str) else list(value)  # noqa: E731 (one job: a string)
jobs, sample_paths = as_list(params.runs), as_list(snakemake.input.samples)

plots.save_figure(plots.heatmaps(metrics, "mse", "denoising MSE (x-space)"), out.mse_heatmaps)
fid = summary.fid_regimes(metrics)
quality_label = "FID (Inception-v3) for image regimes, FD (proxy) for toys" if fid else "FD (proxy)"
plots.save_figure(plots.heatmaps(summary.quality_view(metrics), "fd", quality_label), out.fd_heatmaps)
plots.save_figure(plots.amplification(metrics, noise["t_eps"], noise.get("t_min", plots.T_MIN)), out.amplification)
plots.save_figure(plots.loss_weights(noise["t_eps"], noise["p_mean"], noise["p_std"]), out.loss_weights)
chosen = plots.lowest_seed_runs(jobs, sample_paths)  # the grid shows one seed per cell: load only those jobs
samples = {}
for run, (path, seed) in chosen.items():
    arrays = load_npz(path)  # a job's samples: one row per seed of its group
    samples[run] = arrays["samples"][list(arrays["seeds"]).index(seed)]
data_dir = Path(snakemake.input.metrics).parent / "data"
toys = sorted({plots.parse_run(run)["dataset"] for run in chosen})
projections = {d: load_npz(data_dir / f"{d}.npz")["projection"] for d in toys if plots.is_toy(d)}
plots.save_figure(plots.sample_grid(samples, projections), out.samples)
log.info("wrote %d figures (samples of %d cells, from %d jobs)", 5, len(samples), len(jobs))
