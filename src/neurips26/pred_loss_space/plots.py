"""Figures of paper 01 (prediction space vs loss space): plain functions from tables and arrays to matplotlib
Figures (no file I/O) except `save_figure`, which writes a PNG atomically.

The figures job runs in the report environment, which has no torch, so this module must not import
`spaces` (torch at module level): `loss_weight_curve`, `amplification_curve` and `logit_normal_density`
below are numpy copies of the formulas in `spaces`; tests/test_pred_loss_space_plots.py checks they agree.
"""

from __future__ import annotations

import re

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
from matplotlib.figure import Figure  # noqa: E402
from matplotlib.lines import Line2D  # noqa: E402
from matplotlib.patches import Rectangle  # noqa: E402

from neurips26.common.figures import save_figure  # noqa: E402, F401 (the scripts save through it)

SPACES = ("x", "eps", "v")  # the same order as spaces.SPACES
SPACE_LABELS = {"x": "x", "eps": "\u03b5", "v": "v"}
SPACE_COLOURS = {"x": "tab:blue", "eps": "tab:orange", "v": "tab:green"}
LINE_STYLES = ("-", "--", ":", "-.", (0, (5, 1, 1, 1, 1, 1)), (0, (1, 3)))
T_EPS = 0.05
T_MIN = 1e-3
TOY_LIMIT = 1.2
MOSAIC = 4  # a cell of an image regime shows MOSAIC x MOSAIC samples
REGIME_COLUMNS = ("dataset", "arch", "bottleneck")
RUN_ID = re.compile(r"(?P<dataset>[^/]+)/(?P<arch>[^/]+)/(?P<pred>x|eps|v)x(?P<loss>x|eps|v)/s(?P<seeds>\d+(?:-\d+)*)")


# --------------------------------------------------------------------- formulas (numpy copies of spaces)


def loss_weight_curve(loss: str, t: np.ndarray, t_eps: float = T_EPS) -> np.ndarray:
    """w_L(t), the L-space loss over the x-space loss (spaces.loss_weight)."""
    t = np.asarray(t, dtype=np.float64)
    one_minus = np.maximum(1 - t, t_eps)
    if loss == "x":
        return np.ones_like(t)
    if loss == "eps":
        return t**2 / one_minus**2
    if loss == "v":
        return 1 / one_minus**2
    raise ValueError(f"loss space {loss!r} is not one of {SPACES}")


def amplification_curve(pred: str, t: np.ndarray, t_min: float = T_MIN) -> np.ndarray:
    """Analytic |d x_hat| / |d o| of prediction space `pred` (spaces.amplification)."""
    t = np.asarray(t, dtype=np.float64)
    if pred == "x":
        return np.ones_like(t)
    if pred == "eps":
        return (1 - t) / np.maximum(t, t_min)
    if pred == "v":
        return 1 - t
    raise ValueError(f"prediction space {pred!r} is not one of {SPACES}")


def logit_normal_density(t: np.ndarray, p_mean: float, p_std: float) -> np.ndarray:
    """Density of t = sigmoid(u), u ~ N(p_mean, p_std^2) (the law of spaces.sample_t)."""
    t = np.asarray(t, dtype=np.float64)
    u = np.log(t) - np.log1p(-t)
    gauss = np.exp(-0.5 * ((u - p_mean) / p_std) ** 2) / (p_std * np.sqrt(2 * np.pi))
    return gauss / (t * (1 - t))


# --------------------------------------------------------------------------- table helpers


def regimes(metrics: pd.DataFrame) -> list[tuple[str, str, bool]]:
    """(dataset, arch, bottleneck) in the order they first appear in the table."""
    rows = metrics[list(REGIME_COLUMNS)].drop_duplicates()
    return [(str(d), str(a), bool(b)) for d, a, b in rows.itertuples(index=False)]


def regime_title(dataset: str, arch: str, bottleneck: bool) -> str:
    return f"{dataset}/{arch}, {'bottleneck' if bottleneck else 'no bottleneck'}"


