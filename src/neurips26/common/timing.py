"""Wall-time measurement that does not charge one-off warm-up costs to whichever method runs first."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TypeVar

T = TypeVar("T")


def timed(fn: Callable[[], T], repeats: int = 3, warmup: bool = True) -> tuple[T, float]:
    """Run `fn` once to warm up (lazy imports, allocator, kernel caches), then `repeats` times;
    return the last result and the median wall time of the timed runs, in seconds.

    Long runs (seconds) need neither: pass repeats=1, warmup=False.
    """
    if repeats < 1:
        raise ValueError(f"repeats must be >= 1, got {repeats}")
    if warmup:
        fn()
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        result = fn()
        times.append(time.perf_counter() - start)
    return result, sorted(times)[len(times) // 2]
