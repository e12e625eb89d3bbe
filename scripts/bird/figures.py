"""Figures of paper 04 from its tables: the phase diagram with the theory's boundary, the information curves,
k_cal vs k_mem, similarity to the networks over training, memorization, step cost, and BIRD's samples."""

import pandas as pd

from neurips26.bird import plots
from neurips26.common.io import load_npz
from neurips26.common.runtime import start_job

inp, out = snakemake.input, snakemake.output
log = start_job(snakemake)
phase, boundary, kcal = (pd.read_parquet(p) for p in (inp.phase, inp.boundary, inp.kcal))
memorization = pd.concat([pd.read_parquet(p) for p in inp.memorization], ignore_index=True)
cost = pd.concat([pd.read_parquet(p) for p in inp.cost], ignore_index=True)
samples, nearest = {}, {}
for table_path, npz_path in zip(inp.memorization, inp.samples):
    arrays = load_npz(npz_path)
    for row in pd.read_parquet(table_path).itertuples():
        key = (row.dataset, row.n_train, row.window)
        samples[key], nearest[key] = arrays[f"samples_{row.window}"], arrays[f"nearest_{row.window}"]
windows = sorted({w for w in phase["window"] if w != "full"}, key=int)
plots.save_figure(plots.phase_diagram(phase, boundary), out.phase_diagram)
plots.save_figure(
    plots.information_curves(phase, window="5" if "5" in windows else windows[len(windows) // 2]),
    out.information_curves,
)
plots.save_figure(plots.kcal_vs_kmem(kcal), out.kcal_vs_kmem)
plots.save_figure(plots.similarity_over_training(kcal), out.similarity)
plots.save_figure(plots.memorization_curves(memorization), out.memorization)
plots.save_figure(plots.step_cost(cost), out.step_cost)
plots.save_figure(plots.sample_grid(samples, nearest), out.samples)
log.info("wrote 7 figures")
