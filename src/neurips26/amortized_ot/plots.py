"""Figures of the amortized-OT paper: plain functions from arrays to matplotlib Figures (no file I/O)
except `save_figure`, which writes a PNG atomically."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
from matplotlib.figure import Figure  # noqa: E402

from neurips26.amortized_ot.experiment import METHOD_LABELS  # noqa: E402
from neurips26.common.io import atomic_path  # noqa: E402

METHOD_COLOURS = {
    "ra": "tab:blue",
    "oa": "tab:orange",
    "sliced_mean": "tab:green",
    "metaot": "tab:red",
    "exact_emd": "tab:gray",
    "sinkhorn_cold": "tab:brown",
    "min_swgg": "tab:purple",
    "expected_sliced": "tab:olive",
}
SPEED_METHODS = ("exact_emd", "sinkhorn_cold", "ra", "oa", "metaot", "min_swgg", "expected_sliced")
SLICED_METHODS = ("ra", "oa", "sliced_mean")
PLAN_LABELS = {"exact": "exact OT", "ra": "RA-OT", "oa": "OA-OT", "indep": "independent"}
PLAN_COLOURS = {"exact": "tab:green", "ra": "tab:blue", "oa": "tab:orange", "indep": "tab:red"}


# --------------------------------------------------------------------------- digits


def interpolation_image(x: np.ndarray, y: np.ndarray, pi: np.ndarray, t: float, res: int) -> np.ndarray:
    """McCann interpolant at time t: mass pi_jl at (1 - t) x_j + t y_l, binned on a res x res grid.

    Returns H with H[i, k] the mass in the i-th bin of the second coordinate (the vertical one)
    and the k-th bin of the first, ready for imshow(..., origin="lower").
    """
    points = (1 - t) * x[:, None, :] + t * y[None, :, :]  # (n, m, 2)
    hist, _, _ = np.histogram2d(
        points[..., 0].ravel(),
        points[..., 1].ravel(),
        bins=res,
        range=[[0.0, 1.0], [0.0, 1.0]],
        weights=np.asarray(pi).ravel(),
    )
    return hist.T


def displacement_interpolation_figure(
    x: np.ndarray,
    a: np.ndarray,
    y: np.ndarray,
    b: np.ndarray,
    pi: np.ndarray,
    res: int,
    times: Sequence[float] = (0.0, 0.25, 0.5, 0.75, 1.0),
    n_rows: int = 3,
) -> Figure:
    """Rows: digit pairs; columns: displacement interpolation from the source (t=0) to the target (t=1).

    x, y: (P, n, 2) and (P, m, 2) grid supports in [0, 1]^2; a, b their weights; pi: (P, n, m) plans.
    """
    rows = min(n_rows, len(x))
    fig, axes = plt.subplots(rows, len(times), figsize=(1.7 * len(times), 1.8 * rows + 0.3), squeeze=False)
    for p in range(rows):
        for c, t in enumerate(times):
            ax = axes[p, c]
            img = interpolation_image(x[p], y[p], pi[p], t, res)
            ax.imshow(img, origin="lower", extent=(0, 1, 0, 1), cmap="magma", interpolation="nearest")
            ax.set_xticks([])
            ax.set_yticks([])
            if p == 0:
                ax.set_title(f"t={t:g}")
        axes[p, 0].set_ylabel(f"pair {p}")
    fig.suptitle("Displacement interpolation of the RA-OT plan")
    fig.tight_layout()
    return fig


# --------------------------------------------------------------------------- colours


def barycentric_map(pi: np.ndarray, y: np.ndarray) -> np.ndarray:
    """T(x_j) = sum_l pi_jl y_l / sum_l pi_jl for one plan (n, m) and targets (m, d)."""
    pi = np.asarray(pi, dtype=np.float64)
    mass = pi.sum(axis=1, keepdims=True)
    return (pi @ y) / np.maximum(mass, np.finfo(float).tiny)


def transfer_image(image: np.ndarray, x: np.ndarray, mapped: np.ndarray) -> np.ndarray:
    """Recolour every pixel of `image` (h, w, 3) by the mapped colour of its nearest source atom."""
    from scipy.spatial import cKDTree

    _, nearest = cKDTree(x).query(image.reshape(-1, image.shape[-1]))
    return np.clip(mapped[nearest].reshape(image.shape), 0.0, 1.0)


def colour_transfer_figure(
    crops: np.ndarray, x: np.ndarray, y: np.ndarray, pi_pred: np.ndarray, pi_ref: np.ndarray, n_rows: int = 3
) -> Figure:
    """Rows: crop pairs; columns: source, target, source recoloured by the RA-OT plan and by Sinkhorn's.

    crops: (P, 2, h, w, 3) in [0, 1]; x, y: (P, n, 3), (P, m, 3) colours; pi_*: (P, n, m) plans.
    """
    rows = min(n_rows, len(crops))
    titles = ("source", "target", "RA-OT (predicted)", "Sinkhorn (ground truth)")
    fig, axes = plt.subplots(rows, 4, figsize=(8.4, 2.15 * rows + 0.2), squeeze=False)
    for p in range(rows):
        panels = (
            crops[p, 0],
            crops[p, 1],
            transfer_image(crops[p, 0], x[p], barycentric_map(pi_pred[p], y[p])),
            transfer_image(crops[p, 0], x[p], barycentric_map(pi_ref[p], y[p])),
        )
        for c, img in enumerate(panels):
            ax = axes[p, c]
            ax.imshow(np.clip(img, 0.0, 1.0), interpolation="nearest")
            ax.set_xticks([])
            ax.set_yticks([])
            if p == 0:
                ax.set_title(titles[c], fontsize=10)
        axes[p, 0].set_ylabel(f"pair {p}")
    fig.tight_layout()
    return fig


# --------------------------------------------------------------------------- sphere


def lon_lat(points: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Longitude and latitude in degrees of unit vectors (n, 3)."""
    lon = np.degrees(np.arctan2(points[:, 1], points[:, 0]))
    lat = np.degrees(np.arcsin(np.clip(points[:, 2], -1.0, 1.0)))
    return lon, lat


