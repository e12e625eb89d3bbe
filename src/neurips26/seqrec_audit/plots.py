"""Figures of paper 10 (matplotlib): the NDCG@10 table as an annotated heatmap, TGH's relative gain against each
shortcut diagnostic, and the trained models' validation curves."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

from neurips26.seqrec_audit.methods import is_tgh  # noqa: E402

SUMMARY_COLUMNS = ("dataset", "best_other", "best_tgh", "tgh_relative_gain")
DIAGNOSTICS = {
    "cov1": "cov1: test targets in ring 1 of the last item",
    "perplexity": "transition perplexity",
    "FeatAUC": "FeatAUC: target's cosine percentile",
    "HD": "HD: profile kNN / last-item kNN - 1",
}


def ndcg_heatmap(wide: pd.DataFrame):
    """Datasets (rows) x methods (columns) coloured by NDCG@10 relative to the row's best method; each cell shows
    the NDCG@10, the row's best boxed, and TGH's relative gain on the right."""
    methods = [c for c in wide.columns if c not in SUMMARY_COLUMNS]
    values = wide[methods].to_numpy(dtype=float)
    best = np.nanmax(values, axis=1, keepdims=True)
    relative = values / np.where(best > 0, best, 1.0)
    fig, ax = plt.subplots(figsize=(1.1 * len(methods) + 3, 0.55 * len(wide) + 1.6))
    image = ax.imshow(relative, cmap="viridis", vmin=0, vmax=1, aspect="auto")
    for i in range(values.shape[0]):
        for j in range(values.shape[1]):
            if np.isfinite(values[i, j]):
                ax.text(
                    j,
                    i,
                    f"{values[i, j]:.3f}",
                    ha="center",
                    va="center",
                    fontsize=8,
                    color="black" if relative[i, j] > 0.6 else "white",
                    fontweight="bold" if values[i, j] == best[i, 0] else "normal",
                )
        ax.text(len(methods) - 0.3, i, f" gain {wide['tgh_relative_gain'].iloc[i]:+.1%}", va="center", fontsize=8)
    tgh = is_tgh(methods)
    ax.set_xticks(range(len(methods)), [f"{m}*" if t else m for m, t in zip(methods, tgh)], rotation=30, ha="right")
    ax.set_yticks(range(len(wide)), wide["dataset"])
    ax.set_title(
        "NDCG@10 (full ranking); colour: share of the dataset's best; * TGH; gain: best TGH / best other - 1",
        fontsize=9,
    )
    fig.colorbar(image, ax=ax, fraction=0.03, pad=0.18, label="NDCG@10 / best on the dataset")
    fig.tight_layout()
    return fig


def gain_vs_diagnostics(gains: pd.DataFrame):
    """One panel per diagnostic: TGH's relative gain (y) against the diagnostic (x), one labelled point per
    dataset, with the Spearman correlation in the title."""
    from scipy.stats import spearmanr

    present = [d for d in DIAGNOSTICS if d in gains.columns]
    fig, axes = plt.subplots(1, len(present), figsize=(3.6 * len(present), 3.4), squeeze=False)
    for ax, name in zip(axes[0], present):
        x, y = gains[name].to_numpy(float), gains["tgh_relative_gain"].to_numpy(float)
        ax.scatter(x, y, color="tab:blue", zorder=3)
        for xi, yi, label in zip(x, y, gains["dataset"]):
            ax.annotate(label, (xi, yi), fontsize=7, xytext=(3, 3), textcoords="offset points")
        ax.axhline(0.0, color="grey", lw=0.8, ls="--")
        ok = np.isfinite(x) & np.isfinite(y)
        rho = spearmanr(x[ok], y[ok])[0] if ok.sum() >= 3 else np.nan
        ax.set(xlabel=DIAGNOSTICS[name], title=f"Spearman {rho:+.2f} ({int(ok.sum())} datasets)")
    axes[0, 0].set_ylabel("TGH relative NDCG@10 gain over best other")
    fig.tight_layout()
    return fig


def training_curves(training: pd.DataFrame, wide: pd.DataFrame):
    """One panel per trained model: validation NDCG@10 per epoch, one line per (dataset, seed), the kept epoch
    starred; the best TGH variant's test NDCG@10 on the same dataset as a dashed line of the same colour."""
    models = list(training["model"].unique())
    fig, axes = plt.subplots(1, len(models), figsize=(5.5 * len(models), 4), squeeze=False)
    colours = dict(zip(training["dataset"].unique(), plt.cm.tab10.colors))
    tgh_columns = [c for c in wide.columns if c not in SUMMARY_COLUMNS and is_tgh([c])[0]]
    for ax, model in zip(axes[0], models):
        for (dataset, seed), run in training[training["model"] == model].groupby(["dataset", "seed"], sort=False):
            colour = colours[dataset]
            run = run.dropna(subset=["valid_ndcg10"])
            ax.plot(run["epoch"], run["valid_ndcg10"], "o-", ms=3, color=colour, label=f"{dataset} s{seed}")
            kept = run[run["best"]]
            ax.plot(kept["epoch"], kept["valid_ndcg10"], "*", ms=12, color=colour)
            row = wide[wide["dataset"] == dataset]
            if len(row) and tgh_columns:
                ax.axhline(float(row[tgh_columns].max(axis=1).iloc[0]), color=colour, ls="--", lw=0.8)
        ax.set(xlabel="epoch", ylabel="validation NDCG@10", title=f"{model} (star: kept epoch; dashed: best TGH)")
        ax.legend(fontsize=7)
    fig.tight_layout()
    return fig