def _of_regime(metrics: pd.DataFrame, regime: tuple[str, str, bool]) -> pd.DataFrame:
    dataset, arch, bottleneck = regime
    return metrics[
        (metrics["dataset"] == dataset) & (metrics["arch"] == arch) & (metrics["bottleneck"].astype(bool) == bottleneck)
    ]


def run_level(metrics: pd.DataFrame, metric: str) -> pd.DataFrame:
    """Rows of a run-level metric (t = NaN)."""
    return metrics[metrics["t"].isna() & (metrics["metric"] == metric)]


def per_t(metrics: pd.DataFrame, metric: str) -> pd.DataFrame:
    """Rows of a per-t metric (t set)."""
    return metrics[metrics["t"].notna() & (metrics["metric"] == metric)]


def cell_matrix(rows: pd.DataFrame) -> np.ndarray:
    """3x3 seed means of `value`, rows = pred and columns = loss in SPACES order; NaN where a cell is absent.

    A seed whose value is infinite makes the mean infinite, which is what a diverged run should show."""
    means = rows.groupby(["pred", "loss"])["value"].mean()
    matrix = np.full((len(SPACES), len(SPACES)), np.nan)
    for i, pred in enumerate(SPACES):
        for j, loss in enumerate(SPACES):
            if (pred, loss) in means.index:
                matrix[i, j] = float(means[(pred, loss)])
    return matrix


