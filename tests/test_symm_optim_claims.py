"""Paper 07's best-LR selection (validation loss, divergence excluded, paired deltas) and its claims: for each
claim and check a scenario where it holds, one where it fails and one where its evidence is missing or too thin,
decided with the definitions of config/claims/symm_optim.yaml."""

from __future__ import annotations

from functools import cache, partial
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from neurips26.common.claims import decide, load_definitions
from neurips26.symm_optim import theory
from neurips26.symm_optim.claims import measure_claims
from neurips26.symm_optim.directions import muon_direction, right_polar_direction
from neurips26.symm_optim.summary import best_learning_rates

ROOT = Path(__file__).resolve().parents[1]
DEFINITIONS = load_definitions(ROOT / "config/claims/symm_optim.yaml")
BASELINES = {"dense": "adamw", "moe": "adamw"}


def _runs(losses: dict[tuple[str, str], list[list[float]]], diverged=()) -> pd.DataFrame:
    """losses[(arch, method)][lr_index][seed] -> rows of runs.parquet."""
    rows = []
    for (arch, method), grid in losses.items():
        for i, seeds in enumerate(grid):
            for seed, loss in enumerate(seeds):
                bad = (arch, method, i, seed) in diverged
                rows.append(
                    {
                        "arch": arch,
                        "method": method,
                        "lr_index": i,
                        "multiplier": [0.5, 1, 2][i],
                        "seed": seed,
                        "final_val_loss": float("nan") if bad else loss,
                        "diverged": bad,
                        "spikes": 0,
                    }
                )
    return pd.DataFrame(rows)


RUNS = _runs(
    {
        ("dense", "adamw"): [[5.0, 5.1], [4.9, 4.95], [5.2, 5.3]],
        ("dense", "row_norm"): [[4.8, 4.85], [4.7, 4.9], [9.0, 9.0]],
        ("dense", "hybrid"): [[4.95, 5.0], [5.0, 5.0], [5.1, 5.1]],
        ("moe", "adamw"): [[5.0], [4.9], [5.0]],
        ("moe", "centered_row_norm"): [[4.95], [4.92], [4.91]],
    },
    diverged={("dense", "row_norm", 1, 1)},
)


def test_best_learning_rate_skips_grid_points_where_a_seed_diverged_and_pairs_seeds():
    best = best_learning_rates(RUNS, BASELINES).set_index(["arch", "method"])
    assert best.loc[("dense", "adamw"), "best_lr_index"] == 1 and not best.loc[("dense", "adamw"), "at_grid_edge"]
    row = best.loc[("dense", "row_norm")]
    assert row["best_lr_index"] == 0 and row["at_grid_edge"] and row["diverged_runs"] == 1
    assert row["val_loss_mean"] == pytest.approx(4.825)
    assert row["delta_mean"] == pytest.approx(((4.8 - 4.9) + (4.85 - 4.95)) / 2)
    assert row["delta_sd"] == pytest.approx(0.0, abs=1e-12)
    assert best.loc[("moe", "centered_row_norm"), "delta_mean"] == pytest.approx(0.01)
    assert best.loc[("moe", "centered_row_norm"), "best_lr_index"] == 2


# --- scenarios: a simulated sweep, the symmetry checks and the step times ---------------------------------------

DENSE = {"adamw": 0.0, "row_norm": -0.05, "right_polar": -0.02, "hybrid": -0.03}
ROUTERS = {"adamw": 0.0, "centered_row_norm": -0.04, "centered_left_polar": -0.01}
LR_PENALTY = (0.1, 0.0, 0.15)  # every method's best grid point is the middle one


def sweep(dense=None, routers=None, dense_seeds=4, moe_seeds=4, jitter=0.002, spikes=None) -> pd.DataFrame:
    """runs.parquet of both sweeps: loss = 4 + seed effect + method shift (nats vs the baseline) + LR penalty +
    Gaussian jitter of sd `jitter` per run; `spikes[method]` loss spikes per run (0 by default). Four seeds: S4
    and S5 choose the learning rates on seed 0 and score the other three (min_runs 3)."""
    rng = np.random.default_rng(7)
    seed_effect = rng.normal(0, 0.1, size=max(dense_seeds, moe_seeds))
    rows = []
    for arch, shifts, n_seeds in (("dense", dense or DENSE, dense_seeds), ("moe", routers or ROUTERS, moe_seeds)):
        for method, shift in shifts.items():
            for i, penalty in enumerate(LR_PENALTY):
                for seed in range(n_seeds):
                    loss = 4.0 + seed_effect[seed] + shift + penalty + rng.normal(0, jitter)
                    rows.append(
                        {
                            "arch": arch,
                            "method": method,
                            "lr_index": i,
                            "multiplier": [1 / 3, 1, 3][i],
                            "seed": seed,
                            "final_val_loss": loss,
                            "diverged": False,
                            "spikes": (spikes or {}).get(method, 0) if arch == "dense" else 0,
                        }
                    )
    return pd.DataFrame(rows)


