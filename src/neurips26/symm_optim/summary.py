r"""Tables of the optimizer comparison: per-run outcomes, the best learning rate of each method on validation
loss, and the signed difference from the baseline with its seed spread.

Best-LR selection (notes 7.5 ``select_lr``): for each (arch, method) the grid point with the lowest mean final
validation loss over seeds among grid points where no seed diverged. A best point at either end of the grid
is flagged (``at_grid_edge``): the sweep may not have bracketed that method's optimum. The difference from the
baseline is paired by seed (same data order, same initialisation): ``delta = loss(method) - loss(baseline)``
per seed at each one's best grid point, its mean and sample standard deviation.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

__all__ = ["best_learning_rates", "run_row", "spike_counts"]


def run_row(run: dict, result, assignment: dict) -> dict:
    """One row of ``runs.parquet`` from a finished :class:`training.TrainResult`."""
    swept = ("embedding", "lm_head") if run["arch"] == "dense" else ("router",)
    return {
        "arch": run["arch"],
        "method": run["method"],
        "lr_index": run["lr_index"],
        "multiplier": run["multiplier"],
        "seed": run["seed"],
        **{f"lr_{k}": assignment[k]["lr"] for k in swept},
        "final_val_loss": result.final_val_loss,
        "diverged": result.diverged,
        "diverged_step": result.diverged_step if result.diverged else -1,
        "diverged_kind": result.diverged_kind or "",
        "diverged_detail": result.diverged_detail,
        "spikes": int(sum(r["spike"] for r in result.steps)),
        "steps_done": len(result.steps),
        "optimizer_seconds": result.optimizer_seconds,
        "train_seconds": result.train_seconds,
        "epochs": result.epochs,
    }


def best_learning_rates(runs: pd.DataFrame, baselines: dict[str, str]) -> pd.DataFrame:
    """Per (arch, method): the best grid point and its loss, seed spread, spikes and the paired delta to the
    arch's baseline (``baselines``: the dense sweep's baseline method and the MoE sweep's baseline router)."""
    rows = []
    n_grid = int(runs["lr_index"].max()) + 1
    for (arch, method), group in runs.groupby(["arch", "method"], sort=False):
        by_lr = group.groupby("lr_index").agg(mean=("final_val_loss", "mean"), diverged=("diverged", "any"))
        ok = by_lr[~by_lr["diverged"] & np.isfinite(by_lr["mean"])]
        if ok.empty:
            rows.append({"arch": arch, "method": method, "best_lr_index": -1, "all_diverged": True})
            continue
        best = int(ok["mean"].idxmin())
        at_best = group[group["lr_index"] == best].sort_values("seed")
        losses = at_best["final_val_loss"].to_numpy()
        rows.append(
            {
                "arch": arch,
                "method": method,
                "best_lr_index": best,
                "multiplier": float(at_best["multiplier"].iloc[0]),
                **{c: float(at_best[c].iloc[0]) for c in at_best.columns if c.startswith("lr_") and c != "lr_index"},
                "val_loss_mean": float(losses.mean()),
                "val_loss_sd": float(losses.std(ddof=1)) if len(losses) > 1 else 0.0,
                "seeds": len(losses),
                "spikes": int(at_best["spikes"].sum()),
                "at_grid_edge": n_grid > 1 and best in (0, n_grid - 1),
                "all_diverged": False,
                "diverged_runs": int(group["diverged"].sum()),
            }
        )
    best = pd.DataFrame(rows)
    best["delta_mean"], best["delta_sd"] = math.nan, math.nan
    for arch, group in best.groupby("arch"):
        baseline = baselines[arch]
        base = group[group["method"] == baseline]
        if base.empty or bool(base["all_diverged"].iloc[0]):
            continue
        base_losses = _losses_at(runs, arch, baseline, int(base["best_lr_index"].iloc[0]))
        for i, row in group.iterrows():
            if row["all_diverged"]:
                continue
            losses = _losses_at(runs, arch, row["method"], int(row["best_lr_index"]))
            delta = (losses - base_losses).dropna().to_numpy()
            best.loc[i, "delta_mean"] = float(delta.mean()) if delta.size else math.nan
            best.loc[i, "delta_sd"] = float(delta.std(ddof=1)) if delta.size > 1 else 0.0
    return best


def _losses_at(runs: pd.DataFrame, arch: str, method: str, lr_index: int) -> pd.Series:
    sel = runs[(runs["arch"] == arch) & (runs["method"] == method) & (runs["lr_index"] == lr_index)]
    return sel.set_index("seed")["final_val_loss"]


def spike_counts(best: pd.DataFrame, arch: str, methods: list[str]) -> int:
    sel = best[(best["arch"] == arch) & best["method"].isin(methods)]
    return int(sel["spikes"].sum())
