"""Figures of paper 05 (matplotlib): the scaling plot with the fitted law, regret curves per method, the imitation
log-likelihood matrix, and the dataset statistics."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402


def scaling(training: pd.DataFrame, runs: pd.DataFrame, fit: pd.Series):
    """Validation loss against training FLOPs, one curve per run; the final points, the frontier used for the fit,
    the fitted law L = a C^b (dashed) and the held-out run (star)."""
    fig, ax = plt.subplots(figsize=(6.5, 4.5))
    for run, rows in training.groupby("run", sort=False):
        rows = rows.dropna(subset=["val_loss"])
        ax.plot(rows["flops"], rows["val_loss"], "-", lw=1, alpha=0.7, label=run)
    ax.scatter(runs["flops"], runs["val_loss"], color="black", zorder=3, s=18, label="final")
    frontier = runs[runs["frontier"]]
    ax.scatter(
        frontier["flops"],
        frontier["val_loss"],
        facecolors="none",
        edgecolors="tab:red",
        s=80,
        zorder=4,
        label="frontier (fit)",
    )
    grid = np.geomspace(runs["flops"].min() / 2, runs["flops"].max() * 2, 50)
    ax.plot(
        grid,
        fit["a"] * grid ** fit["b"],
        "--",
        color="tab:red",
        label=f"L = {fit['a']:.3g} C^{fit['b']:.3f} (R^2 {fit['r2']:.2f})",
    )
    held = runs[runs["run"] == fit["holdout_run"]]
    ax.scatter(
        held["flops"],
        held["val_loss"],
        marker="*",
        s=220,
        color="gold",
        edgecolors="black",
        zorder=5,
        label=f"held out: {fit['holdout_run']} ({fit['holdout_rel_error']:+.1%} off)",
    )
    ax.set(
        xscale="log",
        yscale="log",
        xlabel="training FLOPs (6 N D)",
        ylabel="validation loss (nats/token)",
        title="Scaling of the validation loss with compute",
    )
    ax.legend(fontsize=7)
    fig.tight_layout()
    return fig


def regret_curves(regret: pd.DataFrame):
    """Mean normalised regret against the number of trials: the real optimizers (dashed) and the model under each
    conditioning token and decoding (solid), over held-out boxes x seeds."""
    usable = regret[regret["scale"] > 0]
    curves = usable.groupby(["method", "T"])["norm_regret"].mean().unstack(0)
    fig, ax = plt.subplots(figsize=(7, 4.5))
    for method in curves.columns:
        model = method.startswith("model:")
        ax.plot(
            curves.index,
            curves[method],
            "-" if model else "--",
            lw=2 if model else 1.2,
            marker="o" if model else None,
            ms=3,
            label=method,
        )
    ax.set(
        yscale="log",
        xlabel="trials T",
        ylabel="mean normalised regret",
        title=f"Held-out black boxes ({usable['bb_id'].nunique()} boxes)",
    )
    ax.legend(fontsize=7, ncol=2)
    fig.tight_layout()
    return fig


def imitation_matrix(imitation: pd.DataFrame):
    """Mean NLL per trial token of held-out trajectories of each true optimizer (rows) under each conditioning
    token (columns). Colour: the NLL minus the row's mean, so each row's own preferences show whatever the row's
    level; the row's minimum is bold."""
    matrix = imitation.pivot_table(index="true_algo", columns="cond_algo", values="nll")
    values = matrix.to_numpy()
    centred = values - values.mean(axis=1, keepdims=True)
    limit = max(float(np.abs(centred).max()), 1e-12)
    fig, ax = plt.subplots(figsize=(1.2 * matrix.shape[1] + 2.5, 0.8 * matrix.shape[0] + 1.5))
    image = ax.imshow(centred, cmap="RdBu", vmin=-limit, vmax=limit)
    for i in range(values.shape[0]):
        for j, value in enumerate(values[i]):
            ax.text(
                j,
                i,
                f"{value:.3f}",
                ha="center",
                va="center",
                fontsize=8,
                color="black",
                fontweight="bold" if value == np.nanmin(values[i]) else "normal",
            )
    ax.set_xticks(range(matrix.shape[1]), matrix.columns)
    ax.set_yticks(range(matrix.shape[0]), matrix.index)
    ax.set(xlabel="conditioning token", ylabel="true optimizer", title="Imitation: NLL per trial token")
    fig.colorbar(image, ax=ax, fraction=0.04, label="NLL minus the row's mean (red: likelier)")
    fig.tight_layout()
    return fig


def dataset(data: pd.DataFrame):
    """Trajectories and tokens per family and optimizer (train and held-out splits), and generation throughput."""
    fig, (left, right) = plt.subplots(1, 2, figsize=(11, 4))
    tokens = data.pivot_table(index=["split", "family"], columns="optimizer", values="tokens", aggfunc="sum")
    tokens.plot.bar(ax=left, rot=0)
    left.set(ylabel="tokens", title="Corpus tokens per split, family and optimizer")
    rate = data.groupby("optimizer")["evaluations_per_s"].mean()
    right.bar(rate.index, rate.to_numpy(), color="tab:gray")
    right.set(yscale="log", ylabel="evaluations per second", title="Generation throughput (mean over families)")
    fig.tight_layout()
    return fig