def step_time(ratios: dict[tuple[str, str], float]) -> pd.DataFrame:
    """step_time.parquet: each (arch, method)'s median whole-step time as a ratio of its arch's AdamW."""
    rows = []
    for (arch, method), ratio in ratios.items():
        for part in ("step", "swept"):
            rows.append(
                {
                    "arch": arch,
                    "method": method,
                    "part": part,
                    "median_s": 1e-3 * ratio,
                    "ratio_to_baseline": ratio,
                    "repeats": 20,
                }
            )
    return pd.DataFrame(rows)


STEP_TIMES = {
    ("dense", "adamw"): 1.0,
    ("dense", "row_norm"): 1.1,
    ("dense", "hybrid"): 1.6,
    ("moe", "adamw"): 1.0,
    ("moe", "centered_row_norm"): 1.05,
}
EMPTY_EQUIVARIANCE = pd.DataFrame(
    {
        "optimizer": pd.Series(dtype=str),
        "group": pd.Series(dtype=str),
        "rel_err": pd.Series(dtype=float),
        "expected": pd.Series(dtype=bool),
    }
)
EMPTY_IDENTITIES = pd.DataFrame({"identity": pd.Series(dtype=str), "value": pd.Series(dtype=float)})


@cache
def correct_checks() -> tuple[pd.DataFrame, pd.DataFrame]:
    """The symmetry table and identities of the update rules as implemented."""
    return pd.DataFrame(theory.equivariance_table()), pd.DataFrame(theory.identities_table())


def inputs(runs=None, equivariance=None, identities=None, times=None) -> dict:
    runs = sweep() if runs is None else runs
    return {
        "equivariance": correct_checks()[0] if equivariance is None else equivariance,
        "identities": correct_checks()[1] if identities is None else identities,
        "runs": runs,
        "best": best_learning_rates(runs, BASELINES),
        "step_time": step_time(STEP_TIMES) if times is None else times,
    }


def decided(scenario: dict) -> pd.DataFrame:
    measured = measure_claims(**scenario, baseline="adamw", router_baseline="adamw")
    return decide(DEFINITIONS, measured).set_index("claim_id")


def real(_monkeypatch) -> dict:
    return inputs()


def with_directions(monkeypatch, replace=None, remove=()) -> dict:
    """The symmetry table computed with some update rules replaced (a broken implementation) or absent."""
    correct_checks()  # cached before the rules are patched: a first call under the patch cached the broken table
    for name, fn in (replace or {}).items():
        monkeypatch.setitem(theory.DIRECTIONS, name, fn)
    for name in remove:
        monkeypatch.delitem(theory.DIRECTIONS, name)
    return inputs(equivariance=pd.DataFrame(theory.equivariance_table()))


def column_norm(m):
    """A row norm that normalizes columns by mistake: not right-rotation equivariant."""
    return m / m.norm(dim=0, keepdim=True)


def nan_rule(m):
    """An update rule whose linear algebra failed: all NaN."""
    return m * float("nan")


def broken_polar(m):
    """Scaling by the largest entry instead of the polar factor: diag(polar(diag g)) is no longer sign(g)."""
    return m / m.abs().max()


def with_polar(monkeypatch, polar) -> dict:
    monkeypatch.setattr(theory, "polar", polar)
    return inputs(identities=pd.DataFrame(theory.identities_table()))


def with_runs(_monkeypatch, **kwargs) -> dict:
    return inputs(runs=sweep(**kwargs))


def with_times(_monkeypatch, ratios) -> dict:
    return inputs(times=step_time(ratios))


def given(_monkeypatch, **kwargs) -> dict:
    return inputs(**kwargs)


def dip_on_seed_0(runs: pd.DataFrame, depth: float = 0.2) -> pd.DataFrame:
    """The dense symmetric methods' lowest grid point `depth` nats better on seed 0 only (a lucky seed)."""
    runs = runs.copy()
    lucky = (runs["arch"] == "dense") & runs["method"].isin(["row_norm", "hybrid"]) & (runs["lr_index"] == 0)
    runs.loc[lucky & (runs["seed"] == 0), "final_val_loss"] -= depth
    return runs


