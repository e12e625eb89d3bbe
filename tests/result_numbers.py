"""Every number a run wrote, minus the wall-clock timings, so two runs of the same targets can be compared."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pandas as pd

# names of timings (seconds, milliseconds, t_... ratios of run times, rates per second, `_s` durations and their
# ratios): they differ between any two runs
TIMING = re.compile(r"second|_ms$|(?:^|[\s(])t_|(?:^|[\s(])t\(|_per_s$|_s$|_s_per_|_total_over_")


def _numbers(obj, prefix: str, out: dict) -> None:
    if isinstance(obj, dict):
        for key, value in obj.items():
            if not TIMING.search(str(key)):
                _numbers(value, f"{prefix}/{key}", out)
    elif isinstance(obj, (list, tuple)) and obj and not isinstance(obj[0], (int, float, str)):
        for i, value in enumerate(obj):
            _numbers(value, f"{prefix}[{i}]", out)
    elif hasattr(obj, "detach"):  # a torch tensor
        out[prefix] = obj.detach().cpu().numpy()
    else:
        out[prefix] = obj


def _table(path: Path) -> pd.DataFrame:
    frame = pd.read_parquet(path)
    if "metric" in frame.columns:
        frame = frame[~frame["metric"].astype(str).str.contains(TIMING)]
    # a claim's note quotes run times; the commit differs between a clone and a copy
    drop = [c for c in frame.columns if TIMING.search(c) or c in ("git_commit", "note")]
    return frame.drop(columns=drop).reset_index(drop=True)


def result_numbers(results: Path) -> dict[str, object]:
    """{file/key: value} for every Parquet table, .npz archive and torch file under `results`."""
    out: dict[str, object] = {}
    for path in sorted(results.rglob("*")):
        name = str(path.relative_to(results))
        if path.suffix == ".parquet":
            out[name] = _table(path)
        elif path.suffix == ".npz":
            with np.load(path, allow_pickle=False) as archive:
                _numbers({key: archive[key] for key in archive.files}, name, out)
        elif path.suffix == ".pt":
            import torch

            _numbers(torch.load(path, map_location="cpu", weights_only=True), name, out)
    return out


def differences(left: dict[str, object], right: dict[str, object]) -> list[str]:
    """The keys whose values differ, or that only one side has."""
    diff = sorted(set(left) ^ set(right))
    for key in sorted(set(left) & set(right)):
        a, b = left[key], right[key]
        if isinstance(a, pd.DataFrame):
            same = a.shape == b.shape and a.equals(b)
        elif isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
            same = np.array_equal(np.asarray(a), np.asarray(b), equal_nan=np.asarray(a).dtype.kind == "f")
        else:
            same = a == b or (a != a and b != b)
        if not same:
            diff.append(key)
    return diff