def _grid(n: int, max_columns: int = 3) -> tuple[int, int]:
    columns = max(1, min(n, max_columns))
    return max(1, -(-n // columns)), columns


def _no_data(ax, text: str = "no data") -> None:
    ax.text(0.5, 0.5, text, ha="center", va="center", transform=ax.transAxes, fontsize=9, color="grey")


# --------------------------------------------------------------------------- heatmaps


def heatmaps(metrics: pd.DataFrame, metric: str, label: str) -> Figure:
    """One 3x3 panel per regime (rows: prediction space, columns: loss space) coloured by log10 of the seed
    mean of a run-level metric, every cell annotated with its value; the lowest cell of a panel is outlined.

    Cells whose value is not a positive finite number are left grey and annotated as they are ("nan", "inf").
    Returns 2 axes per regime (the panel and its colour bar), or one axis saying there is no data.
    """
    rows = run_level(metrics, metric)
    groups = regimes(rows)
    if not groups:
        fig, ax = plt.subplots(figsize=(4.0, 3.0))
        _no_data(ax, f"no {label} values")
        ax.set_axis_off()
        return fig
    n_rows, n_cols = _grid(len(groups))
    fig, axes = plt.subplots(n_rows, n_cols, figsize=(4.3 * n_cols, 3.7 * n_rows + 0.4), squeeze=False)
    for ax in axes.ravel()[len(groups) :]:
        fig.delaxes(ax)
    cmap = plt.get_cmap("viridis").with_extremes(bad="lightgrey")
    ticks = [SPACE_LABELS[s] for s in SPACES]
    for ax, regime in zip(axes.ravel(), groups):
        values = cell_matrix(_of_regime(rows, regime))
        plottable = np.isfinite(values) & (values > 0)
        with np.errstate(divide="ignore", invalid="ignore"):
            logs = np.where(plottable, np.log10(np.where(plottable, values, 1.0)), np.nan)
        image = ax.imshow(np.ma.masked_invalid(logs), cmap=cmap, aspect="equal")
        if plottable.any():
            lo, hi = float(np.nanmin(logs)), float(np.nanmax(logs))
            if hi - lo < 1e-9:
                lo, hi = lo - 0.5, hi + 0.5
            image.set_clim(lo, hi)
            mid = 0.5 * (lo + hi)
        else:
            mid = 0.0
        for i in range(len(SPACES)):
            for j in range(len(SPACES)):
                v = values[i, j]
                dark = plottable[i, j] and logs[i, j] < mid
                ax.text(j, i, f"{v:.3g}", ha="center", va="center", fontsize=9, color="white" if dark else "black")
        if plottable.any():
            best = np.unravel_index(np.nanargmin(np.where(plottable, values, np.nan)), values.shape)
            ax.add_patch(
                Rectangle((best[1] - 0.5, best[0] - 0.5), 1, 1, fill=False, edgecolor="red", linewidth=2, clip_on=False)
            )
        ax.set_xticks(range(len(SPACES)), ticks)
        ax.set_yticks(range(len(SPACES)), ticks)
        ax.set_xlabel("loss space")
        ax.set_ylabel("prediction space")
        ax.set_title(regime_title(*regime), fontsize=10)
        bar = fig.colorbar(image, ax=ax, shrink=0.85)
        bar.set_label(f"log10 {label}", fontsize=8)
    fig.suptitle(f"{label}: seed mean per cell (red: lowest)", fontsize=11)
    fig.tight_layout()
    return fig


# --------------------------------------------------------------------------- amplification


def amplification(metrics: pd.DataFrame, t_eps: float, t_min: float = T_MIN) -> Figure:
    """Left: x-space error amplification |d x_hat|/|d o| against t, analytic (lines) and measured (markers,
    mean over all runs of a prediction space). Right: x-space denoising MSE against t per prediction space
    (mean over loss spaces and seeds), one line style per regime. Both on a log y axis; 2 axes."""
    fig, (left, right) = plt.subplots(1, 2, figsize=(11.0, 4.2))
    t = np.linspace(0.005, 0.995, 400)
    measured = per_t(metrics, "amp_x_emp")
    for pred in SPACES:
        colour = SPACE_COLOURS[pred]
        left.plot(t, amplification_curve(pred, t, t_min), color=colour, label=f"{SPACE_LABELS[pred]}-pred (analytic)")
        points = measured[measured["pred"] == pred].groupby("t")["value"].mean()
        points = points[np.isfinite(points) & (points > 0)]
        if len(points):
            left.plot(
                points.index,
                points.to_numpy(),
                "o",
                color=colour,
                markersize=5,
                markerfacecolor="none",
                label=f"{SPACE_LABELS[pred]}-pred (measured)",
            )
    left.axvline(1 - t_eps, color="grey", lw=0.8, ls=":")
    left.set_yscale("log")
    left.set_xlim(0, 1)
    left.set_xlabel("t (0 = noise, 1 = data)")
    left.set_ylabel(r"$|\delta\hat{x}| \,/\, |\delta o|$")
    left.set_title("error amplification into x-space")
    left.grid(alpha=0.3, which="both")
    left.legend(fontsize=7, ncol=2)

    mse = per_t(metrics, "mse_x")
    groups = regimes(mse)
    drawn = False
    for k, regime in enumerate(groups):
        rows = _of_regime(mse, regime)
        for pred in SPACES:
            curve = rows[rows["pred"] == pred].groupby("t")["value"].mean().sort_index()
            curve = curve[np.isfinite(curve) & (curve > 0)]
            if len(curve):
                right.plot(
                    curve.index,
                    curve.to_numpy(),
                    LINE_STYLES[k % len(LINE_STYLES)],
                    marker=".",
                    color=SPACE_COLOURS[pred],
                )
                drawn = True
    if drawn:
        right.set_yscale("log")
        handles = [Line2D([], [], color=SPACE_COLOURS[p], label=f"{SPACE_LABELS[p]}-pred") for p in SPACES]
        handles += [
            Line2D([], [], color="black", ls=LINE_STYLES[k % len(LINE_STYLES)], label=regime_title(*r))
            for k, r in enumerate(groups)
        ]
        right.legend(handles=handles, fontsize=7)
    else:
        _no_data(right)
    right.set_xlim(0, 1)
    right.set_xlabel("t (0 = noise, 1 = data)")
    right.set_ylabel("x-space denoising MSE")
    right.set_title("denoising error (mean over loss spaces and seeds)")
    right.grid(alpha=0.3, which="both")
    fig.tight_layout()
    return fig


# --------------------------------------------------------------------------- loss weights


def loss_weights(t_eps: float, p_mean: float, p_std: float) -> Figure:
    """w_L(t) of the three loss spaces (log y) and, on a twin axis, the logit-normal density of training t;
    2 axes."""
    fig, ax = plt.subplots(figsize=(6.0, 4.0))
    t = np.linspace(1e-3, 1 - 1e-3, 999)
    density = logit_normal_density(t, p_mean, p_std)
    twin = ax.twinx()
    twin.fill_between(t, density, color="grey", alpha=0.2, linewidth=0)
    twin.plot(t, density, color="grey", lw=1)
    twin.set_ylim(0, 1.1 * float(np.max(density)))
    twin.set_ylabel(f"density of t = sigmoid(N({p_mean:g}, {p_std:g}\u00b2))", color="grey")
    twin.tick_params(axis="y", colors="grey")
    for loss in SPACES:
        ax.plot(
            t,
            loss_weight_curve(loss, t, t_eps),
            color=SPACE_COLOURS[loss],
            lw=2,
            label=f"$w_{{{SPACE_LABELS[loss]}}}(t)$ ({SPACE_LABELS[loss]}-loss)",
        )
    ax.axvline(1 - t_eps, color="black", lw=0.8, ls=":", label=f"1 - t clamped at {t_eps:g}")
    ax.set_yscale("log")
    ax.set_xlim(0, 1)
    ax.set_xlabel("t (0 = noise, 1 = data)")
    ax.set_ylabel("loss weight relative to x-loss")
    ax.set_title("Loss space as a reweighting of noise levels")
    ax.grid(alpha=0.3, which="both")
    ax.set_zorder(twin.get_zorder() + 1)  # lines above the density
    ax.patch.set_visible(False)
    ax.legend(fontsize=8, loc="lower right")
    fig.tight_layout()
    return fig


# --------------------------------------------------------------------------- samples


def parse_run(run: str) -> dict:
    """'dataset/arch/{pred}x{loss}/s{seeds}' (a job's seeds joined by '-', or one seed) -> its parts."""
    match = RUN_ID.fullmatch(run)
    if match is None:
        raise ValueError(f"run id {run!r} is not 'dataset/arch/{{pred}}x{{loss}}/s{{seeds}}' (seeds as 0 or 0-1-2)")
    return {**match.groupdict(), "seeds": [int(seed) for seed in match["seeds"].split("-")]}


def lowest_seed_runs(jobs: list[str], paths: list[str]) -> dict[str, tuple[str, int]]:
    """The sample grid shows one seed per cell (the lowest): '{cell}/s{seed}' -> (the samples file of the job
    that holds it, the seed), for those seeds only."""
    if len(jobs) != len(paths):
        raise ValueError(f"{len(jobs)} run ids but {len(paths)} sample files")
    chosen: dict[tuple, tuple[int, str]] = {}
    for job, path in zip(jobs, paths):
        part = parse_run(job)
        key = (part["dataset"], part["arch"], part["pred"], part["loss"])
        seed = min(part["seeds"])
        if key not in chosen or seed < chosen[key][0]:
            chosen[key] = (seed, path)
    return {f"{d}/{a}/{p}x{loss}/s{seed}": (path, seed) for (d, a, p, loss), (seed, path) in chosen.items()}


def finite_samples(samples: np.ndarray) -> np.ndarray:
    samples = np.asarray(samples)
    if len(samples) == 0:
        return samples
    return samples[np.isfinite(samples.reshape(len(samples), -1)).all(axis=1)]


def image_mosaic(images: np.ndarray, side: int = MOSAIC) -> np.ndarray:
    """The first side*side images (n, [1,] h, w) tiled row-major; missing tiles are NaN (drawn blank)."""
    images = np.asarray(images, dtype=np.float64)
    if images.ndim == 4:
        images = images[:, 0]
    h, w = images.shape[-2:]
    mosaic = np.full((side * h, side * w), np.nan)
    for k, img in enumerate(images[: side * side]):
        r, c = divmod(k, side)
        mosaic[r * h : (r + 1) * h, c * w : (c + 1) * w] = img
    return mosaic


def is_toy(dataset: str) -> bool:
    return dataset.startswith("toy_")


def sample_grid(samples: dict[str, np.ndarray], projections: dict[str, np.ndarray]) -> Figure:
    """Per regime (dataset/arch) a 3x3 block (rows: prediction space, columns: loss space) of the samples of
    the lowest seed: a 4x4 mosaic of the first finite images, or for toy datasets a scatter of the finite
    samples projected onto the data plane (x @ projection) on [-1.2, 1.2]^2. Non-finite samples are skipped
    and counted in the cell. Returns 9 axes per regime."""
    cells: dict[str, dict[tuple[str, str], tuple[int, np.ndarray]]] = {}
    for run, array in samples.items():
        part = parse_run(run)
        block = cells.setdefault(f"{part['dataset']}/{part['arch']}", {})
        key = (part["pred"], part["loss"])
        seed = min(part["seeds"])
        if key not in block or seed < block[key][0]:
            block[key] = (seed, array)
    if not cells:
        fig, ax = plt.subplots(figsize=(4.0, 3.0))
        _no_data(ax, "no samples")
        ax.set_axis_off()
        return fig
    n_rows, n_cols = _grid(len(cells))
    fig = plt.figure(figsize=(4.2 * n_cols, 4.5 * n_rows))
    subfigs = np.atleast_1d(fig.subfigures(n_rows, n_cols, squeeze=False)).ravel()
    for sub, (name, block) in zip(subfigs, cells.items()):
        dataset = name.split("/")[0]
        toy = is_toy(dataset)
        if toy and dataset not in projections:
            raise ValueError(f"sample_grid: no projection for the toy dataset {dataset!r}")
        axes = sub.subplots(len(SPACES), len(SPACES), squeeze=False)
        for i, pred in enumerate(SPACES):
            for j, loss in enumerate(SPACES):
                ax = axes[i, j]
                ax.set_xticks([])
                ax.set_yticks([])
                if i == 0:
                    ax.set_title(f"{SPACE_LABELS[loss]}-loss", fontsize=9)
                if j == 0:
                    ax.set_ylabel(f"{SPACE_LABELS[pred]}-pred", fontsize=9)
                if (pred, loss) not in block:
                    _no_data(ax, "missing")
                    continue
                raw = np.asarray(block[(pred, loss)][1])
                kept = finite_samples(raw)
                notes = [f"{len(raw) - len(kept)} non-finite"] if len(kept) < len(raw) else []
                if toy:
                    outside = _scatter_cell(ax, kept, projections[dataset])
                    if outside:
                        notes.append(f"{outside} outside")
                else:
                    ax.imshow(
                        np.clip(image_mosaic(kept), -1.0, 1.0),
                        cmap="gray",
                        vmin=-1.0,
                        vmax=1.0,
                        interpolation="nearest",
                    )
                if notes:
                    ax.text(
                        0.02,
                        0.02,
                        ", ".join(notes),
                        transform=ax.transAxes,
                        fontsize=6,
                        color="red",
                        va="bottom",
                        bbox={"facecolor": "white", "alpha": 0.8, "pad": 1, "linewidth": 0},
                    )
        sub.suptitle(name, fontsize=10)
    return fig


def _scatter_cell(ax, kept: np.ndarray, projection: np.ndarray) -> int:
    """Scatter the 2-D projections of finite samples on the fixed limits; returns how many fall outside."""
    ax.set_xlim(-TOY_LIMIT, TOY_LIMIT)
    ax.set_ylim(-TOY_LIMIT, TOY_LIMIT)
    ax.set_aspect("equal")
    if not len(kept):
        return 0
    with np.errstate(all="ignore"):
        coords = kept.reshape(len(kept), -1).astype(np.float64) @ np.asarray(projection, dtype=np.float64)
    coords = coords[np.isfinite(coords).all(axis=1)]
    ax.scatter(coords[:, 0], coords[:, 1], s=2, color="tab:blue", alpha=0.5, linewidths=0, rasterized=True)
    return int((np.abs(coords) > TOY_LIMIT).any(axis=1).sum())
