"""Paper 13's figures: alignment against probes (per layer, at each training step) and against dimension, and the
test-accuracy curves of every method at the matched forward-pass budget with seed bands."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

from neurips26.spectral_zo.alignment import OVERALL  # noqa: E402

# up to 20 methods in one panel: the default cycle of 10 colours gave two methods the same colour
COLOURS = plt.cycler(color=plt.cm.tab20.colors)


def alignment_vs_probes(alignment: pd.DataFrame):
    """Whole-network mean cosine against K (log-log), one panel per training step, the seed spread as bands."""
    steps = sorted(alignment["step"].unique())
    fig, axes = plt.subplots(1, len(steps), figsize=(5 * len(steps), 4), squeeze=False, constrained_layout=True)
    rows = alignment[(alignment["layer"] == OVERALL) & (alignment["method"] != "backprop")]
    for ax, step in zip(axes[0], steps):
        per_seed = rows[rows["step"] == step].groupby(["method", "probes", "seed"])["cosine"].mean()
        ax.set_prop_cycle(COLOURS)
        for method, group in per_seed.groupby("method"):
            stats = group.groupby("probes").agg(["mean", "min", "max"])
            ax.plot(stats.index, stats["mean"], marker="o", label=method)
            ax.fill_between(stats.index, stats["min"], stats["max"], alpha=0.15)
        ax.set(xscale="log", yscale="log", xlabel="probes K", ylabel="mean cosine with backprop", title=f"step {step}")
    axes[0][-1].legend(fontsize=7, loc="lower right")
    return fig


def alignment_vs_dimension(dimension: pd.DataFrame):
    """Whole-network mean cosine against the parameter count (log-log), seed range as bands; dotted: slope -1/2."""
    fig, ax = plt.subplots(figsize=(6, 4.5), constrained_layout=True)
    per_seed = dimension.groupby(["method", "params", "seed"])["cosine"].mean()
    ax.set_prop_cycle(COLOURS)
    for method, group in per_seed.groupby("method"):
        stats = group.groupby("params").agg(["mean", "min", "max"])
        ax.plot(stats.index, stats["mean"], marker="o", label=method)
        ax.fill_between(stats.index, stats["min"], stats["max"], alpha=0.15)
    params = np.array(sorted(dimension["params"].unique()), dtype=float)
    reference = dimension.groupby("params")["cosine"].mean().min()
    ax.plot(params, reference * (params / params[0]) ** -0.5, ":", color="grey", label="slope -1/2")
    ax.set(xscale="log", yscale="log", xlabel="parameters P", ylabel="mean cosine with backprop")
    ax.legend(fontsize=7)
    return fig


def accuracy_curves(curves: pd.DataFrame):
    """Test accuracy against forward passes per method and dataset: mean over seeds, band from min to max."""
    datasets = sorted(curves["dataset"].unique())
    fig, axes = plt.subplots(1, len(datasets), figsize=(6 * len(datasets), 4.5), squeeze=False,
                             constrained_layout=True)  # fmt: skip
    for ax, dataset in zip(axes[0], datasets):
        rows = curves[curves["dataset"] == dataset]
        ax.set_prop_cycle(COLOURS)
        for method, group in rows.groupby("method"):
            stats = group.groupby("forward_passes")["test_accuracy"].agg(["mean", "min", "max"])
            ax.plot(stats.index, stats["mean"], label=method)
            ax.fill_between(stats.index, stats["min"], stats["max"], alpha=0.15)
        ax.set(xlabel="forward passes", ylabel="test accuracy", title=dataset, ylim=(0, 1))
    axes[0][-1].legend(fontsize=7, loc="lower right")
    return fig
