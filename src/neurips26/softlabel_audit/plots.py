"""Figures of the soft-label audit (arXiv 2605.18648): reliability diagrams per label condition (Guo et al. 2017)
and dataset-cartography maps per condition (Swayamdipta et al. 2020) coloured by human uncertainty."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

import numpy as np

from neurips26.common.figures import plt, save_figure
from neurips26.softlabel_audit.cartography import Cartography
from neurips26.softlabel_audit.metrics import ReliabilityBins

__all__ = ["cartography_maps", "metric_bars", "reliability_diagrams"]


def _panels(n: int, rows: int = 1, heights=None):
    fig, axes = plt.subplots(
        rows,
        n,
        figsize=(3.0 * n + 0.8, 3.2 * rows if heights is None else 4.2),
        squeeze=False,
        layout="constrained",
        gridspec_kw=None if heights is None else {"height_ratios": heights},
    )
    return fig, axes


def reliability_diagrams(bins: Mapping[str, ReliabilityBins], path: str | Path, note: str = "") -> Path:
    """One column per condition: above, each bin's accuracy (bars) over its confidence range, its mean confidence
    (red ticks at the bin's centre: the gap to the bar is the bin's calibration error) and the diagonal of perfect
    calibration, the ECE in the title; below, the items per bin. `note` (e.g. "simulated annotators; difficult
    items") goes into the figure's title. Writes a PNG to `path`."""
    if not bins:
        raise ValueError("reliability_diagrams needs at least one condition's bins")
    empty = [name for name, b in bins.items() if int(np.sum(b.counts)) == 0]
    if empty:
        raise ValueError(f"reliability_diagrams: no items in the bins of {empty}")
    fig, axes = _panels(len(bins), rows=2, heights=[3, 1])
    for col, (name, b) in enumerate(bins.items()):
        top, bottom = axes[0, col], axes[1, col]
        left, width = b.edges[:-1], np.diff(b.edges)
        filled = b.counts > 0
        top.bar(left[filled], b.accuracy[filled], width=width[filled], align="edge", color="tab:blue", alpha=0.75)
        centre = left[filled] + width[filled] / 2  # red: the bin's mean confidence, what its accuracy should be
        top.scatter(centre, b.confidence[filled], marker="_", s=120, color="tab:red", zorder=3)
        top.plot([0, 1], [0, 1], "k--", linewidth=1)
        top.set(xlim=(0, 1), ylim=(0, 1), title=f"{name}\nECE {b.ece:.3f}")
        bottom.bar(left, b.counts, width=width, align="edge", color="grey")
        bottom.set(xlim=(0, 1), xlabel="confidence")
        if col == 0:
            top.set_ylabel("accuracy")
            bottom.set_ylabel("items")
    title = "Reliability (bars: accuracy per confidence bin; red: mean confidence)"
    fig.suptitle(title + (f"; {note}" if note else ""))
    save_figure(fig, path)
    return Path(path)


def cartography_maps(
    maps: Mapping[str, Cartography], human_entropy, path: str | Path, note: str = "", max_points: int = 5000
) -> Path:
    """One data map per condition: variability (x) against confidence (y) of each training item, coloured by the
    entropy of its human soft label (one colour scale for all panels); at most `max_points` items drawn (a fixed
    evenly spaced subset) so that large sets stay legible. Writes a PNG to `path`."""
    if not maps:
        raise ValueError("cartography_maps needs at least one condition's map")
    h = np.asarray(human_entropy, dtype=np.float64)
    if h.ndim != 1 or len(h) == 0:
        raise ValueError(f"human entropy must be (N,) with N >= 1, got shape {h.shape}")
    for name, carto in maps.items():
        if np.shape(carto.confidence) != h.shape or np.shape(carto.variability) != h.shape:
            raise ValueError(f"cartography of {name!r} does not have the {len(h)} items of the human entropy")
    shown = np.unique(np.linspace(0, len(h) - 1, min(len(h), max_points)).round().astype(int))
    fig, axes = _panels(len(maps))
    vmax = max(float(h.max()), 1e-9)
    for ax, (name, carto) in zip(axes[0], maps.items()):
        points = ax.scatter(
            np.asarray(carto.variability)[shown],
            np.asarray(carto.confidence)[shown],
            c=h[shown],
            cmap="viridis",
            vmin=0.0,
            vmax=vmax,
            s=6,
        )
        ax.set(xlim=(0, 0.5), ylim=(0, 1), xlabel="variability", title=name)
    axes[0, 0].set_ylabel("confidence")
    fig.colorbar(points, ax=axes[0, -1], label="human label entropy (nats)")
    fig.suptitle("Data maps (Swayamdipta et al. 2020)" + (f"; {note}" if note else ""))
    save_figure(fig, path)
    return Path(path)


def metric_bars(metrics, path: str | Path, note: str = "", metrics_shown=("accuracy", "ece", "kl_human"),
                subsets=("all", "difficult")) -> Path:  # fmt: skip
    """One panel per metric: per condition (x) and test subset (bars side by side) the mean over seeds, with every
    seed's value as a dot (the seed spread). `metrics` is the long table of evaluation.evaluate (columns condition,
    seed, subset, metric, value). Writes a PNG to `path`."""
    rows = metrics[metrics["metric"].isin(metrics_shown) & metrics["subset"].isin(subsets) & (metrics["seed"] >= 0)]
    if rows.empty:
        raise ValueError(f"metric_bars: no rows of {list(metrics_shown)} on {list(subsets)}")
    conditions = list(dict.fromkeys(rows["condition"]))
    fig, axes = _panels(len(metrics_shown))
    width = 0.8 / len(subsets)
    for ax, name in zip(axes[0], metrics_shown):
        for j, subset in enumerate(subsets):
            sel = rows[(rows["metric"] == name) & (rows["subset"] == subset)]
            x = np.arange(len(conditions)) + (j - (len(subsets) - 1) / 2) * width
            means = [sel.loc[sel["condition"] == c, "value"].mean() for c in conditions]
            ax.bar(x, means, width=width, label=subset, alpha=0.7)
            for xi, c in zip(x, conditions):
                values = sel.loc[sel["condition"] == c, "value"].to_numpy()
                ax.scatter(np.full(len(values), xi), values, color="k", s=8, zorder=3)
        ax.set_xticks(np.arange(len(conditions)), conditions, rotation=45, ha="right")
        ax.set_title(name)
    axes[0, 0].legend(title="test items")
    fig.suptitle("Mean over seeds (bars) and each seed (dots)" + (f"; {note}" if note else ""))
    save_figure(fig, path)
    return Path(path)
