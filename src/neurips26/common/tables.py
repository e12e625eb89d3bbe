"""Long-form result tables: one row per (experiment, method, seed, pair, metric)."""

from __future__ import annotations

import numpy as np
import pandas as pd

BATCH_LEVEL = -1  # the `pair` of rows that describe a whole batch (timings, totals)


def long_form(
    per_item: dict[str, np.ndarray], batch_level: dict[str, float], item_index: np.ndarray | None = None, **columns
) -> pd.DataFrame:
    """Rows for per-item metrics (pair = item_index, default 0..n-1) and batch-level ones (pair = -1).

    `columns` are constant columns put first (task, method, seed, ...).
    """
    frames = []
    for metric, values in per_item.items():
        values = np.asarray(values, dtype=np.float64)
        index = np.arange(len(values)) if item_index is None else np.asarray(item_index)
        frames.append(pd.DataFrame({"pair": index, "metric": metric, "value": values}))
    if batch_level:
        frames.append(
            pd.DataFrame(
                {
                    "pair": BATCH_LEVEL,
                    "metric": list(batch_level),
                    "value": np.asarray(list(batch_level.values()), dtype=np.float64),
                }
            )
        )
    frame = pd.concat(frames, ignore_index=True)
    for key, value in reversed(columns.items()):
        frame.insert(0, key, value)
    return frame
