"""The scaffold-decoration table: per method, the molecule it returns for each test scaffold and the
table's columns (score, success rate, validity, retention, uniqueness, novelty, oracle calls at inference and in
training); best-of-K curves and the break-even K of an amortized policy."""

from __future__ import annotations

import numpy as np
import pandas as pd

CANDIDATE_COLUMNS = ["method", "scaffold", "sample", "smiles", "valid", "retained", "n_new", "score", "success"]


def candidate_frame(method: str, scaffolds: list[str], outcomes: list, repeats: int) -> pd.DataFrame:
    """One row per generated candidate (`repeats` per scaffold, in scaffold order), before scoring; `n_new` is the
    number of atoms the decoration added (the size the C3 null matches)."""
    return pd.DataFrame(
        {
            "method": method,
            "scaffold": np.repeat(scaffolds, repeats),
            "sample": np.tile(np.arange(repeats), len(scaffolds)),
            "smiles": [o.smiles for o in outcomes],
            "valid": [o.valid for o in outcomes],
            "retained": [o.retained for o in outcomes],
            "n_new": [int(o.n_new) for o in outcomes],
        }
    )


def best_per_scaffold(candidates: pd.DataFrame) -> pd.DataFrame:
    """The candidate a method returns for each scaffold: its best-scoring one (invalid candidates score 0).
    A single-shot method has one candidate per scaffold, so this is simply its output."""
    ranked = candidates.assign(rank_score=candidates["score"].fillna(0.0).where(candidates["valid"], 0.0))
    order = ranked.sort_values(["scaffold", "rank_score", "sample"], ascending=[True, False, True])
    return order.groupby("scaffold", as_index=False).head(1).drop(columns="rank_score")


def method_row(candidates: pd.DataFrame, train_smiles: set[str], inference_calls: float, training_calls: float) -> dict:
    """The decoration table's row for one method. Uniqueness and validity are over all candidates it generated;
    score, success and novelty over the molecule it returns per scaffold."""
    best = best_per_scaffold(candidates)
    valid = candidates[candidates["valid"]]
    returned = best[best["valid"]]
    return {
        "method": candidates["method"].iloc[0],
        "scaffolds": int(best["scaffold"].nunique()),
        "score": float(best["score"].fillna(0.0).where(best["valid"], 0.0).mean()),
        "success_rate": float(best["success"].fillna(False).astype(bool).mean()),
        "validity": float(candidates["valid"].mean()),
        "retention": float(valid["retained"].mean()) if len(valid) else np.nan,
        "uniqueness": float(valid["smiles"].nunique() / len(valid)) if len(valid) else np.nan,
        "novelty": float((~returned["smiles"].isin(train_smiles)).mean()) if len(returned) else np.nan,
        "oracle_calls_inference": float(inference_calls),
        "oracle_calls_training": float(training_calls),
    }


def best_of_k_curve(candidates: pd.DataFrame, ks: list[int]) -> pd.DataFrame:
    """Mean over scaffolds of the best score among the first k samples (invalid = 0), for each k."""
    scores = candidates["score"].fillna(0.0).where(candidates["valid"], 0.0)
    grid = candidates.assign(s=scores).pivot_table(index="scaffold", columns="sample", values="s", aggfunc="first")
    if max(ks) > grid.shape[1]:
        raise ValueError(f"best-of-{max(ks)} asked but only {grid.shape[1]} samples per scaffold were drawn")
    values = grid.to_numpy()
    return pd.DataFrame({"k": ks, "score": [float(values[:, :k].max(axis=1).mean()) for k in ks]})


def break_even_k(curve: pd.DataFrame, amortized_score: float) -> float:
    """The smallest K whose best-of-K score reaches the amortized score; inf when none on the curve does."""
    reached = curve.loc[curve["score"] >= amortized_score, "k"]
    return float(reached.min()) if len(reached) else np.inf
