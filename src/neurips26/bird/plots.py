"""Figures of paper 04 (BIRD): plain functions from long-form tables to matplotlib Figures (no file I/O)
except `save_figure`, which writes a PNG atomically.

The figures job runs in the report environment, which has no torch, so this module imports only numpy,
pandas and matplotlib. Every function draws a 'no data' panel instead of raising when its table is empty
or a panel has nothing to show.

Conventions: t = 1 is pure noise and t = 0 the data (schedule.py), so time axes run from 1 to 0 (the
direction of generation). Windows are strings ("1", "3", ..., "full", "linear") ordered by their size k,
with "full" (the ideal denoiser) after every local window and "linear" after that.
"""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import matplotlib.patheffects as pe  # noqa: E402
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
from matplotlib.cm import ScalarMappable  # noqa: E402
from matplotlib.colors import Normalize  # noqa: E402
from matplotlib.figure import Figure  # noqa: E402
from matplotlib.lines import Line2D  # noqa: E402
from matplotlib.ticker import NullLocator, ScalarFormatter  # noqa: E402

from neurips26.common.figures import save_figure  # noqa: E402, F401 (the scripts save through it)

ARCH_ORDER = ("unet_tiny", "dit_tiny")
ARCH_LABELS = {"unet_tiny": "UNet (tiny)", "dit_tiny": "DiT (tiny)"}
SIMILARITY_COLUMNS = {
    "best_cos": ("best local BIRD", "tab:blue"),
    "ideal_cos": ("ideal (full window)", "tab:red"),
    "linear_cos": ("linear (Wiener)", "tab:green"),
}
HIGH_NOISE_T = 0.5  # similarity_over_training: t >= this is "high noise"
MEMORIZED_HIGH, MEMORIZED_LOW = 0.9, 0.1  # memorization_curves reference lines
SAMPLES_PER_ROW = 6
MAX_SAMPLE_ROWS = 12  # image rows of sample_grid (two per setting: samples, nearest training images)
FIELD_CLIP = 2.5  # display range of unit-variance fields (data outside [-1, 1])
EMP_ENTROPY_NATS = 0.1  # the measured crossing of the phase diagram


# --------------------------------------------------------------------------- helpers


def window_key(window) -> tuple[int, int, str]:
    """Sort key of a window label: local windows by k, then "full", then "linear", then anything else."""
    w = str(window)
    if w.isdigit():
        return (0, int(w), "")
    if w == "full":
        return (1, 0, "")
    if w == "linear":
        return (2, 0, "")
    return (3, 0, w)


def ordered_windows(windows) -> list[str]:
    """The distinct window labels (as strings) in window_key order."""
    return sorted({str(w) for w in windows}, key=window_key)


def window_label(window) -> str:
    w = str(window)
    return f"{w}\u00d7{w}" if w.isdigit() else w


def ordered_archs(archs) -> list[str]:
    """ARCH_ORDER first (those present), then the others alphabetically."""
    present = {str(a) for a in archs}
    return [a for a in ARCH_ORDER if a in present] + sorted(present - set(ARCH_ORDER))


def n_label(n) -> str:
    n = float(n)
    return f"N={int(n)}" if np.isfinite(n) and n == int(n) else f"N={n:g}"


