"""How much of a metric's spread over the pred x loss matrix each factor explains (two-way ANOVA sums of squares)."""

from __future__ import annotations

import numpy as np
import pandas as pd

from neurips26.pred_loss_space.names import SPACES


def cell_means(frame: pd.DataFrame, value: str) -> pd.DataFrame:
    """The pred x loss table of `value` averaged over seeds, rows and columns in SPACES order.

    The grid is the full 3x3 or the sub-matrix of the spaces present (smoke scale trains 2x2); every
    combination of a present pred and a present loss must have a value.
    """
    missing_columns = [c for c in ("pred", "loss", value) if c not in frame.columns]
    if missing_columns:
        raise ValueError(f"the table lacks the columns {missing_columns}")
    unknown = sorted(set(frame["pred"]) - set(SPACES)) + sorted(set(frame["loss"]) - set(SPACES))
    if unknown:
        raise ValueError(f"pred/loss values {unknown} are not among {SPACES}")
    values = pd.to_numeric(frame[value], errors="coerce")
    if not np.all(np.isfinite(values)):
        raise ValueError(f"column {value!r} has NaN, infinite or non-numeric entries")
    means = frame.assign(_v=values).groupby(["pred", "loss"])["_v"].mean()
    preds = [s for s in SPACES if s in set(frame["pred"])]
    losses = [s for s in SPACES if s in set(frame["loss"])]
    missing = [f"({p}, {loss})" for p in preds for loss in losses if (p, loss) not in means.index]
    if missing:
        raise ValueError(
            f"the {len(preds)}x{len(losses)} pred x loss grid of {value!r} is incomplete: "
            f"missing cells {', '.join(missing)}"
        )
    return means.unstack("loss").loc[preds, losses]


def variance_shares(frame: pd.DataFrame, value: str) -> dict[str, float]:
    """Shares of the total sum of squares of the cell means explained by pred, by loss, and the rest.

    Balanced two-way ANOVA without an interaction term on the cell means (seeds averaged first):
    SS_pred = n_loss sum_p (mean_p - grand)^2, SS_loss likewise, SS_residual = SS_total - SS_pred - SS_loss (the
    interaction). The shares sum to 1. Pass log values in `value` for log-MSE / log-FD.
    """
    table = cell_means(frame, value).to_numpy(dtype=np.float64)
    grand = table.mean()
    total = float(((table - grand) ** 2).sum())
    if total <= 0.0:
        raise ValueError(f"all cells of {value!r} are equal: variance shares are undefined")
    ss_pred = float(table.shape[1] * ((table.mean(axis=1) - grand) ** 2).sum())
    ss_loss = float(table.shape[0] * ((table.mean(axis=0) - grand) ** 2).sum())
    residual = max(total - ss_pred - ss_loss, 0.0)
    return {"pred": ss_pred / total, "loss": ss_loss / total, "residual": residual / total}