def sphere_figure(
    points: np.ndarray, supply: np.ndarray, demand: np.ndarray, f_true: np.ndarray, f_pred: np.ndarray
) -> Figure:
    """Equirectangular maps of supply, demand, the Sinkhorn potential f* and RA-OT's predicted f."""
    lon, lat = lon_lat(np.asarray(points))
    size = float(np.clip(6000.0 / len(points), 4.0, 60.0))
    lo = float(min(np.min(f_true), np.min(f_pred)))
    hi = float(max(np.max(f_true), np.max(f_pred)))
    panels = (
        ("supply a", supply, "viridis", None),
        ("demand b", demand, "viridis", None),
        ("Sinkhorn potential f*", f_true, "coolwarm", (lo, hi)),
        ("RA-OT predicted f", f_pred, "coolwarm", (lo, hi)),
    )
    fig, axes = plt.subplots(2, 2, figsize=(10.5, 5.6), squeeze=False)
    for ax, (title, values, cmap, lims) in zip(axes.ravel(), panels):
        vmin, vmax = lims if lims else (None, None)
        sc = ax.scatter(lon, lat, c=values, s=size, cmap=cmap, vmin=vmin, vmax=vmax, linewidths=0)
        fig.colorbar(sc, ax=ax, shrink=0.75)
        ax.set_title(title)
        ax.set_xlim(-180, 180)
        ax.set_ylim(-90, 90)
        ax.set_xticks(range(-180, 181, 90))
        ax.set_yticks(range(-90, 91, 45))
        ax.set_aspect("equal")
        ax.set_xlabel("longitude (deg)")
        ax.set_ylabel("latitude (deg)")
    fig.tight_layout()
    return fig


# --------------------------------------------------------------------------- tables


def error_vs_projections_figure(frame, res: int) -> Figure:
    """Median (25-75% band) over test pairs of the digits RMSE of f against the number of projections."""
    rows = frame[
        (frame["task"] == "digits") & (frame["metric"] == "rmse_f") & (frame["pair"] >= 0) & (frame["res"] == res)
    ]
    fig, ax = plt.subplots(figsize=(5.6, 3.8))
    ticks: set[int] = set()
    for method in SLICED_METHODS:
        sub = rows[(rows["method"] == method) & (rows["projections"] > 0)]
        if sub.empty:
            continue
        stats = sub.groupby("projections")["value"].quantile([0.25, 0.5, 0.75]).unstack().sort_index()
        L = stats.index.to_numpy()
        ticks.update(int(v) for v in L)
        colour = METHOD_COLOURS[method]
        ax.plot(L, stats[0.5], "o-", color=colour, label=METHOD_LABELS[method])
        ax.fill_between(L, stats[0.25], stats[0.75], color=colour, alpha=0.2, linewidth=0)
    meta = rows[rows["method"] == "metaot"]["value"]
    if len(meta):
        ax.axhline(float(np.median(meta)), color=METHOD_COLOURS["metaot"], ls="--", label=METHOD_LABELS["metaot"])
    ax.set_xscale("log", base=2)
    if ticks:
        ax.set_xticks(sorted(ticks))
        ax.set_xticklabels([str(v) for v in sorted(ticks)])
        ax.minorticks_off()
    ax.set_xlabel("number of projections L")
    ax.set_ylabel("RMSE of f (a-weighted)")
    ax.set_title(f"Digits (grid {res}x{res}): error vs projections")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    return fig


