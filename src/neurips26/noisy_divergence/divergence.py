r"""Divergence of a training run, decided from its logged losses, and divergence rates with their intervals.

The paper counts a run as diverged when its training loss rises and does not come back (Zhang et al. 2026,
arXiv 2602.02400, Fig. 1: "the left two runs illustrate cases where training diverges"); its threshold could not be
read here, so the detector is ours:

* ``non_finite``: the loss, a gradient or a weight stopped being finite (recorded by the training loop);
* ``no_recovery``: the exponential moving average (``ema_beta``) of the training loss stays more than ``delta``
  nats above its running minimum from some step (the onset) to the end of the run, and that stretch covers at least
  ``window_frac`` of the run. A spike that comes back below ``min + delta`` before the end is not a divergence.

Rates are ``k / n`` over runs with a Wilson interval (``neurips26.common.claims.wilson``); differences of rates
use Newcombe's interval (``rate_difference``).
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from neurips26.common.claims import wilson

__all__ = ["detect", "rates", "smoothed"]


def smoothed(losses, ema_beta: float) -> np.ndarray:
    """The exponential moving average of ``losses`` started at the first loss."""
    x = np.asarray(losses, dtype=float)
    ema = np.empty_like(x)
    for i, value in enumerate(x):
        ema[i] = value if i == 0 else ema_beta * ema[i - 1] + (1 - ema_beta) * value
    return ema


def detect(
    losses, delta: float, ema_beta: float, window_frac: float, non_finite_step: int | None = None
) -> tuple[bool, str, int]:
    """(diverged, kind, onset step) of a run whose training losses (steps 1, 2, ...) are ``losses``; kind is
    ``non_finite``, ``no_recovery`` or ``""``; the onset is -1 when the run did not diverge."""
    if delta <= 0 or not 0 <= ema_beta < 1 or not 0 < window_frac <= 1:
        raise ValueError(
            f"need delta > 0, 0 <= ema_beta < 1, 0 < window_frac <= 1; got {delta}, {ema_beta}, {window_frac}"
        )
    if non_finite_step is not None:
        return True, "non_finite", int(non_finite_step)
    x = np.asarray(losses, dtype=float)
    if len(x) == 0:
        return False, "", -1
    if not np.isfinite(x).all():
        return True, "non_finite", int(np.flatnonzero(~np.isfinite(x))[0]) + 1
    ema = smoothed(x, ema_beta)
    above = ema - np.minimum.accumulate(ema) > delta
    if not above[-1]:
        return False, "", -1
    below = np.flatnonzero(~above)
    onset = int(below[-1]) + 1 if len(below) else 0  # 0-based index of the first step of the last stretch
    if len(x) - onset < math.ceil(window_frac * len(x)):
        return False, "", -1
    return True, "no_recovery", onset + 1


def rates(runs: pd.DataFrame, by: list[str], level: float = 0.95) -> pd.DataFrame:
    """Per group of ``by``: runs ``n``, diverged ``k``, rate ``p`` and its Wilson interval (NaN without runs;
    ``note`` says when a cell has fewer than 2 runs)."""
    rows = []
    for key, group in runs.groupby(by, sort=False, dropna=False):
        key = key if isinstance(key, tuple) else (key,)
        n, k = len(group), int(group["diverged"].sum())
        low, high = wilson(k, n, level)
        rows.append(
            {
                **dict(zip(by, key)),
                "n": n,
                "k": k,
                "p": k / n if n else math.nan,
                "low": low,
                "high": high,
                "note": "" if n >= 2 else "fewer than 2 runs: no interval worth reading",
            }
        )
    return pd.DataFrame(rows)
