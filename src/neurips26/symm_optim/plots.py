"""Figures of paper 07 (matplotlib): validation-loss curves at the best learning rate, the best-LR losses with their
seeds, learning-rate sensitivity, and the singular value spectra of the vocabulary-indexed matrices and routers."""

from __future__ import annotations

import matplotlib
import matplotlib.ticker

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

ARCH_TITLES = {"dense": "dense LM: embedding + LM head optimizer", "moe": "MoE: router optimizer"}


def _colors(methods) -> dict[str, str]:
    cmap = plt.get_cmap("tab10")
    return {m: cmap(i % 10) for i, m in enumerate(methods)}


def _at_best(frame: pd.DataFrame, best: pd.DataFrame) -> pd.DataFrame:
    keys = best.loc[~best["all_diverged"], ["arch", "method", "best_lr_index"]]
    return frame.merge(keys.rename(columns={"best_lr_index": "lr_index"}), on=["arch", "method", "lr_index"])


def val_loss_curves(curves: pd.DataFrame, best: pd.DataFrame):
    """Validation loss against steps at each method's best learning rate: mean over seeds, band min-max."""
    archs = list(dict.fromkeys(best["arch"]))
    fig, axes = plt.subplots(1, len(archs), figsize=(6 * len(archs), 4.2), squeeze=False)
    evals = _at_best(curves.dropna(subset=["val_loss"]), best)
    for ax, arch in zip(axes[0], archs):
        sel = evals[evals["arch"] == arch]
        colors = _colors(best.loc[best["arch"] == arch, "method"])
        for method, rows in sel.groupby("method", sort=False):
            stats = rows.groupby("step")["val_loss"].agg(["mean", "min", "max"])
            ax.plot(stats.index, stats["mean"], color=colors[method], label=method)
            ax.fill_between(stats.index, stats["min"], stats["max"], color=colors[method], alpha=0.2)
        final = sel[sel["step"] == sel["step"].max()]["val_loss"] if len(sel) else pd.Series(dtype=float)
        if len(final):  # zoom on the end of training, where the methods differ
            ax.set_ylim(final.min() - 0.15, final.max() + 0.6)
        ax.set(xlabel="step", ylabel="validation loss (nats/token)", title=ARCH_TITLES.get(arch, arch))
        ax.legend(fontsize=8)
    fig.tight_layout()
    return fig


def best_lr_bars(best: pd.DataFrame, runs: pd.DataFrame):
    """Final validation loss at the best learning rate: bar = mean over seeds, dots = seeds; dashed line = the
    baseline; labels give the signed difference from it."""
    archs = list(dict.fromkeys(best["arch"]))
    fig, axes = plt.subplots(1, len(archs), figsize=(5.5 * len(archs), 4.2), squeeze=False)
    seeds = _at_best(runs, best)
    for ax, arch in zip(axes[0], archs):
        rows = best[(best["arch"] == arch) & ~best["all_diverged"]].reset_index(drop=True)
        colors = _colors(best.loc[best["arch"] == arch, "method"])
        x = np.arange(len(rows))
        ax.bar(x, rows["val_loss_mean"], color=[colors[m] for m in rows["method"]], alpha=0.7)
        for i, r in rows.iterrows():
            pts = seeds[(seeds["arch"] == arch) & (seeds["method"] == r["method"])]["final_val_loss"]
            ax.scatter(np.full(len(pts), i), pts, color="black", s=14, zorder=3)
            if np.isfinite(r["delta_mean"]):
                ax.annotate(
                    f"{r['delta_mean']:+.3f}",
                    (i, r["val_loss_mean"]),
                    ha="center",
                    va="bottom",
                    xytext=(0, 6),
                    textcoords="offset points",
                    fontsize=8,
                )
        zero = rows["delta_mean"].abs().idxmin() if rows["delta_mean"].notna().any() else None
        if zero is not None:
            ax.axhline(rows.loc[zero, "val_loss_mean"], ls="--", color="grey", lw=1)
        lo, hi = seeds.loc[seeds["arch"] == arch, "final_val_loss"].agg(["min", "max"])
        ax.set_ylim(lo - 0.05, hi + 0.05)
        ax.set_xticks(x, rows["method"], rotation=20)
        ax.set(ylabel="final validation loss at best LR", title=ARCH_TITLES.get(arch, arch))
    fig.tight_layout()
    return fig


