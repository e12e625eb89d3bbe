"""Paper 08's figures (matplotlib): the production-evaluation gap per flaw type and backend beside the paper's range,
probe accuracy per layer, and answer-patching flip rates per layer (Sun, Yeo, Solar-Lezama and Zhi-Xuan 2026, arXiv
2606.01462)."""

from __future__ import annotations

from collections.abc import Mapping

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

from .summary import ALL_FLAWS, ALL_LAYERS, SMALL, flaw_order  # noqa: E402

__all__ = ["gap_bars", "patching_lines", "probe_lines"]

LABELS = {
    SMALL["outcome"]: "small, outcome",
    SMALL["process"]: "small, process (held-out flaw)",
    SMALL["seen"]: "small, process (seen flaws)",
    "rule": "rule checker",
    "answer_only": "answer only",
}
CONDITION_COLORS = {"answer": "C3", "control": "C7"}


def gap_bars(gap: pd.DataFrame, paper_range: tuple[float, float]):
    """Per dataset, the gap (solving minus VAIR grading accuracy) per flaw type and pooled: a bar per backend (the
    small model's: mean over seeds, its t interval and the seeds as dots; the others: Newcombe interval over items),
    and at the pooled slot the band of gaps the paper's frontier numbers imply."""
    datasets = list(dict.fromkeys(gap["dataset"]))
    fig, axes = plt.subplots(1, max(1, len(datasets)), figsize=(7.5 * max(1, len(datasets)), 4.8), squeeze=False)
    for ax, dataset in zip(axes[0], datasets):
        part = gap[gap["dataset"] == dataset]
        summary = part[(part["over"] == "seeds") | ~part["backend"].isin(list(SMALL.values()))]
        present = list(dict.fromkeys(summary["backend"]))
        backends = [b for b in LABELS if b in present] + [b for b in present if b not in LABELS]
        flaws = flaw_order(summary["flaw"])
        width = 0.8 / max(1, len(backends))
        for j, backend in enumerate(backends):
            rows = summary[summary["backend"] == backend].set_index("flaw").reindex(flaws)
            x = np.arange(len(flaws)) + (j - (len(backends) - 1) / 2) * width
            yerr = np.vstack([rows["gap"] - rows["low"], rows["high"] - rows["gap"]])
            ax.bar(
                x,
                rows["gap"],
                width,
                yerr=np.nan_to_num(yerr),
                capsize=2,
                label=LABELS.get(backend, backend),
                color=f"C{j}",
                zorder=2,
            )
            seeds = part[(part["backend"] == backend) & (part["seed"] >= 0) & (part["over"] == "items")]
            for k, flaw in enumerate(flaws):
                values = seeds.loc[seeds["flaw"] == flaw, "gap"]
                ax.plot(np.full(len(values), x[k]), values, "k.", ms=3, zorder=3)
        if ALL_FLAWS in flaws:
            k = flaws.index(ALL_FLAWS)
            ax.fill_between(
                [k - 0.45, k + 0.45],
                *paper_range,
                color="0.75",
                lw=0,
                zorder=1,
                label=f"paper, frontier models: >= {paper_range[0]:.2f} to >= {paper_range[1]:.2f}",
            )
        ax.axhline(0.0, color="k", lw=0.5)
        ax.set_xticks(np.arange(len(flaws)), [f.replace("_", "\n") for f in flaws], fontsize=8)
        ax.set_ylabel("solving minus VAIR grading accuracy")
        ax.set_title(f"production-evaluation gap ({dataset})", fontsize=10)
        ax.legend(fontsize=7, loc="upper center", bbox_to_anchor=(0.5, -0.16), ncol=3, frameon=False)
    fig.tight_layout()
    return fig


