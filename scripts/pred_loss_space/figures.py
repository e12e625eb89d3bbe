"""Figures of paper 01 from the metrics table and the runs' samples: MSE and FD (proxy) heatmaps of the 3x3
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
samples_input = snakemake.input.samples
runs = [params.runs] if isinstance(params.runs, str) else list(params.runs)
sample_paths = [samples_input] if isinstance(samples_input, str) else list(samples_input)
if len(runs) != len(sample_paths):
    raise ValueError(f"{len(runs)} run ids but {len(sample_paths)} sample files")

plots.save_figure(plots.heatmaps(metrics, "mse", "denoising MSE (x-space)"), out.mse_heatmaps)
fid = summary.fid_regimes(metrics)
quality_label = "FID (Inception-v3) for image regimes, FD (proxy) for toys" if fid else "FD (proxy)"
plots.save_figure(plots.heatmaps(summary.quality_view(metrics), "fd", quality_label), out.fd_heatmaps)
plots.save_figure(plots.amplification(metrics, noise["t_eps"], noise.get("t_min", plots.T_MIN)), out.amplification)
plots.save_figure(plots.loss_weights(noise["t_eps"], noise["p_mean"], noise["p_std"]), out.loss_weights)

# the grid shows one seed per cell (the lowest): load only those runs
chosen: dict[tuple, tuple[int, str, str]] = {}
for run, path in zip(runs, sample_paths):
    part = plots.parse_run(run)
    key = (part["dataset"], part["arch"], part["pred"], part["loss"])
    if key not in chosen or part["seed"] < chosen[key][0]:
        chosen[key] = (part["seed"], run, path)
samples = {run: load_npz(path)["samples"] for _, run, path in chosen.values()}
data_dir = Path(snakemake.input.metrics).parent / "data"
projections = {
    dataset: load_npz(data_dir / f"{dataset}.npz")["projection"]
    for dataset in sorted({key[0] for key in chosen})
    if plots.is_toy(dataset)
}
plots.save_figure(plots.sample_grid(samples, projections), out.samples)
log.info("wrote %d figures (samples of %d of %d runs)", 5, len(samples), len(runs))