def lr_sensitivity(runs: pd.DataFrame):
    """Final validation loss against the learning-rate multiplier of the grid (mean and range over seeds);
    crosses mark grid points where a seed diverged."""
    archs = list(dict.fromkeys(runs["arch"]))
    fig, axes = plt.subplots(1, len(archs), figsize=(5.5 * len(archs), 4.2), squeeze=False)
    for ax, arch in zip(axes[0], archs):
        sel = runs[runs["arch"] == arch]
        colors = _colors(dict.fromkeys(sel["method"]))
        for method, rows in sel.groupby("method", sort=False):
            stats = rows.groupby("multiplier").agg(
                mean=("final_val_loss", "mean"),
                lo=("final_val_loss", "min"),
                hi=("final_val_loss", "max"),
                diverged=("diverged", "any"),
            )
            ok = stats[~stats["diverged"]]
            ax.errorbar(
                ok.index,
                ok["mean"],
                yerr=[ok["mean"] - ok["lo"], ok["hi"] - ok["mean"]],
                marker="o",
                capsize=3,
                color=colors[method],
                label=method,
            )
            bad = stats[stats["diverged"]]
            if len(bad):
                top = np.nanmax(sel["final_val_loss"]) if np.isfinite(sel["final_val_loss"]).any() else 1.0
                ax.scatter(bad.index, np.full(len(bad), top), marker="x", color=colors[method], s=60)
        ax.set(
            xscale="log",
            xlabel="learning-rate multiplier (x each method's centre)",
            ylabel="final validation loss",
            title=ARCH_TITLES.get(arch, arch),
        )
        grid = sorted(sel["multiplier"].unique())
        ax.set_xticks(grid, [f"x{m:g}" for m in grid], minor=False)
        ax.xaxis.set_minor_locator(matplotlib.ticker.NullLocator())
        ax.legend(fontsize=8)
    fig.tight_layout()
    return fig


def spectra(spectra: pd.DataFrame, best: pd.DataFrame):
    """Normalised singular values sigma_i / sigma_1 of the gradient (top) and of the update direction (bottom) of
    the embedding and LM head (dense sweep) and the router (MoE sweep) at the last recorded step, first seed of each
    method's best LR."""
    sel = _at_best(spectra, best)
    if len(sel):
        sel = sel[(sel["step"] == sel["step"].max()) & (sel["seed"] == sel["seed"].min())]
    kinds = [k for k in ("embedding", "lm_head", "router") if k in set(sel.get("kind", []))] or ["embedding"]
    fig, axes = plt.subplots(2, len(kinds), figsize=(4.6 * len(kinds), 7), squeeze=False)
    for j, kind in enumerate(kinds):
        for i, matrix in enumerate(("gradient", "update")):
            ax = axes[i][j]
            arch = "moe" if kind == "router" else "dense"  # each sweep varies the optimizer of its own matrices
            rows = sel[(sel["kind"] == kind) & (sel["matrix"] == matrix) & (sel["arch"] == arch)]
            colors = _colors(dict.fromkeys(best["method"]))
            for method, r in rows.groupby("method", sort=False):
                sigma = r.sort_values("index")["sigma"].to_numpy()
                if sigma.size and sigma[0] > 0:
                    ax.plot(np.arange(1, sigma.size + 1), sigma / sigma[0], color=colors[method], label=method)
            ax.set(yscale="log", xlabel="index i", ylabel="sigma_i / sigma_1", title=f"{kind}: {matrix}")
            if len(rows):
                ax.legend(fontsize=7)
    fig.tight_layout()
    return fig
