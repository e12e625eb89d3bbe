"""Paper 05's claims as checks that can fail (notes 5.7, B1-B5), from the scaling fit, the imitation likelihoods,
the normalised regret on held-out black boxes and the validity of decoded trials."""

from __future__ import annotations

import numpy as np
import pandas as pd

from neurips26.bbo_pile.evaluation import paired_comparison
from neurips26.common.claims import Claim


def imitation_hits(imitation: pd.DataFrame) -> tuple[int, int, str]:
    """How many true optimizers' validation trajectories are likelier under their own token than, on average,
    under the other tokens; the number of optimizers; and the per-optimizer margins as text."""
    matrix = imitation.pivot_table(index="true_algo", columns="cond_algo", values="nll")
    margins = {}
    for algo in matrix.index:
        if algo not in matrix.columns or matrix.shape[1] < 2:
            continue
        others = matrix.loc[algo].drop(algo)
        margins[algo] = float(others.mean() - matrix.loc[algo, algo])
    text = ", ".join(f"{a} {m:+.3f}" for a, m in margins.items())
    return sum(m > 0 for m in margins.values()), len(margins), text


def check_claims(scaling: pd.DataFrame, imitation: pd.DataFrame, regret: pd.DataFrame, validity: pd.DataFrame,
                 condition: str = "CMA", baseline: str = "RS") -> list[Claim]:
    """`scaling`: one row (a, b, r2, spearman, runs, holdout_rel_error, ...); `imitation`: (true_algo, cond_algo,
    nll); `regret`: evaluation.normalized_regret rows with methods named `model:{cond}:{decoding}` and the real
    optimizers; `validity`: (method, decoding, trials, valid) per model run."""
    fit = scaling.iloc[0]
    hits, n_algos, margins = imitation_hits(imitation)
    model = f"model:{condition}:constrained"
    T = int(regret["T"].max())
    if model in set(regret["method"]) and baseline in set(regret["method"]):
        comparison = paired_comparison(regret, model, baseline, T)
    else:
        comparison = {"p_value": np.nan, "mean_method": np.nan, "mean_baseline": np.nan, "pairs": 0,
                      "share_lower": np.nan}
    by_decoding = validity.groupby("decoding")[["trials", "valid"]].sum()
    rate = (by_decoding["valid"] / by_decoding["trials"]).to_dict()
    return [
        Claim("B1a", "Loss falls with compute: the fitted scaling exponent is negative", "soft",
              "b in L = a * C^b (compute-optimal frontier)", float(fit["b"]), 0.0, "<",
              note=f"a {fit['a']:.3g}, R^2 {fit['r2']:.3f}, {int(fit['frontier'])} frontier points of "
                   f"{int(fit['runs'])} runs"),
        Claim("B1b", "... and across runs the final validation loss falls as compute grows", "soft",
              "Spearman(FLOPs, final validation loss) over the runs", float(fit["spearman"]), -0.8, "<=",
              note=f"{int(fit['runs'])} runs: a weak test"),
        Claim("B2", "The model imitates the optimizer it is conditioned on", "hard",
              "true optimizers whose held-out trajectories are likelier under their own token than under the "
              "others (mean)", float(hits), float(n_algos), ">=",
              note=f"NLL margin (others - own), nats per trial token: {margins}"),
        Claim("B3", f"As an optimizer (conditioned on {condition}) it beats random search on held-out boxes",
              "soft", f"one-sided Wilcoxon p, normalised regret at T={T}, model vs {baseline}, paired over box x seed",
              comparison["p_value"], 0.1, "<",
              note=f"mean regret {comparison['mean_method']:.3f} vs {comparison['mean_baseline']:.3f}; lower in "
                   f"{comparison['share_lower']:.0%} of {comparison['pairs']} pairs"),
        Claim("B4a", "Decoded trials are always valid with constrained decoding", "hard",
              "share of valid decoded trials, constrained", float(rate.get("constrained", np.nan)), 1.0, ">="),
        Claim("B4b", "... and mostly valid without constraints", "info",
              "share of valid decoded trials, unconstrained (invalid ones fall back to a random trial)",
              float(rate.get("free", np.nan)), 0.9, ">="),
        Claim("B5", "The scaling fit extrapolates to the largest-compute run", "soft",
              "relative error of the fit (without that run) on its final validation loss",
              float(fit["holdout_rel_error"]), 0.10, "<=", note=f"held out: {fit['holdout_run']}"),
    ]
