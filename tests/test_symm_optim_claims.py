"""Paper 07's best-LR selection (validation loss, divergence excluded, paired deltas) and claims that can fail."""

from __future__ import annotations

import pandas as pd
import pytest

from neurips26.symm_optim import theory
from neurips26.symm_optim.claims import check_claims
from neurips26.symm_optim.summary import best_learning_rates


def _runs(losses: dict[tuple[str, str], list[list[float]]], diverged=()) -> pd.DataFrame:
    """losses[(arch, method)][lr_index][seed] -> rows of runs.parquet."""
    rows = []
    for (arch, method), grid in losses.items():
        for i, seeds in enumerate(grid):
            for seed, loss in enumerate(seeds):
                bad = (arch, method, i, seed) in diverged
                rows.append({"arch": arch, "method": method, "lr_index": i, "multiplier": [0.5, 1, 2][i], "seed": seed,
                             "final_val_loss": float("nan") if bad else loss, "diverged": bad, "spikes": 0})
    return pd.DataFrame(rows)


RUNS = _runs({
    ("dense", "adamw"): [[5.0, 5.1], [4.9, 4.95], [5.2, 5.3]],
    ("dense", "row_norm"): [[4.8, 4.85], [4.7, 4.9], [9.0, 9.0]],
    ("dense", "hybrid"): [[4.95, 5.0], [5.0, 5.0], [5.1, 5.1]],
    ("moe", "adamw"): [[5.0], [4.9], [5.0]],
    ("moe", "centered_row_norm"): [[4.95], [4.92], [4.91]],
}, diverged={("dense", "row_norm", 1, 1)})


def test_best_learning_rate_skips_grid_points_where_a_seed_diverged_and_pairs_seeds():
    best = best_learning_rates(RUNS, {"dense": "adamw", "moe": "adamw"}).set_index(["arch", "method"])
    assert best.loc[("dense", "adamw"), "best_lr_index"] == 1 and not best.loc[("dense", "adamw"), "at_grid_edge"]
    row = best.loc[("dense", "row_norm")]
    assert row["best_lr_index"] == 0 and row["at_grid_edge"] and row["diverged_runs"] == 1
    assert row["val_loss_mean"] == pytest.approx(4.825)
    assert row["delta_mean"] == pytest.approx(((4.8 - 4.9) + (4.85 - 4.95)) / 2)
    assert row["delta_sd"] == pytest.approx(0.0, abs=1e-12)
    assert best.loc[("moe", "centered_row_norm"), "delta_mean"] == pytest.approx(0.01)
    assert best.loc[("moe", "centered_row_norm"), "best_lr_index"] == 2


def _claims(runs: pd.DataFrame, equivariance: pd.DataFrame | None = None):
    best = best_learning_rates(runs, {"dense": "adamw", "moe": "adamw"})
    identities = pd.DataFrame({"identity": ["diagonal_lifting", "polar_singular_values", "adam_sign_limit"],
                               "value": [0.0, 1e-16, 0.0]})
    steps = pd.DataFrame([{"arch": "dense", "method": m, "part": "step", "median_s": t, "ratio_to_baseline": t / 1e-3}
                          for m, t in (("adamw", 1e-3), ("row_norm", 1.5e-3))])
    eq = pd.DataFrame(theory.equivariance_table()) if equivariance is None else equivariance
    return {c.claim_id: c for c in check_claims(eq, identities, best, steps, "adamw", "adamw")}


def test_claims_hold_on_a_sweep_where_the_symmetric_method_wins():
    claims = _claims(RUNS)
    assert all(claims[k].holds for k in ("S1", "S2a", "S2b", "S3", "S4", "S5", "S6"))
    assert claims["S4"].value == pytest.approx(-0.1) and "row_norm" in claims["S4"].metric
    assert claims["S7"].value == pytest.approx(1.5)


def test_the_loss_claim_fails_when_every_symmetric_method_is_worse_by_more_than_the_tolerance():
    worse = RUNS.copy()
    sym = (worse["arch"] == "dense") & worse["method"].isin(["row_norm", "hybrid"])
    worse.loc[sym, "final_val_loss"] = worse.loc[sym, "final_val_loss"].clip(lower=4.97)
    claims = _claims(worse)
    assert not claims["S4"].holds and claims["S4"].value == pytest.approx(0.045)


def test_a_broken_update_rule_fails_the_equivariance_claim():
    eq = pd.DataFrame(theory.equivariance_table())
    eq.loc[(eq["optimizer"] == "row_norm") & (eq["group"] == "right_orth"), "rel_err"] = 1e-3
    assert not _claims(RUNS, eq)["S1"].holds