def speed_figure(frame, projections: int, res_by_task: dict[str, int]) -> Figure:
    """Per task, prediction time per instance (log scale) of each method; sliced methods at `projections`."""
    tasks = [t for t in ("digits", "colour", "sphere") if t in res_by_task]
    fig, axes = plt.subplots(1, max(1, len(tasks)), figsize=(4.2 * max(1, len(tasks)), 4.0), squeeze=False)
    for ax, task in zip(axes[0], tasks):
        rows = frame[
            (frame["task"] == task)
            & (frame["metric"] == "t_pred_ms")
            & (frame["pair"] == -1)
            & (frame["res"] == res_by_task[task])
        ]
        rows = rows[~rows["method"].isin(SLICED_METHODS) | (rows["projections"] == projections)]
        times = rows.groupby("method")["value"].mean()
        methods = [m for m in SPEED_METHODS if m in times.index and np.isfinite(times[m]) and times[m] > 0]
        heights = [float(times[m]) for m in methods]
        pos = np.arange(len(methods))
        bars = ax.bar(pos, heights, color=[METHOD_COLOURS[m] for m in methods])
        for bar, h in zip(bars, heights):
            ax.annotate(
                f"{h:.3g}",
                (bar.get_x() + bar.get_width() / 2, h),
                ha="center",
                va="bottom",
                fontsize=7,
                xytext=(0, 1),
                textcoords="offset points",
            )
        ax.set_yscale("log")
        ax.set_xticks(pos)
        ax.set_xticklabels([METHOD_LABELS[m] for m in methods], rotation=40, ha="right", fontsize=8)
        ax.set_title(f"{task} (res {res_by_task[task]}, L={projections})")
        ax.set_ylabel("time per instance (ms)")
        ax.grid(axis="y", alpha=0.3, which="both")
        if heights:
            ax.set_ylim(min(heights) / 3, max(heights) * 4)
        else:
            ax.text(0.5, 0.5, "no timings", ha="center", va="center", transform=ax.transAxes)
    fig.tight_layout()
    return fig


# --------------------------------------------------------------------------- flow matching


def cfm_figure(samples: dict[str, dict[str, np.ndarray]], w2: dict[str, float]) -> Figure:
    """One panel per coupling plan: target samples (grey) and the flow's generated samples (colour)."""
    plans = [p for p in PLAN_LABELS if p in samples] + [p for p in samples if p not in PLAN_LABELS]
    everything = (
        np.concatenate([np.concatenate([s["generated"], s["target"]]) for s in samples.values()])
        if samples
        else np.array([[0.0, 0.0], [1.0, 1.0]])
    )
    lo, hi = np.percentile(everything, [0.5, 99.5], axis=0)
    pad = 0.1 * (hi - lo) + 1e-9
    aspect = float(np.clip((hi[1] - lo[1] + 2 * pad[1]) / (hi[0] - lo[0] + 2 * pad[0]), 0.3, 2.0))
    width = 3.4
    fig, axes = plt.subplots(
        1, max(1, len(plans)), figsize=(width * max(1, len(plans)), width * aspect + 0.9), squeeze=False
    )
    for ax, plan in zip(axes[0], plans):
        s = samples[plan]
        ax.scatter(*s["target"].T, s=4, color="lightgrey", label="target", linewidths=0)
        ax.scatter(
            *s["generated"].T, s=4, color=PLAN_COLOURS.get(plan, "tab:blue"), alpha=0.7, label="generated", linewidths=0
        )
        label = PLAN_LABELS.get(plan, plan)
        ax.set_title(f"{label} plan, W2={w2[plan]:.3f}" if plan in w2 else f"{label} plan", fontsize=10)
        ax.set_xlim(lo[0] - pad[0], hi[0] + pad[0])
        ax.set_ylim(lo[1] - pad[1], hi[1] + pad[1])
        ax.set_aspect("equal")
        ax.set_xticks([])
        ax.set_yticks([])
    if plans:
        handles, labels = axes[0, 0].get_legend_handles_labels()
        fig.legend(handles, labels, loc="lower center", ncol=2, fontsize=8, markerscale=3, frameon=False)
    fig.tight_layout(rect=(0, 0.08, 1, 1))
    return fig


def save_figure(fig: Figure, path: str | Path) -> None:
    """Write `fig` as a PNG (dpi 120) atomically, then close it."""
    try:
        with atomic_path(path) as tmp:
            fig.savefig(tmp, dpi=120, format="png")
    finally:
        plt.close(fig)
