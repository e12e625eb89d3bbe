"""Paper 11's figures: anomaly maps beside the inputs and the ground truth (the paper's qualitative figure), the main
metrics with the seed spread (Tables 1 and 7), and parameters against FLOPs (Table 2)."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

from .summary import METRICS, metric_table  # noqa: E402

__all__ = ["anomaly_maps", "complexity", "metric_bars"]

_LABELS = {"i_auroc": "image AUROC", "p_auroc": "pixel AUROC", "aupro": "AUPRO@0.3"}


def anomaly_maps(examples: dict[str, np.ndarray]):
    """Rows: the examples (one per defect type and a normal image); columns: RGB, depth, ground truth, then each
    method's map (first seed), every map on its own colour scale over the examples."""
    methods = [k for k in examples if k not in ("rgb", "depth", "mask", "cls", "defect")]
    n, cols = len(examples["rgb"]), 3 + len(methods)
    fig, axes = plt.subplots(n, cols, figsize=(1.6 * cols, 1.6 * n), squeeze=False)
    for i in range(n):
        panels = [examples["rgb"][i], examples["depth"][i], examples["mask"][i]] + [examples[m][i] for m in methods]
        titles = ["RGB", "depth", "ground truth", *(m.replace("_", " ") for m in methods)]
        for j, (panel, title) in enumerate(zip(panels, titles)):
            ax = axes[i, j]
            if j == 0:
                ax.imshow(panel)
                ax.set_ylabel(f"{examples['cls'][i]}\n{examples['defect'][i]}", fontsize=7)
            elif j == 1:
                ax.imshow(np.nan_to_num(panel, nan=np.nanmin(panel)), cmap="viridis")
            elif j == 2:
                ax.imshow(panel, cmap="gray", vmin=0, vmax=1)
            else:
                scale = examples[methods[j - 3]]
                ax.imshow(panel, cmap="jet", vmin=float(scale.min()), vmax=float(scale.max()))
            if i == 0:
                ax.set_title(title, fontsize=7)
            ax.set_xticks([])
            ax.set_yticks([])
    fig.tight_layout()
    return fig


def metric_bars(metrics: pd.DataFrame, dataset: str):
    """Class-mean metrics of every method and setting on ``dataset``, mean over seeds with the sd as error bars."""
    table = metric_table(metrics[metrics["dataset"] == dataset])
    table = table[table["name"] == "mean"]
    labels = [f"{m}\n{s.replace('_', ' ')}" for m, s in zip(table["method"], table["setting"])]
    fig, axes = plt.subplots(1, len(METRICS), figsize=(4 * len(METRICS), 3.2))
    for ax, metric in zip(axes, METRICS):
        x = np.arange(len(table))
        ax.bar(x, table[metric], yerr=table[f"{metric}_sd"].fillna(0), capsize=3,
               color=["C0" if s == "unified" else "C1" for s in table["setting"]])  # fmt: skip
        ax.set_xticks(x, labels, fontsize=7)
        if metric == "aupro":  # a random map's PRO equals its FPR: AUPRO@0.3 of chance is 0.15
            ax.set_ylim(0.0, 1.0)
            ax.axhline(0.15, color="grey", lw=0.5, ls=":")
        else:
            low = float(np.nanmin(table[metric] - table[f"{metric}_sd"].fillna(0)))
            ax.set_ylim(max(0.0, min(0.5, low - 0.05)), 1.0)
            ax.axhline(0.5, color="grey", lw=0.5, ls=":")
        ax.set_title(f"{_LABELS[metric]} ({dataset}, class mean)", fontsize=9)
    fig.tight_layout()
    return fig


def complexity(table: pd.DataFrame):
    """Parameters (frozen teacher included) against multiply-adds of every method, per configuration, on log axes."""
    configurations = list(dict.fromkeys(table["configuration"]))
    fig, axes = plt.subplots(1, len(configurations), figsize=(4.2 * len(configurations), 3.4), squeeze=False)
    for ax, conf in zip(axes[0], configurations):
        part = table[table["configuration"] == conf]
        # methods of identical size (ecfr and same_modal share the network) share one point and one label
        for (gmacs, params), group in part.groupby(["gmacs", "params_total_m"], sort=False):
            ax.scatter(gmacs, params, s=40)
            ax.annotate(" = ".join(group["method"]), (gmacs, params), fontsize=8, xytext=(5, -12),
                        textcoords="offset points")  # fmt: skip
        if conf == "paper":
            ax.scatter([15.762], [44.627], marker="*", s=120, color="k")
            ax.annotate("paper's Table 2", (15.762, 44.627), fontsize=8, xytext=(-80, 6), textcoords="offset points")
        ax.set_xscale("log")  # the published CFM is ten times ECFR's cost
        ax.set_yscale("log")
        ax.margins(0.35)
        ax.set_xlabel("GMACs per RGB + depth pair")
        ax.set_ylabel("parameters (M, frozen teacher included)")
        ax.set_title(f"{conf} configuration ({int(part['size'].iloc[0])} px)", fontsize=9)
    fig.tight_layout()
    return fig
