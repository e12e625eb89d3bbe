"""Paper 03's figures (arXiv 2608.23014; the project page's Fig. 3, the part assets, Fig. 4's edit, Table 1): orthogonal
slices of real and generated volumes per method, the part assets with their paste, an edit before and after, and the
regional Frechet distances with their seed and bootstrap intervals.

Volumes are (X, Y, Z) arrays on a RAS grid in [-1, 1] (background -1), shown on one grey scale [-1, 1]: sagittal
(fixed x), coronal (fixed y) and axial (fixed z) planes through the grid's centre unless given, each transposed so
that superior or anterior is up.
"""

from __future__ import annotations

import textwrap

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

from .published import FD_HEADERS, FD_REGIONS  # noqa: E402
from .summary import METHOD_LABELS  # noqa: E402

__all__ = ["edit_panels", "orthogonal_slices", "part_assets", "regional_fd"]

PLANES = ("sagittal", "coronal", "axial")


def _planes(volume: np.ndarray, centre=None) -> list[np.ndarray]:
    """The three orthogonal planes of a (X, Y, Z) volume through ``centre`` (default the grid's centre), each with
    its vertical axis superior (sagittal, coronal) or anterior (axial) up."""
    volume = np.asarray(volume)
    if volume.ndim != 3:
        raise ValueError(f"a volume to slice must be (X, Y, Z), got shape {volume.shape}")
    x, y, z = (np.asarray(volume.shape) // 2) if centre is None else centre
    return [volume[x, :, :].T, volume[:, y, :].T, volume[:, :, z].T]


def _show(ax, plane: np.ndarray, title: str = "", ylabel: str = "") -> None:
    ax.imshow(plane, cmap="gray", vmin=-1.0, vmax=1.0, origin="lower", interpolation="nearest")
    ax.set_xticks([])
    ax.set_yticks([])
    if title:
        ax.set_title(title, fontsize=8)
    if ylabel:
        ax.set_ylabel(textwrap.fill(ylabel, 24), fontsize=7)  # long method names wrap within their row


def orthogonal_slices(volumes: dict[str, np.ndarray], centre=None):
    """Rows: the volumes by label (``real`` first, then each method), columns: sagittal, coronal and axial planes."""
    fig, axes = plt.subplots(len(volumes), 3, figsize=(5.4, 1.7 * len(volumes)), squeeze=False)
    for i, (label, volume) in enumerate(volumes.items()):
        for j, plane in enumerate(_planes(volume, centre)):
            _show(axes[i, j], plane, PLANES[j] if i == 0 else "", METHOD_LABELS.get(label, label) if j == 0 else "")
    fig.tight_layout()
    return fig


def part_assets(assets: dict[str, np.ndarray], paste: np.ndarray):
    """One row per part asset (in its support's frame, (x, y, z)) and a last row with the naive paste of the same
    sample on the template grid; the three planes through each array's centre."""
    rows = {**{f"asset {p}": a for p, a in assets.items()}, "paste (scaffold)": paste}
    fig, axes = plt.subplots(len(rows), 3, figsize=(5.4, 1.7 * len(rows)), squeeze=False)
    for i, (label, volume) in enumerate(rows.items()):
        for j, plane in enumerate(_planes(volume)):
            _show(axes[i, j], plane, PLANES[j] if i == 0 else "", label if j == 0 else "")
    fig.tight_layout()
    return fig


def edit_panels(edits: dict[str, dict[str, np.ndarray]], plane: str = "axial"):
    """One row per edited part: recipient (before), donor, edited (after) and |edited - recipient| on one plane; the
    difference on its own scale [0, 1]."""
    index = PLANES.index(plane)
    columns = ("recipient", "donor", "edited")
    fig, axes = plt.subplots(len(edits), 4, figsize=(7.0, 1.8 * len(edits)), squeeze=False)
    for i, (part, volumes) in enumerate(edits.items()):
        for j, name in enumerate(columns):
            _show(axes[i, j], _planes(volumes[name])[index], name if i == 0 else "", f"edit {part}" if j == 0 else "")
        change = np.abs(_planes(volumes["edited"])[index] - _planes(volumes["recipient"])[index])
        axes[i, 3].imshow(change, cmap="magma", vmin=0.0, vmax=1.0, origin="lower", interpolation="nearest")
        axes[i, 3].set_xticks([])
        axes[i, 3].set_yticks([])
        if i == 0:
            axes[i, 3].set_title("|after - before|", fontsize=8)
    fig.tight_layout()
    return fig


def regional_fd(long: pd.DataFrame):
    """Per feature network, the raw FD of every method per region: the mean over seeds with its 95% t interval over
    seeds (thick bar) and the mean subject-cluster bootstrap interval (thin bar), a panel per region (own scale)."""
    networks = list(dict.fromkeys(long["features"]))
    regions = [r for r in FD_REGIONS if r in set(long["region"])]
    fig, axes = plt.subplots(len(networks), len(regions), figsize=(2.4 * len(regions), 2.6 * len(networks)),
                             squeeze=False)  # fmt: skip
    for i, network in enumerate(networks):
        for j, region in enumerate(regions):
            ax = axes[i, j]
            rows = long[(long["features"] == network) & (long["region"] == region)]
            x = np.arange(len(rows))
            mean = rows["mean"].to_numpy(float)
            for offset, (low, high, width, colour) in enumerate(
                (("bootstrap_low", "bootstrap_high", 0.8, "0.6"), ("low", "high", 2.5, "C0"))
            ):
                lo, hi = rows[low].to_numpy(float), rows[high].to_numpy(float)
                ok = np.isfinite(lo) & np.isfinite(hi)
                ax.vlines(x[ok] + 0.12 * offset, lo[ok], hi[ok], color=colour, lw=width)
            ax.plot(x + 0.06, mean, "o", color="k", ms=3)
            ax.set_xticks(x, rows["method"], rotation=60, fontsize=7)
            ax.set_title(f"{FD_HEADERS[region]} ({network})", fontsize=8)
            if j == 0:
                ax.set_ylabel("Frechet distance (raw)", fontsize=8)
    fig.tight_layout()
    return fig