VERDICT_CASES = [
    ("S1", "holds", real),
    ("S1", "fails", partial(with_directions, replace={"row_norm": column_norm})),
    ("S1", "inconclusive", partial(with_directions, replace={"hybrid": nan_rule})),
    ("S1", "inconclusive", partial(given, equivariance=EMPTY_EQUIVARIANCE)),
    ("S2a", "holds", real),
    ("S2a", "fails", partial(with_directions, replace={"adam": partial(muon_direction, exact=True)})),
    ("S2a", "inconclusive", partial(with_directions, remove=("adam", "sign"))),
    ("S2b", "holds", real),
    ("S2b", "fails", partial(with_directions, replace={"hybrid": right_polar_direction})),
    ("S2b", "inconclusive", partial(given, equivariance=EMPTY_EQUIVARIANCE)),
    ("S3", "holds", real),
    ("S3", "fails", partial(with_polar, polar=broken_polar)),
    ("S3", "inconclusive", partial(given, identities=EMPTY_IDENTITIES)),
    ("S4", "holds", real),
    # worse by less than the former 0.01-nat tolerance: a fail now
    ("S4", "fails", partial(with_runs, dense={**DENSE, "row_norm": 0.006, "hybrid": 0.008}, jitter=0.0003)),
    ("S4", "inconclusive", partial(with_runs, dense_seeds=3)),  # two seeds scored, one chose the learning rates
    # the learning rates chosen on seed 0 (where the lowest grid point happens to be best) are scored on seeds
    # 1-3, where that point is 0.1 nats worse: a fail (chosen and scored on all seeds it held, test below)
    ("S4", "fails", partial(given, runs=dip_on_seed_0(sweep()))),
    ("S4", "inconclusive", partial(with_runs, dense={**DENSE, "row_norm": -0.005, "hybrid": 0.0}, jitter=0.03)),
    ("S5", "holds", real),
    (
        "S5",
        "fails",
        partial(with_runs, routers={**ROUTERS, "centered_row_norm": 0.002, "centered_left_polar": 0.01}, jitter=0.0005),
    ),
    ("S5", "inconclusive", partial(with_runs, moe_seeds=1)),
    ("S5", "inconclusive", partial(with_runs, moe_seeds=3)),  # two seeds scored
    ("S6", "holds", partial(with_runs, spikes={"adamw": 2})),
    ("S6", "fails", partial(with_runs, spikes={"row_norm": 3, "right_polar": 1, "hybrid": 2})),
    ("S6", "inconclusive", real),  # no spike in either arm
    ("S6", "inconclusive", partial(with_runs, spikes={"adamw": 2}, dense_seeds=2)),
    ("S7", "holds", real),
    # the baseline's own ratio of 1 does not count: every other method faster is a fail
    (
        "S7",
        "fails",
        partial(
            with_times,
            ratios={
                ("dense", "adamw"): 1.0,
                ("dense", "row_norm"): 0.9,
                ("moe", "adamw"): 1.0,
                ("moe", "centered_row_norm"): 0.95,
            },
        ),
    ),
    ("S7", "inconclusive", partial(with_times, ratios={("dense", "adamw"): 1.0, ("moe", "adamw"): 1.0})),
]


@pytest.mark.parametrize(
    "claim_id, expected, scenario", VERDICT_CASES, ids=[f"{c[0]}-{c[1]}-{i}" for i, c in enumerate(VERDICT_CASES)]
)
def test_claim_verdict_in_scenario(claim_id, expected, scenario, monkeypatch):
    table = decided(scenario(monkeypatch))
    assert table.loc[claim_id, "verdict"] == expected, table.loc[claim_id, "note"]


def test_every_claim_is_decided_on_the_real_checks_and_a_winning_sweep():
    table = decided(inputs())
    assert (table["verdict"] == "holds").sum() == 7 and table.loc["S6", "verdict"] == "inconclusive"
    assert set(table.loc[["S1", "S2a", "S2b", "S3"], "kind"]) == {"check"} and table.loc["S4", "kind"] == "hard"
    s4 = table.loc["S4"]
    assert s4["runs"] == 3 and s4["value"] == pytest.approx(-0.05, abs=0.005) and "better: row_norm" in s4["note"]
    assert "97.5% t interval (Bonferroni for 2 candidates)" in s4["note"] and s4["high"] < 0
    assert table.loc["S7", "value"] == pytest.approx(1.6) and "dense/hybrid" in table.loc["S7", "note"]


def test_s4_chooses_the_learning_rates_on_a_seed_it_does_not_score():
    """Issue 41's review (#11): each method's learning rate was picked on the losses of the seeds it was scored on.
    It is now picked on seed 0 and scored on the others: a grid point that is best on seed 0 only is scored where
    it is worse (fails), while the pick over every seed's mean would have taken the middle point (holds)."""
    lucky = dip_on_seed_0(sweep())
    row = decided(inputs(runs=lucky)).loc["S4"]
    assert row["runs"] == 3 and row["value"] == pytest.approx(-0.05 + 0.1, abs=0.01), row["note"]
    assert "chosen on seed 0" in row["note"] and "scored on seeds 1, 2, 3" in row["note"]
    # the former design (best grid point by the mean over all seeds, scored on all of them) holds on these runs
    from neurips26.symm_optim.claims import _better_of

    former = _better_of(lucky, best_learning_rates(lucky, BASELINES), "dense", ["row_norm", "hybrid"], "adamw", "S4")
    assert former.runs == 4 and former.high < 0
    # the best-LR table (S6, the report) still reads every seed
    assert best_learning_rates(lucky, BASELINES).set_index(["arch", "method"]).loc[("dense", "row_norm"), "seeds"] == 4


def test_the_symmetric_method_is_paired_with_the_baseline_seed_by_seed():
    runs = sweep(dense={"adamw": 0.0, "row_norm": -0.01, "hybrid": 0.2}, jitter=0.0)
    runs.loc[(runs["method"] == "row_norm") & (runs["seed"] == 2), "final_val_loss"] += 0.3
    row = decided(inputs(runs=runs)).loc["S4"]
    # seeds 1-3 (seed 0 chose the learning rates); the seed effect cancels in each pair
    assert row["value"] == pytest.approx((-0.01 - 0.01 + 0.29) / 3)
