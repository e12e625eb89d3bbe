"""Normalised regret on held-out black boxes, the measure of the model as an optimizer (claim B3):

    regret_T = (min_{t <= T} y_t - f*) / (median over RS runs of y_1 - f*)

with f* the lowest value ever seen on the box: the minimum over every method's trials and a set of uniform random
samples (:func:`.blackboxes.random_reference`; no COCO internals needed, and a rotated GO instance's minimum is
unknown). Non-finite values never count as a minimum. A box whose denominator is not positive (RS's first trial
already at f*) is left out, and counted. The normalisation by random search's first value is this reproduction's
choice."""

from __future__ import annotations

import re

import numpy as np
import pandas as pd
from scipy.stats import wilcoxon

TRIAL_COLUMNS = ("bb_id", "method", "seed", "trial", "y")
SEED_METHOD = re.compile(r"^model:(?P<condition>[^:@]+):constrained@(?P<run>[^:]+):seed(?P<seed>\d+)$")


def seed_method(condition: str, run: str, model_seed: int) -> str:
    """The method name of one model seed of claim B3's run (constrained decoding), in the regret table."""
    return f"model:{condition}:constrained@{run}:seed{int(model_seed)}"


def evaluation_run(regret: pd.DataFrame) -> pd.DataFrame:
    """The rows of the real optimizers and of the evaluation run's model, without claim B3's further model seeds
    (methods named ``...@{run}:seed{k}``, :func:`seed_method`)."""
    return regret[~regret["method"].str.contains("@", regex=False)]


def reference_minimum(trials: pd.DataFrame, reference: pd.DataFrame) -> pd.Series:
    """f* per bb_id: the minimum of the finite values of all trials and of the random samples' minimum."""
    finite = trials[np.isfinite(trials["y"])]
    seen = finite.groupby("bb_id")["y"].min()
    random = reference.set_index("bb_id")["random_min"]
    return pd.concat([seen, random], axis=1).min(axis=1).rename("f_star")


def normalized_regret(trials: pd.DataFrame, reference: pd.DataFrame, baseline: str = "RS") -> pd.DataFrame:
    """One row per (bb_id, method, seed, T) for T = 1..budget: the best value so far, f*, the baseline's median
    first value and the normalised regret. `trials` has the columns TRIAL_COLUMNS (trial 0-based)."""
    missing = [c for c in TRIAL_COLUMNS if c not in trials.columns]
    if missing:
        raise ValueError(f"trials lack column(s) {missing}")
    if baseline not in set(trials["method"]):
        raise ValueError(f"no {baseline} trials: the regret is normalised by {baseline}'s first value")
    frame = trials.sort_values(["bb_id", "method", "seed", "trial"]).reset_index(drop=True)
    y = frame["y"].where(np.isfinite(frame["y"]), np.inf)
    frame["best"] = y.groupby([frame["bb_id"], frame["method"], frame["seed"]]).cummin()
    frame["T"] = frame["trial"] + 1
    f_star = reference_minimum(trials, reference)
    first = frame[(frame["method"] == baseline) & (frame["trial"] == 0)]
    scale = first.groupby("bb_id")["y"].median() - f_star.reindex(first["bb_id"].unique())
    frame = frame.merge(f_star, left_on="bb_id", right_index=True)
    frame = frame.merge(scale.rename("scale"), left_on="bb_id", right_index=True, how="left")
    frame["norm_regret"] = (frame["best"] - frame["f_star"]) / frame["scale"].where(frame["scale"] > 0)
    return frame[["bb_id", "method", "seed", "T", "best", "f_star", "scale", "norm_regret"]]


def excluded_boxes(regret: pd.DataFrame) -> list[str]:
    """Boxes left out because the baseline's first value is already at f* (or the scale is missing)."""
    return sorted(regret.loc[~(regret["scale"] > 0), "bb_id"].unique())


def paired_comparison(regret: pd.DataFrame, method: str, baseline: str, T: int) -> dict:
    """Regret of `method` against `baseline` at horizon T, paired over (box, seed): mean difference, share of
    pairs where `method` is lower, and the one-sided Wilcoxon signed-rank p-value (method lower)."""
    at = regret[(regret["T"] == T) & (regret["scale"] > 0)]
    pairs = at.pivot_table(index=["bb_id", "seed"], columns="method", values="norm_regret").dropna(
        subset=[method, baseline]
    )
    difference = pairs[method] - pairs[baseline]
    p = float(wilcoxon(difference, alternative="less").pvalue) if (difference != 0).any() else 1.0
    return {
        "pairs": len(pairs),
        "mean_difference": float(difference.mean()),
        "share_lower": float((difference < 0).mean()),
        "p_value": p,
        "mean_method": float(pairs[method].mean()),
        "mean_baseline": float(pairs[baseline].mean()),
    }
