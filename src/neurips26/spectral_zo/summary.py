"""Paper 13's report tables: alignment per layer and step at the claims' K, the bias-variance table (raw beside
bias-corrected SZO), the dimension slopes, the spectral-decay gains, the learning rates picked on the validation
split, test accuracy at the matched budget (with the step where a run diverged), and MeZO's cost beside SPSA."""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import pandas as pd

from neurips26.spectral_zo.claims import dimension_slopes, final_accuracy


def _pm(values: pd.Series) -> str:
    values = values.dropna()
    if values.empty:
        return "n/a"
    return f"{values.mean():.3f} ± {values.std(ddof=1):.3f}" if len(values) > 1 else f"{values.mean():.3f}"


def alignment_table(alignment: pd.DataFrame, probes: int) -> pd.DataFrame:
    """Mean cosine per method (rows) and layer/step (columns) at `probes`, mean ± sd over seeds."""
    rows = alignment[alignment["probes"] == probes]
    per_seed = rows.groupby(["method", "step", "layer", "seed"])["cosine"].mean()
    table = per_seed.groupby(["method", "step", "layer"]).apply(_pm).unstack(["step", "layer"])
    table.columns = [f"step {s} {layer}" for s, layer in table.columns]
    return table.reset_index()


def probes_table(alignment: pd.DataFrame) -> pd.DataFrame:
    """Whole-network mean cosine per method (rows) and K (columns) at initialisation, mean over seeds."""
    rows = alignment[(alignment["layer"] == "overall") & (alignment["step"] == alignment["step"].min())]
    return rows.groupby(["method", "probes"])["cosine"].mean().unstack("probes").round(3).add_prefix("K=").reset_index()


def bias_variance_summary(frame: pd.DataFrame) -> pd.DataFrame:
    """Per method and layer: angle of the mean estimate (degrees) beside the exact expectation's, tr Cov / ||g||^2,
    the relative variance tr Cov / ||E g||^2, bias and its floor, mean per-draw cosine (mean over seeds)."""
    frame = frame.copy()
    if "expected_norm" not in frame:
        frame["expected_norm"], frame["angle_expected"] = np.nan, np.nan
    frame["relative_variance"] = frame["variance"] / frame["expected_norm"] ** 2
    columns = ["angle_mean", "angle_expected", "variance", "relative_variance", "bias", "bias_floor", "mean_cosine"]
    table = frame.groupby(["method", "layer"])[columns].mean()
    return table.reset_index().round({"angle_mean": 1, "angle_expected": 2, "bias": 3, "bias_floor": 3,
                                      "mean_cosine": 3})  # fmt: skip


def slope_table(dimension: pd.DataFrame) -> pd.DataFrame:
    slopes = dimension_slopes(dimension)
    return slopes.groupby("method")["slope"].apply(_pm).reset_index()


def spectral_table(spectral: pd.DataFrame, layer: str, null: str) -> pd.DataFrame:
    """cos(method) / cos(null) on `layer` per method (rows) and decay a (columns), mean over seeds."""
    rows = spectral[spectral["layer"] == layer]
    means = rows.groupby(["method", "seed", "alpha"])["cosine"].mean()
    gain = means / means.xs(null, level="method")
    return gain.groupby(["method", "alpha"]).mean().unstack("alpha").round(2).add_prefix("a=").reset_index()


def accuracy_table(curves: pd.DataFrame, tuning: pd.DataFrame) -> pd.DataFrame:
    """Per dataset and method: the chosen lr (marked `(edge)` at either end of the grid), its validation accuracy,
    the test accuracy (mean ± sd over seeds), and the seeds that diverged with their step."""
    out = []
    for (dataset, method), group in curves.groupby(["dataset", "method"], sort=False):
        chosen = tuning[(tuning["dataset"] == dataset) & (tuning["method"] == method) & tuning["chosen"]]
        last = group.sort_values("step").groupby("seed").tail(1)
        diverged = last[last["diverged_step"].notna()]
        edge = len(chosen) and "edge" in chosen and bool(chosen["edge"].iloc[0])
        lr = f"{float(chosen['lr'].iloc[0]):g}" + (" (edge)" if edge else "") if len(chosen) else "n/a"
        out.append({"dataset": dataset, "method": method, "lr": lr,
                    "val_accuracy": float(chosen["val_accuracy"].iloc[0]) if len(chosen) else np.nan,
                    "test_accuracy": _pm(final_accuracy(group, method)),
                    "passes_per_step": int(group["passes_per_step"].iloc[0]),
                    "diverged": ", ".join(f"seed {int(s)} at step {int(t)}" for s, t in
                                          zip(diverged["seed"], diverged["diverged_step"])) or "none"})  # fmt: skip
    return pd.DataFrame(out)


def tuning_table(tuning: pd.DataFrame) -> pd.DataFrame:
    """Validation accuracy per lr; a diverged run is blank, a collapsed one (chance level) is marked `c`, the chosen
    lr `*` (and `edge` in the last column where it is at either end of the grid)."""
    tuning = tuning.copy()
    collapsed = tuning["collapsed"] if "collapsed" in tuning else pd.Series(False, index=tuning.index)
    tuning["cell"] = [
        "" if not np.isfinite(v) else f"{v:.3f}" + (" c" if col else "") + (" *" if ch else "")
        for v, col, ch in zip(tuning["val_accuracy"], collapsed, tuning["chosen"])
    ]
    table = tuning.pivot(index=["dataset", "method"], columns="lr", values="cell")
    table = table[sorted(table.columns, reverse=True)].add_prefix("lr=").reset_index()
    edge = tuning[tuning["chosen"] & tuning.get("edge", pd.Series(False, index=tuning.index))]
    table["chosen at grid edge"] = [
        "yes" if ((edge["dataset"] == d) & (edge["method"] == m)).any() else "" for d, m in zip(table["dataset"],
                                                                                              table["method"])
    ]  # fmt: skip
    return table


def report_tables(inp, params) -> dict:
    comp: Mapping = params.comparisons
    read = {name: pd.read_parquet(inp[name]) for name in
            ("alignment", "bias_variance", "dimension", "spectral", "curves", "tuning", "cost")}  # fmt: skip
    cost = read["cost"].assign(extra_kib=lambda f: (f["extra_bytes"] / 1024).round(1),
                               ms=lambda f: (1000 * f["seconds"]).round(2))  # fmt: skip
    return {
        "alignment_table": alignment_table(read["alignment"], comp["probes"]),
        "probes_table": probes_table(read["alignment"]),
        "bias_variance_table": bias_variance_summary(read["bias_variance"]),
        "slope_table": slope_table(read["dimension"]),
        "spectral_table": spectral_table(read["spectral"], comp["spectral_layer"], comp["null"]),
        "accuracy_table": accuracy_table(read["curves"], read["tuning"]),
        "tuning_table": tuning_table(read["tuning"]),
        "cost_table": cost[["width", "params", "probes", "method", "extra_kib", "ms"]],
    }
