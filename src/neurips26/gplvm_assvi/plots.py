"""Paper 17's figures: latent spaces coloured by the true manifold coordinate (or the oil-flow class), uncertainty
maps over the latent space with the training latents on top, and the metric table as bars with the seed spread."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

__all__ = ["latent_spaces", "metric_bars", "uncertainty_maps"]


def _panels(frame: pd.DataFrame):
    """One panel per (dataset, method) of ``frame``: rows are datasets, columns methods, in order of appearance."""
    keys = frame[["dataset", "method"]].drop_duplicates().values.tolist()
    datasets = list(dict.fromkeys(k[0] for k in keys))
    methods = list(dict.fromkeys(k[1] for k in keys))
    fig, axes = plt.subplots(len(datasets), len(methods), figsize=(3.4 * len(methods), 3.2 * len(datasets)),
                             squeeze=False, constrained_layout=True)  # fmt: skip
    return fig, axes, datasets, methods


def latent_spaces(latents: pd.DataFrame, grids: pd.DataFrame, seed: int):
    """One panel per (dataset, method) of ``seed``: the latent means in the grid's two axes, coloured."""
    fig, axes, datasets, methods = _panels(latents[latents["seed"] == seed])
    for r, d in enumerate(datasets):
        sc = None
        for c, m in enumerate(methods):
            ax = axes[r, c]
            lat = latents[(latents["dataset"] == d) & (latents["method"] == m) & (latents["seed"] == seed)]
            g = grids[(grids["dataset"] == d) & (grids["method"] == m) & (grids["seed"] == seed)]
            if lat.empty or g.empty:
                ax.set_axis_off()
                continue
            i, j = int(g["axis_x"].iloc[0]), int(g["axis_y"].iloc[0])
            sc = ax.scatter(lat[f"x{i}"], lat[f"x{j}"], c=lat["coordinate"], s=6, cmap="viridis")
            ax.set_title(f"{d}: {m}", fontsize=9)
            ax.set_xlabel(f"x{i}", fontsize=8)
            ax.set_ylabel(f"x{j}", fontsize=8)
        if sc is not None:
            fig.colorbar(sc, ax=axes[r, -1], label="manifold coordinate / class")
    fig.suptitle(f"Latent means (seed {seed}), coloured by the true coordinate", fontsize=10)
    return fig


def uncertainty_maps(grids: pd.DataFrame, latents: pd.DataFrame, seed: int):
    """The predictive sd of f over the latent grid of each (dataset, method) of ``seed``, training latents on top."""
    sel = grids[grids["seed"] == seed]
    fig, axes, datasets, methods = _panels(sel)
    for r, d in enumerate(datasets):
        for c, m in enumerate(methods):
            ax = axes[r, c]
            g = sel[(sel["dataset"] == d) & (sel["method"] == m)]
            if g.empty:
                ax.set_axis_off()
                continue
            size = int(round(np.sqrt(len(g))))
            gx, gy, sd = (g[k].to_numpy().reshape(size, size) for k in ("gx", "gy", "sd"))
            im = ax.pcolormesh(gx, gy, sd, shading="auto", cmap="magma")
            lat = latents[(latents["dataset"] == d) & (latents["method"] == m) & (latents["seed"] == seed)]
            i, j = int(g["axis_x"].iloc[0]), int(g["axis_y"].iloc[0])
            ax.scatter(lat[f"x{i}"], lat[f"x{j}"], s=2, c="cyan", alpha=0.5)
            ax.set_title(f"{d}: {m}", fontsize=9)
            fig.colorbar(im, ax=ax, label="sd of f")
    fig.suptitle(f"Predictive sd over the latent space (seed {seed}); dots: training latents", fontsize=10)
    return fig


def metric_bars(table: pd.DataFrame):
    """The metric table as bars: mean over seeds with the seed sd as error bars, per dataset and method."""
    shown = ["rmse", "nlpd", "coverage", "manifold_distance"]
    datasets = list(dict.fromkeys(table["dataset"]))
    fig, axes = plt.subplots(len(datasets), len(shown), figsize=(3.2 * len(shown), 3.0 * len(datasets)), squeeze=False)
    for r, d in enumerate(datasets):
        rows = table[table["dataset"] == d]
        for c, m in enumerate(shown):
            ax = axes[r, c]
            ax.bar(rows["method"], rows[m], yerr=rows[f"{m}_sd"].fillna(0), capsize=3, color="tab:blue")
            if m == "coverage":
                ax.axhline(0.95, color="k", lw=0.8, ls="--")
            ax.set_title(f"{d}: {m}", fontsize=9)
            ax.tick_params(axis="x", labelrotation=30, labelsize=7)
    fig.tight_layout()
    return fig
