"""Figures of paper 09 (matplotlib): divergence rates per cell, the attention-logit proxy per noise setting,
diagnostic traces per failure mode, and the loss curves of every seed."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

from .summary import CELL  # noqa: E402


def _label(row) -> str:
    qk = "QK" if row["qk_norm"] else "noQK"
    return f"{row['shape']} {qk} LRx{row['lr_multiplier']:g}\n{row['setting']}"


def divergence_rates(divergence: pd.DataFrame):
    """Divergence rate per cell with its 95% Wilson interval and the runs it rests on."""
    fig, ax = plt.subplots(figsize=(max(6, 0.7 * len(divergence) + 2), 4.5))
    x = np.arange(len(divergence))
    p = divergence["p"].to_numpy(float)
    # clipped at 0: a Wilson bound of 0 of n can land a rounding error (1e-17) on the wrong side of p
    err = np.maximum(np.vstack([p - divergence["low"].to_numpy(float), divergence["high"].to_numpy(float) - p]), 0.0)
    ax.bar(x, p, color="tab:red", alpha=0.7)
    ax.errorbar(x, p, yerr=err, fmt="none", color="black", capsize=3)
    for xi, (k, n) in zip(x, zip(divergence["k"], divergence["n"])):
        ax.text(xi, 1.02, f"{k}/{n}", ha="center", fontsize=7)
    ax.set_xticks(x, [_label(r) for r in divergence.to_dict("records")], rotation=75, fontsize=6)
    ax.set_ylim(0, 1.1)
    ax.set_ylabel("divergence rate (Wilson 95%)")
    fig.tight_layout()
    return fig


def max_logit_by_setting(runs: pd.DataFrame):
    """The largest attention logit at the end of each run (before any divergence), one point per seed, per cell."""
    cells = runs[CELL].drop_duplicates().to_dict("records")
    fig, ax = plt.subplots(figsize=(max(6, 0.7 * len(cells) + 2), 4.5))
    for i, cell in enumerate(cells):
        sel = runs
        for k, v in cell.items():
            sel = sel[sel[k] == v]
        y = sel["max_attn_logit"].to_numpy(float)
        ax.scatter(np.full(len(y), i), y, s=14, color=np.where(sel["diverged"], "tab:red", "tab:blue"))
        if len(y):
            ax.hlines(np.nanmedian(y), i - 0.3, i + 0.3, color="black")
    ax.set_xticks(range(len(cells)), [_label(c) for c in cells], rotation=75, fontsize=6)
    ax.set_yscale("log")
    ax.set_ylabel("max |attention logit| (red: diverged run)")
    fig.tight_layout()
    return fig


def diagnostic_traces(diag: pd.DataFrame, curves: pd.DataFrame, cells: list[dict]):
    """Median over seeds of the largest attention logit, the largest |output logit| and the update norm against
    steps, for the given cells (failure modes: clean, noisy, raised learning rate, QK-norm)."""
    fig, axes = plt.subplots(1, 3, figsize=(15, 4))
    cmap = plt.get_cmap("tab10")
    for i, cell in enumerate(cells):
        d, c = diag, curves
        for k, v in cell.items():
            d, c = d[d[k] == v], c[c[k] == v]
        if d.empty:
            continue
        label = _label(cell).replace("\n", " ")
        per_run = d.groupby(["seed", "step"])["max_logit"].max().groupby("step").median()
        axes[0].plot(per_run.index, per_run.to_numpy(), color=cmap(i % 10), label=label)
        logged = c.dropna(subset=["logit_max"])
        for ax, col in ((axes[1], "logit_max"), (axes[2], "update_norm")):
            trace = logged.groupby("step")[col].median()
            ax.plot(trace.index, trace.to_numpy(), color=cmap(i % 10))
    for ax, title in zip(axes, ("max |attention logit| (largest layer)", "max |output logit|", "update norm")):
        ax.set_yscale("log")
        ax.set_xlabel("step")
        ax.set_title(title, fontsize=9)
    if axes[0].get_legend_handles_labels()[0]:
        axes[0].legend(fontsize=6)
    fig.tight_layout()
    return fig


def loss_curves(curves: pd.DataFrame, cells: list[dict]):
    """Training loss of every seed against steps, one panel per cell (one empty panel that says so when the jobs
    trained none of the cells: a config without the deep shape's)."""
    fig, axes = plt.subplots(1, max(1, len(cells)), figsize=(4 * max(1, len(cells)), 3.6), squeeze=False)
    if not cells:
        axes[0][0].text(0.5, 0.5, "no cell of the deep shape was trained", ha="center", va="center", fontsize=9)
        axes[0][0].set_axis_off()
        return fig
    for ax, cell in zip(axes[0], cells):
        c = curves
        for k, v in cell.items():
            c = c[c[k] == v]
        for _, run in c.groupby("seed"):
            ax.plot(run["step"], run["train_loss"].clip(upper=50), lw=0.8)
        ax.set_title(_label(cell).replace("\n", " "), fontsize=8)
        ax.set_xlabel("step")
    axes[0][0].set_ylabel("training loss (nats, clipped at 50)")
    fig.tight_layout()
    return fig
