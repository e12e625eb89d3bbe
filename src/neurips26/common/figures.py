"""Writing matplotlib figures (shared by the papers' plotting modules)."""

from __future__ import annotations

from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.figure import Figure  # noqa: E402

from neurips26.common.io import atomic_path  # noqa: E402


def save_figure(fig: Figure, path: str | Path, dpi: int = 120) -> None:
    """Write `fig` as a PNG atomically, then close it."""
    try:
        with atomic_path(path) as tmp:
            fig.savefig(tmp, dpi=dpi, format="png")
    finally:
        plt.close(fig)