def probe_lines(probes: pd.DataFrame, paper: Mapping):
    """Per regime, the probe's accuracy on held-out controls and the share of fooled VAIR items (and of held-out IAIR
    controls) it flags invalid, per layer: each member thin, the mean thick; the paper's control accuracy at its best
    layer and the 50% mark on fooled items as dotted lines."""
    regimes = list(dict.fromkeys(probes["regime"]))
    fig, axes = plt.subplots(1, max(1, len(regimes)), figsize=(5.5 * max(1, len(regimes)), 3.8), squeeze=False)
    series = {
        "accuracy_controls": ("C0", "accuracy on held-out controls"),
        "fooled_flagged": ("C3", "fooled VAIR items flagged invalid"),
        "iair_flagged": ("C2", "held-out IAIR controls flagged invalid"),
    }
    for ax, regime in zip(axes[0], regimes):
        part = probes[probes["regime"] == regime]
        for column, (color, label) in series.items():
            if column not in part.columns:
                continue
            for _, member in part.groupby("member"):
                ax.plot(member["layer"], member[column], color=color, lw=0.6, alpha=0.35)
            mean = part.groupby("layer")[column].mean()
            ax.plot(mean.index, mean.values, color=color, lw=2, marker="o", ms=3, label=f"{label} (mean)")
        ax.axhline(
            paper["controls_accuracy"],
            color="C0",
            ls=":",
            lw=1,
            label=f"paper: controls {paper['controls_accuracy']:.2f} ({paper['model']}, layer {paper['layer']})",
        )
        ax.axhline(paper["fooled_flagged_below"], color="C3", ls=":", lw=1, label="paper: fooled items below 0.5")
        ax.set_ylim(-0.02, 1.02)
        ax.set_xticks(sorted(set(part["layer"].astype(int))))
        ax.set_xlabel("residual state (0 = embedding)")
        ax.set_title(f"linear probes, {regime} members ({part['member'].nunique()})", fontsize=10)
        ax.legend(fontsize=6.5, loc="lower right")
    fig.tight_layout()
    return fig


def patching_lines(patching: pd.DataFrame, paper: Mapping[str, Mapping[str, float]]):
    """Per regime, the verdict flip rate per patched layer and with every layer at once ("all"), answer N -> N+1
    against the control (+1 at a random other number word): members thin, mean thick; at "all" the paper's
    all-layer rates (stars) and its peak-probe-layer rates (triangles)."""
    regimes = list(dict.fromkeys(patching["regime"]))
    fig, axes = plt.subplots(1, max(1, len(regimes)), figsize=(5.5 * max(1, len(regimes)), 3.8), squeeze=False)
    layers = sorted(int(x) for x in set(patching["layer"]) if x != ALL_LAYERS)
    x_of = {layer: i for i, layer in enumerate(layers)} | {ALL_LAYERS: len(layers) + 0.5}
    for ax, regime in zip(axes[0], regimes):
        part = patching[patching["regime"] == regime].assign(x=lambda f: f["layer"].map(x_of))
        for condition, color in CONDITION_COLORS.items():
            rows = part[part["condition"] == condition]
            for _, member in rows.groupby("member"):
                line = member[member["layer"] != ALL_LAYERS].sort_values("x")
                ax.plot(line["x"], line["flip_rate"], color=color, lw=0.6, alpha=0.35)
                every = member[member["layer"] == ALL_LAYERS]
                ax.plot(every["x"], every["flip_rate"], ".", color=color, alpha=0.5)
            mean = rows.groupby("x")["flip_rate"].mean()
            per_layer = mean[mean.index < len(layers)]
            ax.plot(per_layer.index, per_layer.values, color=color, lw=2, label=f"{condition} (mean)")
            if x_of[ALL_LAYERS] in mean.index:
                ax.plot([x_of[ALL_LAYERS]], [mean[x_of[ALL_LAYERS]]], "o", color=color, ms=7, mfc="none")
        for i, (model, rates) in enumerate(paper.items()):
            ax.plot(
                x_of[ALL_LAYERS] + 0.25,
                rates["all_layers"],
                "*",
                color=f"C{i + 4}",
                ms=9,
                label=f"paper {model}: all {rates['all_layers']:.2f}, peak-probe layer {rates['peak_probe_layer']:.2f}",
            )
            ax.plot(x_of[ALL_LAYERS] + 0.25, rates["peak_probe_layer"], "v", color=f"C{i + 4}", ms=6)
        ax.set_xticks([*range(len(layers)), x_of[ALL_LAYERS]], [*map(str, layers), "all"])
        ax.set_ylim(-0.02, 1.02)
        ax.set_xlabel("patched residual state")
        ax.set_ylabel("verdict flip rate (3 -> below 3)")
        ax.set_title(f"answer patching, {regime} members' fooled VAIR items", fontsize=10)
        ax.legend(fontsize=6, loc="upper left")
    fig.tight_layout()
    return fig