def _grid(n: int, max_columns: int = 3) -> tuple[int, int]:
    columns = max(1, min(n, max_columns))
    return max(1, -(-n // columns)), columns


def _no_data(ax, text: str = "no data") -> None:
    ax.text(0.5, 0.5, text, ha="center", va="center", transform=ax.transAxes, fontsize=9, color="grey")


def _no_data_figure(text: str) -> Figure:
    fig, ax = plt.subplots(figsize=(4.0, 3.0))
    _no_data(ax, text)
    ax.set_axis_off()
    return fig


def _empty(frame: pd.DataFrame | None, columns) -> bool:
    """True when the frame is missing, empty or lacks one of `columns`."""
    return frame is None or len(frame) == 0 or any(c not in frame.columns for c in columns)


def _panels(n: int, max_columns: int = 3, width: float = 4.6, height: float = 3.6):
    """A figure with n axes on a grid (surplus grid cells removed); returns (fig, list of axes)."""
    n_rows, n_cols = _grid(n, max_columns)
    fig, axes = plt.subplots(n_rows, n_cols, figsize=(width * n_cols, height * n_rows + 0.5), squeeze=False)
    flat = list(axes.ravel())
    for ax in flat[n:]:
        fig.delaxes(ax)
    return fig, flat[:n]


def _shades(n: int, cmap: str = "Blues", lo: float = 0.35, hi: float = 1.0) -> list:
    """n colours from light to dark."""
    colours = plt.get_cmap(cmap)
    if n <= 1:
        return [colours(hi)]
    return [colours(v) for v in np.linspace(lo, hi, n)]


def _n_colours(frame: pd.DataFrame) -> dict[float, tuple]:
    """One viridis colour per N of the whole table, so that a given N has the same colour in every panel."""
    ns = sorted(pd.unique(frame["n_train"].astype(float)))
    return dict(zip(ns, _shades(len(ns), "viridis", 0.0, 0.85)))


def _centre_edges(centres: np.ndarray) -> np.ndarray:
    """Cell edges around sorted centres (midpoints, half a step beyond each end; +-0.5 for one centre)."""
    if len(centres) == 1:
        return np.array([centres[0] - 0.5, centres[0] + 0.5])
    mids = 0.5 * (centres[1:] + centres[:-1])
    return np.concatenate([[2 * centres[0] - mids[0]], mids, [2 * centres[-1] - mids[-1]]])


# --------------------------------------------------------------------------- phase diagram


def _phase_matrix(rows: pd.DataFrame, windows: list[str]) -> tuple[np.ndarray, np.ndarray]:
    """(log10 snr centres, matrix windows x snr of I / log N clipped to [0, 1], NaN where absent)."""
    rows = rows[np.isfinite(rows["snr"]) & (rows["snr"] > 0)]
    ratio = (rows["i_hat"] / rows["log_n"]).replace([np.inf, -np.inf], np.nan)
    cells = (
        pd.DataFrame({"window": rows["window"].astype(str), "snr": rows["snr"].astype(float), "ratio": ratio})
        .groupby(["window", "snr"])["ratio"]
        .mean()
    )
    snrs = np.sort(rows["snr"].astype(float).unique())
    matrix = np.full((len(windows), len(snrs)), np.nan)
    for (window, snr), value in cells.items():
        if window in windows:
            matrix[windows.index(window), np.searchsorted(snrs, snr)] = value
    return np.log10(snrs), np.clip(matrix, 0.0, 1.0)


def _boundary_marks(ax, rows: pd.DataFrame, column: str, windows: list[str], lo: float, hi: float, **style) -> None:
    """Plot log10 of `column` at each window's row; values off the x range show as a triangle at the edge."""
    if rows is None or not len(rows) or column not in rows:
        return
    values = rows.assign(window=rows["window"].astype(str)).groupby("window")[column].mean()
    ys, xs = [], []
    for y, window in enumerate(windows):
        v = float(values.get(window, np.nan))
        if np.isfinite(v) and v > 0:
            ys.append(y)
            xs.append(np.log10(v))
    if not ys:
        return
    xs, ys = np.array(xs), np.array(ys)
    ax.plot(xs, ys, **style)
    kept = ("color", "markeredgecolor", "path_effects", "zorder")
    edge_style = {k: v for k, v in style.items() if k in kept}
    for mask, edge, marker in ((xs < lo, lo, "<"), (xs > hi, hi, ">")):
        if mask.any():
            ax.plot(np.full(mask.sum(), edge), ys[mask], marker, markersize=8, clip_on=False, **edge_style)


def phase_diagram(phase: pd.DataFrame, boundary: pd.DataFrame | None = None) -> Figure:
    """The memorization phase diagram: one row per dataset, one column per training-set size N.

    Each panel is a heatmap of I / log N (i_hat / log_n, clipped to [0, 1]; grey where absent) over
    x = log10 SNR (the grid of the table) and y = window (ordered by k, "full" on top). Overlaid from
    `boundary`: the theory's critical SNR per window (white line, where I_G = log N) and the measured
    crossing where the mean posterior entropy falls to 0.1 nats (red diamonds); a critical SNR off the
    grid is drawn as a triangle at the panel edge. Columns are the union of N over datasets, so a
    dataset without some N gets a 'no data' panel there. Returns rows x columns panels plus one colour bar.
    """
    needed = ("dataset", "n_train", "window", "snr", "i_hat", "log_n")
    if _empty(phase, needed):
        return _no_data_figure("no phase-diagram data")
    datasets = list(dict.fromkeys(phase["dataset"].astype(str)))
    ns = sorted(pd.unique(phase["n_train"].astype(float)))
    if boundary is not None and _empty(boundary, ("dataset", "n_train", "window")):
        boundary = None
    fig, axes = plt.subplots(
        len(datasets),
        len(ns),
        figsize=(3.6 * len(ns) + 1.2, 2.9 * len(datasets) + 0.8),
        squeeze=False,
        layout="constrained",
    )
    cmap = plt.get_cmap("viridis").with_extremes(bad="lightgrey")
    norm = Normalize(0.0, 1.0)
    theory_style = dict(
        color="white",
        lw=1.8,
        marker="o",
        markersize=4,
        zorder=3,
        path_effects=[pe.Stroke(linewidth=3.2, foreground="black"), pe.Normal()],
    )
    emp_style = dict(color="tab:red", ls="none", marker="D", markersize=5, markeredgecolor="white", zorder=4)
    for i, dataset in enumerate(datasets):
        of_dataset = phase[phase["dataset"].astype(str) == dataset]
        windows = ordered_windows(of_dataset["window"])
        for j, n in enumerate(ns):
            ax = axes[i, j]
            rows = of_dataset[of_dataset["n_train"].astype(float) == n]
            ax.set_title(f"{dataset}, {n_label(n)}", fontsize=10)
            x, matrix = _phase_matrix(rows, windows) if len(rows) else (np.array([]), None)
            if not len(x):
                _no_data(ax)
                ax.set_xticks([])
                ax.set_yticks([])
                continue
            x_edges = _centre_edges(x)
            ax.pcolormesh(
                x_edges,
                np.arange(len(windows) + 1) - 0.5,
                np.ma.masked_invalid(matrix),
                cmap=cmap,
                norm=norm,
                shading="flat",
            )
            lo, hi = float(x_edges[0]), float(x_edges[-1])
            if boundary is not None:
                marks = boundary[
                    (boundary["dataset"].astype(str) == dataset) & (boundary["n_train"].astype(float) == n)
                ]
                _boundary_marks(ax, marks, "snr_crit_theory", windows, lo, hi, **theory_style)
                _boundary_marks(ax, marks, "snr_crit_emp", windows, lo, hi, **emp_style)
            ax.set_xlim(lo, hi)
            ax.set_ylim(-0.5, len(windows) - 0.5)
            ax.set_yticks(range(len(windows)), [window_label(w) for w in windows], fontsize=8)
            ax.set_xlabel("log10 SNR")
            if j == 0:
                ax.set_ylabel("window k")
    bar = fig.colorbar(ScalarMappable(norm=norm, cmap=cmap), ax=axes.ravel().tolist(), shrink=0.85)
    bar.set_label("I / log N")
    handles = [
        Line2D([], [], label="theory: I_G = log N", **theory_style),
        Line2D([], [], label=f"measured: entropy = {EMP_ENTROPY_NATS:g} nats", **emp_style),
    ]
    if boundary is not None:
        fig.legend(handles=handles, loc="outside lower center", ncol=2, fontsize=8, facecolor="lightgrey")
    fig.suptitle("BIRD phase diagram: I / log N over SNR and window (memorizes where I \u2265 log N)", fontsize=11)
    return fig


# --------------------------------------------------------------------------- information curves


def information_curves(phase: pd.DataFrame, window="5") -> Figure:
    """The entropy deficit I = log N - <H> against SNR (log x) at one window, one panel per dataset.

    One colour per N: measured i_hat (solid, markers), the theory min(I_G, log N) (dashed) and log N
    (dotted horizontal). Points with SNR <= 0 are dropped. Returns one panel per dataset (3 lines per N).
    """
    window = str(window)
    needed = ("dataset", "n_train", "window", "snr", "i_hat", "i_gauss", "log_n")
    if _empty(phase, needed):
        return _no_data_figure("no information data")
    datasets = list(dict.fromkeys(phase["dataset"].astype(str)))
    colour_of = _n_colours(phase)
    fig, axes = _panels(len(datasets))
    for ax, dataset in zip(axes, datasets):
        rows = phase[(phase["dataset"].astype(str) == dataset) & (phase["window"].astype(str) == window)]
        rows = rows[np.isfinite(rows["snr"]) & (rows["snr"] > 0)]
        ax.set_title(f"{dataset}, window {window_label(window)}", fontsize=10)
        ax.set_xlabel("SNR = a\u00b2/b\u00b2")
        ax.set_ylabel("I = log N \u2212 \u27e8H\u27e9 (nats)")
        if not len(rows):
            _no_data(ax, f"no data for window {window}")
            continue
        for n in sorted(pd.unique(rows["n_train"].astype(float))):
            colour = colour_of[n]
            of_n = rows[rows["n_train"].astype(float) == n]
            curve = of_n.groupby("snr")[["i_hat", "i_gauss", "log_n"]].mean()
            log_n = float(curve["log_n"].mean())
            ax.plot(curve.index, curve["i_hat"], "-o", color=colour, markersize=3, label=f"{n_label(n)} measured")
            ax.plot(curve.index, np.minimum(curve["i_gauss"], curve["log_n"]), "--", color=colour)
            ax.axhline(log_n, color=colour, ls=":", lw=1)
        ax.set_xscale("log")
        ax.grid(alpha=0.3, which="both")
        handles, _ = ax.get_legend_handles_labels()
        handles += [
            Line2D([], [], color="black", ls="--", label="theory min(I_G, log N)"),
            Line2D([], [], color="black", ls=":", label="log N"),
        ]
        ax.legend(handles=handles, fontsize=7)
    fig.suptitle("Information a restricted noisy observation carries about the training index", fontsize=11)
    fig.tight_layout()
    return fig


# --------------------------------------------------------------------------- network calibration


def _regime_panels(kcal: pd.DataFrame, archs):
    """(fig, [(ax, arch, rows or None, title)]): columns = archs, rows = (dataset, n_train) settings."""
    archs = ordered_archs(kcal["arch"]) if archs is None else [str(a) for a in archs]
    settings = list(dict.fromkeys(zip(kcal["dataset"].astype(str), kcal["n_train"].astype(float))))
    fig, axes = plt.subplots(
        len(settings), len(archs), figsize=(5.0 * len(archs), 3.8 * len(settings) + 0.5), squeeze=False
    )
    panels = []
    for i, (dataset, n) in enumerate(settings):
        of_setting = kcal[(kcal["dataset"].astype(str) == dataset) & (kcal["n_train"].astype(float) == n)]
        for j, arch in enumerate(archs):
            rows = of_setting[of_setting["arch"].astype(str) == arch]
            title = f"{ARCH_LABELS.get(arch, arch)}: {dataset}, {n_label(n)}"
            panels.append((axes[i, j], arch, rows if len(rows) else None, title))
    return fig, panels


def kcal_vs_kmem(kcal: pd.DataFrame, archs=None) -> Figure:
    """k_cal (the window whose BIRD denoiser best matches the network) against t, one line per epoch
    (light to dark = early to late), with k_mem at epsilon = 0.8 log N (black dashed) and 0.1 nats (black
    solid), averaged over epochs and seeds since they depend only on the states. The t axis runs from 1
    (noise) to 0 (data), the direction of generation. One panel per arch (columns; `archs` fixes them,
    default: those present) and per (dataset, N) setting (rows); a missing combination says 'no data'.
    """
    needed = ("dataset", "arch", "n_train", "epoch", "t", "k_cal", "k_mem_nats", "k_mem_frac")
    if _empty(kcal, needed):
        return _no_data_figure("no k_cal data")
    fig, panels = _regime_panels(kcal, archs)
    for ax, _arch, rows, title in panels:
        ax.set_title(title, fontsize=10)
        ax.set_xlim(1.0, 0.0)
        ax.set_xlabel("t (1 = noise \u2192 0 = data)")
        ax.set_ylabel("window k")
        if rows is None:
            _no_data(ax)
            continue
        epochs = sorted(pd.unique(rows["epoch"]))
        for colour, epoch in zip(_shades(len(epochs)), epochs):
            curve = rows[rows["epoch"] == epoch].groupby("t")["k_cal"].mean().sort_index()
            ax.plot(curve.index, curve.to_numpy(), "-o", color=colour, markersize=3, label=f"k_cal, epoch {epoch}")
        mem = rows.groupby("t")[["k_mem_nats", "k_mem_frac"]].mean().sort_index()
        ax.plot(
            mem.index, mem["k_mem_frac"].to_numpy(), "--", color="black", lw=1.6, label="k_mem (\u03b5 = 0.8 log N)"
        )
        ax.plot(mem.index, mem["k_mem_nats"].to_numpy(), "-", color="black", lw=1.6, label="k_mem (0.1 nats)")
        ax.grid(alpha=0.3)
        ax.legend(fontsize=7, ncol=2 if len(epochs) > 4 else 1)
    fig.suptitle("Calibrated window k_cal against the edge of memorization k_mem", fontsize=11)
    fig.tight_layout()
    return fig


def similarity_over_training(kcal: pd.DataFrame, archs=None, high_noise_t: float = HIGH_NOISE_T) -> Figure:
    """Cosine similarity of the network's eps-hat with the best local BIRD window (best_cos), the ideal
    denoiser (ideal_cos) and the linear denoiser (linear_cos) against the epoch (symlog x, ticks at the
    epochs), averaged over seeds and over steps with t >= high_noise_t (solid) or t < high_noise_t (dashed).
    Panels as in kcal_vs_kmem; 6 lines per panel where both noise ranges have data."""
    needed = ("dataset", "arch", "n_train", "epoch", "t")
    if _empty(kcal, needed) or not any(c in kcal for c in SIMILARITY_COLUMNS):
        return _no_data_figure("no similarity data")
    fig, panels = _regime_panels(kcal, archs)
    ranges = (
        (f"t \u2265 {high_noise_t:g} (high noise)", "-", "o", lambda t: t >= high_noise_t),
        (f"t < {high_noise_t:g} (low noise)", "--", "s", lambda t: t < high_noise_t),
    )
    for ax, _arch, rows, title in panels:
        ax.set_title(title, fontsize=10)
        ax.set_xlabel("epoch")
        ax.set_ylabel("cosine similarity with the network")
        if rows is None:
            _no_data(ax)
            continue
        epochs = sorted(pd.unique(rows["epoch"]))
        drawn = False
        for _, style, marker, in_range in ranges:
            part = rows[in_range(rows["t"].astype(float))]
            for column, (_, colour) in SIMILARITY_COLUMNS.items():
                if column not in part or not part[column].notna().any():
                    continue
                curve = part.groupby("epoch")[column].mean().sort_index()
                ax.plot(curve.index, curve.to_numpy(), style, marker=marker, markersize=3, color=colour)
                drawn = True
        if not drawn:
            _no_data(ax)
            continue
        ax.set_xscale("symlog", linthresh=1.0)
        ax.xaxis.set_minor_locator(NullLocator())
        ax.set_xticks(epochs)
        ax.xaxis.set_major_formatter(ScalarFormatter())
        ax.grid(alpha=0.3)
        handles = [Line2D([], [], color=colour, label=label) for label, colour in SIMILARITY_COLUMNS.values()]
        handles += [
            Line2D([], [], color="black", ls=style, marker=marker, markersize=3, label=label)
            for label, style, marker, _ in ranges
        ]
        ax.legend(handles=handles, fontsize=7)
    fig.suptitle("Similarity of BIRD denoisers to the network over training", fontsize=11)
    fig.tight_layout()
    return fig


# --------------------------------------------------------------------------- memorization


def memorization_curves(memorization: pd.DataFrame) -> Figure:
    """Fraction of generated samples memorized (d1/d2 < 1/3) against the window (ordered by k, "full"
    last), one line per N and one panel per dataset, with dotted reference lines at 0.9 and 0.1."""
    needed = ("dataset", "n_train", "window", "fraction_memorized")
    if _empty(memorization, needed):
        return _no_data_figure("no memorization data")
    datasets = list(dict.fromkeys(memorization["dataset"].astype(str)))
    colour_of = _n_colours(memorization)
    fig, axes = _panels(len(datasets))
    for ax, dataset in zip(axes, datasets):
        rows = memorization[memorization["dataset"].astype(str) == dataset]
        windows = ordered_windows(rows["window"])
        for n in sorted(pd.unique(rows["n_train"].astype(float))):
            colour = colour_of[n]
            of_n = rows[rows["n_train"].astype(float) == n]
            of_n = of_n.assign(window=of_n["window"].astype(str))
            means = of_n.groupby("window")["fraction_memorized"].mean()
            x = [windows.index(w) for w in windows if w in means.index]
            y = [float(means[w]) for w in windows if w in means.index]
            ax.plot(x, y, "-o", color=colour, markersize=4, label=n_label(n))
        for level in (MEMORIZED_HIGH, MEMORIZED_LOW):
            ax.axhline(level, color="grey", ls=":", lw=1)
        ax.set_xticks(range(len(windows)), [window_label(w) for w in windows], fontsize=8)
        ax.set_ylim(-0.03, 1.03)
        ax.set_xlabel("window k")
        ax.set_ylabel("fraction memorized (d1/d2 < 1/3)")
        ax.set_title(dataset, fontsize=10)
        ax.grid(alpha=0.3)
        ax.legend(fontsize=7, title="training set", title_fontsize=7)
    fig.suptitle(f"Memorized samples against window (dotted: {MEMORIZED_HIGH:g} and {MEMORIZED_LOW:g})", fontsize=11)
    fig.tight_layout()
    return fig


# --------------------------------------------------------------------------- cost


def _is_network(method: str, rows: pd.DataFrame) -> bool:
    return method in ARCH_ORDER or not rows["n_train"].astype(float).notna().any()


def step_cost(cost: pd.DataFrame) -> Figure:
    """Seconds per generated image against N (log-log), one panel per dataset: one line per BIRD method
    (rows with a finite N) and one dashed horizontal line per network (the known archs, or a method whose
    rows have no N; their cost does not depend on N, the mean is drawn). Non-positive times are dropped."""
    needed = ("dataset", "method", "n_train", "seconds_per_image")
    if _empty(cost, needed):
        return _no_data_figure("no cost data")
    datasets = list(dict.fromkeys(cost["dataset"].astype(str)))
    fig, axes = _panels(len(datasets))
    network_colours = plt.get_cmap("Dark2").colors
    for ax, dataset in zip(axes, datasets):
        rows = cost[(cost["dataset"].astype(str) == dataset)]
        rows = rows[np.isfinite(rows["seconds_per_image"].astype(float)) & (rows["seconds_per_image"] > 0)]
        ax.set_title(dataset, fontsize=10)
        ax.set_xlabel("training set size N")
        ax.set_ylabel("seconds per image")
        if not len(rows):
            _no_data(ax)
            continue
        methods = list(dict.fromkeys(rows["method"].astype(str)))
        networks = [m for m in methods if _is_network(m, rows[rows["method"].astype(str) == m])]
        birds = sorted((m for m in methods if m not in networks), key=lambda m: ("ideal" in m, m))
        ns = rows["n_train"].astype(float)
        for m in birds:
            of_method = rows[(rows["method"].astype(str) == m) & ns.notna()]
            curve = of_method.groupby("n_train")["seconds_per_image"].mean().sort_index()
            ax.plot(curve.index, curve.to_numpy(), "-o", markersize=4, label=m)
        for k, m in enumerate(networks):
            ax.axhline(
                float(rows[rows["method"].astype(str) == m]["seconds_per_image"].mean()),
                color=network_colours[k % len(network_colours)],
                ls="--",
                lw=1.5,
                label=f"{m} (any N)",
            )
        if birds:
            ax.set_xscale("log")
            ax.xaxis.set_minor_locator(NullLocator())
            ax.set_xticks(sorted(pd.unique(ns.dropna())))
            ax.xaxis.set_major_formatter(ScalarFormatter())
        ax.set_yscale("log")
        ax.grid(alpha=0.3, which="both")
        ax.legend(fontsize=7)
    fig.suptitle("Generation cost per image against N\n(networks: independent of N)", fontsize=11)
    fig.tight_layout()
    return fig


# --------------------------------------------------------------------------- samples


def _display(image: np.ndarray, limit: float) -> tuple[np.ndarray, str | None]:
    """(C, H, W) -> an imshow array clipped to [-limit, limit] (grey: (H, W), RGB: (H, W, 3) in [0, 1])."""
    image = np.clip(np.asarray(image, dtype=np.float64), -limit, limit)
    if image.ndim == 3 and image.shape[0] == 3:
        return (np.transpose(image, (1, 2, 0)) + limit) / (2 * limit), None
    if image.ndim == 3:
        image = image[0]
    return image, "gray"


def _sort_sample_key(key) -> tuple:
    dataset, n, window = key
    return (str(dataset), float(n), window_key(window))


def sample_grid(samples: dict, nearest: dict | None = None) -> Figure:
    """For each (dataset, n_train, window) key, a row of up to 6 samples above a row of their nearest
    training images (same display range). Images in [-1, 1] are drawn on that range; a setting whose
    values go beyond (the unit-variance toeplitz field) is clipped to [-2.5, 2.5] and its row label says
    so. At most 12 image rows (6 settings) are drawn, in key order; the title counts any dropped."""
    if not samples:
        return _no_data_figure("no samples")
    nearest = nearest or {}
    keys = sorted(samples, key=_sort_sample_key)
    max_settings = MAX_SAMPLE_ROWS // 2
    shown, dropped = keys[:max_settings], len(keys) - max_settings
    fig, axes = plt.subplots(
        2 * len(shown),
        SAMPLES_PER_ROW,
        squeeze=False,
        figsize=(1.2 * SAMPLES_PER_ROW + 1.4, 1.1 * 2 * len(shown) + 0.8),
    )
    for i, key in enumerate(shown):
        dataset, n, window = key
        top = np.asarray(samples[key])[:SAMPLES_PER_ROW]
        bottom = np.asarray(nearest[key])[:SAMPLES_PER_ROW] if key in nearest else None
        values = [a[np.isfinite(a)] for a in (top, bottom) if a is not None and a.size]
        peak = max((float(np.abs(v).max()) for v in values if v.size), default=0.0)
        limit = FIELD_CLIP if peak > 1.05 else 1.0
        name = f"{dataset}, {n_label(n)}\nwindow {window_label(window)}"
        for row, (images, what) in enumerate(((top, "samples"), (bottom, "nearest train"))):
            ax_row = axes[2 * i + row]
            for ax in ax_row:
                ax.set_xticks([])
                ax.set_yticks([])
                for spine in ax.spines.values():
                    spine.set_visible(False)
            clip_note = f"\n(clipped \u00b1{FIELD_CLIP:g})" if limit == FIELD_CLIP else ""
            ax_row[0].set_ylabel(f"{name}\n{what}{clip_note}" if row == 0 else f"{what}{clip_note}", fontsize=7)
            if images is None or not len(images):
                _no_data(ax_row[0], "missing" if images is None else "none")
                continue
            for ax, image in zip(ax_row, images):
                shown_image, cmap = _display(image, limit)
                ax.imshow(
                    shown_image,
                    cmap=cmap,
                    vmin=-limit if cmap else None,
                    vmax=limit if cmap else None,
                    interpolation="nearest",
                )
    title = "BIRD samples (top) above their nearest training images (bottom)"
    if dropped > 0:
        title += f"\nshowing {len(shown)} of {len(keys)} settings ({dropped} dropped to bound the figure)"
    fig.suptitle(title, fontsize=10)
    fig.tight_layout()
    return fig
