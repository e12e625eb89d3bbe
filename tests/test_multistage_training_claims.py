"""Paper 16's claims decided on small synthetic tables in the formats of experiment.phenomenon_table and
simulation_table: every claim and check has a case where it holds, one where it fails and one where it is
inconclusive (a missing or empty table, a non-finite cell, a grid too small to decide); the values equal numbers
computed by hand; and the claims of the smoke configuration's real tables are all decided without error."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from conftest import ROOT
from neurips26.common.claims import VERDICTS, decide, load_definitions
from neurips26.common.config import load_yaml
from neurips26.multistage_training.claims import THRESHOLD_KEYS, measure_claims, threshold_mismatches

DEFINITIONS = load_definitions(ROOT / "config/claims/multistage_training.yaml")
CONFIG = load_yaml(ROOT / "config/multistage_training.yaml")
RHO, LENGTH = 0.9, 4  # rho^L = 0.6561
COMP = {**CONFIG["quick"]["comparisons"], "demo_quality": RHO, "chain_length": LENGTH}

# (budget, base_compute) -> (SFT alone, RL alone, best SFT share, success at the best share)
CELLS = {
    (1e3, 1e2): (0.30, 0.10, 0.8, 0.32),
    (1e3, 1e3): (0.35, 0.20, 0.7, 0.38),
    (1e4, 1e2): (0.60, 0.30, 0.6, 0.62),
    (1e4, 1e3): (0.65, 0.45, 0.5, 0.75),  # the largest gain, 0.10
}


def complementarity(cells=CELLS, nan=None):
    rows = [{"budget": b, "base_compute": c, "sft_only": s, "rl_only": r, "sft_share": f, "mixed": m,
             "gain": m - max(s, r), "sft_limit": RHO**LENGTH} for (b, c), (s, r, f, m) in cells.items()]  # fmt: skip
    frame = pd.DataFrame(rows)
    if nan:
        frame.loc[len(frame) - 1, nan] = np.nan
    return frame


def fitted(computes, fitted_exponent, predicted, r2, fit_points=None, **columns):
    """The columns a fit repeats on every row (ceiling and pretraining tables)."""
    n = len(computes) if fit_points is None else fit_points
    return dict(fitted_exponent=fitted_exponent, r2=r2, fit_points=n, predicted_exponent=predicted, **columns)


def ceiling(success=(0.40, 0.55, 0.65, 0.74, 0.80), exponent=0.25, r2=0.99, fit_points=None):
    computes = [10.0, 30.0, 100.0, 300.0, 1000.0][: len(success)]
    success = np.asarray(success, dtype=float)
    pbar = success ** (1 / LENGTH)
    frame = pd.DataFrame({"base_compute": computes, "sft_share": 0.5, "success": success, "step_failure": 1 - pbar,
                          "task_failure": 1 - success, "in_window": True})  # fmt: skip
    return frame.assign(**fitted(computes, exponent, 2 / 9, r2, fit_points, budget=1e6))


def pretraining(exponent=0.35, fit_points=None):
    computes = [10.0, 30.0, 100.0, 300.0]
    frame = pd.DataFrame({"base_compute": computes, "loss": [0.4, 0.26, 0.15, 0.09]})
    return frame.assign(**fitted(computes, exponent, 1 / 3, 0.997, fit_points))


SHARE_RHO = {0.6: 0.3, 0.9: 0.7}
SHARE_COMPUTE = {1e2: 0.0, 1e3: -0.25}


def allocation(by_rho=SHARE_RHO, by_compute=SHARE_COMPUTE, noises=(0.0, 0.1), n_grid=10, nan=False):
    """The optimal SFT share = by_rho[rho] + by_compute[C] (the same at every reward noise)."""
    rows = [{"budget": 1e5, "base_compute": c, "demo_quality": q, "reward_noise": e, "chain_length": LENGTH,
             "pretrain_share": 0.0, "sft_share": by_rho[q] + by_compute[c], "rl_share": 1 - by_rho[q] - by_compute[c],
             "success": 0.5, "grid_success": 0.5, "n_grid": n_grid}
            for q in by_rho for e in noises for c in by_compute]  # fmt: skip
    frame = pd.DataFrame(rows)
    if nan:
        frame.loc[0, "sft_share"] = np.nan
    return frame


def amplification(n=16, reverse=False, weak_gains_more=False, flat=False, off_delta=0.0, off_nan=False, task_only=False,
                  task_nan=False):  # fmt: skip
    """Odd ranks are the task skills (q ∝ rank^-1.5 there), the strength falls with rank; RL's Delta u / q rises with
    the strength (falls with `reverse`) and the step-success gain rises with it (falls with `weak_gains_more`)."""
    rank = np.arange(1, n + 1)
    relevant = rank % 2 == 1 if not task_only else np.ones(n, dtype=bool)
    weight = np.where(relevant, rank**-1.5, 0.0)
    weight /= weight.sum()
    strength = np.full(n, 0.5) if flat else 1.0 - rank / (n + 1)
    per_use = (1 - strength) if reverse else strength
    delta = np.where(relevant, weight * per_use * 10, 0.0)
    gain = np.where(relevant, 0.3 * ((1 - strength) if weak_gains_more else strength), 0.0)
    frame = pd.DataFrame({"rank": rank, "frequency": rank**-1.5 / (rank**-1.5).sum(), "task_weight": weight,
                          "task_relevant": relevant, "strength": strength, "u_before": 3.0, "u_after": 3.0 + delta,
                          "delta_u": delta, "success_before": 0.5, "success_after": 0.5 + gain})  # fmt: skip
    frame.loc[~relevant, "delta_u"] = off_delta * (frame.loc[~relevant, "rank"] == 2)
    if off_nan:
        frame.loc[1, "delta_u"] = np.nan
    if task_nan:
        frame.loc[2, "delta_u"] = np.nan
    return frame.assign(base_compute=1e3, rl_updates=2000.0, sft_demos=0.0)


PLATEAU = {2: 50.0, 4: 200.0, 6: 900.0, 8: 4000.0}


def plateau(updates=PLATEAU):
    return pd.DataFrame({"chain_length": list(updates), "initial_step_success": 0.5,
                         "updates_to_level": list(updates.values()), "plateau_scale": 1.0,
                         "base_compute": 1e3})  # fmt: skip


OFFSETS = {"sft_rl": (0.01, 0.03, -0.01), "rl_only": (-0.02, 0.0, 0.02)}  # per seed: seed means 0.01 and 0


def simulation(offsets=OFFSETS, nan=False, drop=False):
    rows = []
    for config, by_seed in offsets.items():
        for seed, offset in enumerate(by_seed):
            for update in (0, 25, 50, 75):
                theory = 0.05 + 0.006 * update
                rows.append({"update": update, "stage": "sft" if update < 50 else "rl",
                             "success_sim": theory + offset * (update > 0), "compute": 64.0 * update,
                             "success_sim_se": 0.004 + 0.0001 * seed, "success_theory": theory, "runs": 16,
                             "config": config, "seed": seed})  # fmt: skip
    frame = pd.DataFrame(rows)
    if nan:
        frame.loc[5, "success_sim"] = np.nan
    if drop:
        frame = frame.drop(index=6).reset_index(drop=True)
    return frame


def tables(**replaced) -> dict[str, pd.DataFrame]:
    built = {"complementarity": complementarity(), "plateau": plateau(), "ceiling": ceiling(),
             "allocation": allocation(), "amplification": amplification(), "pretraining": pretraining(),
             "simulation": simulation()}  # fmt: skip
    built.update(replaced)
    return {name: table for name, table in built.items() if table is not None}


def decided(comp=COMP, **replaced) -> pd.DataFrame:
    return decide(DEFINITIONS, measure_claims(tables(**replaced), comp)).set_index("claim_id")


EMPTY = pd.DataFrame()
VERDICT_CASES = [
    ("C1", "holds", {}),
    ("C1", "fails", {"complementarity": complementarity({**CELLS, (1e4, 1e3): (0.65, 0.45, 0.5, 0.69)})}),
    ("C1", "inconclusive", {"complementarity": complementarity(nan="mixed")}),
    ("C1", "inconclusive", {"complementarity": None}),
    ("C1", "inconclusive", {"complementarity": EMPTY}),
    ("C2", "holds", {}),  # 0.25 against 2/9: 12.5%
    ("C2", "fails", {"ceiling": ceiling(exponent=0.35)}),
    ("C2", "inconclusive", {"ceiling": ceiling(success=(0.4, 0.5))}),  # two computes
    ("C2", "inconclusive", {"ceiling": ceiling(exponent=np.nan)}),
    ("C3", "holds", {}),
    ("C3", "fails", {"ceiling": ceiling(r2=0.9)}),
    ("C3", "fails", {"ceiling": ceiling(success=(0.40, 0.55, 0.54, 0.74, 0.80))}),  # falls once: value 0
    ("C3", "inconclusive", {"ceiling": ceiling(success=(0.40, 0.55, np.nan, 0.74, 0.80))}),
    ("C3", "inconclusive", {"ceiling": ceiling(fit_points=2)}),
    ("C4", "holds", {}),  # along rho 0.4, along the compute 0.25
    ("C4", "fails", {"allocation": allocation({0.6: 0.3, 0.9: 0.7}, {1e2: 0.0, 1e3: -0.05})}),  # compute: 0.05
    ("C4", "fails", {"allocation": allocation({0.6: 0.3, 0.9: 0.4}, {1e2: 0.0, 1e3: -0.05})}),  # span 0.15
    ("C4", "inconclusive", {"allocation": allocation(nan=True)}),
    ("C4", "inconclusive", {"allocation": allocation({0.9: 0.6}, {1e3: 0.0}, noises=(0.0,))}),  # one cell
    ("C5", "holds", {}),
    ("C5", "holds", {"allocation": allocation(by_compute={1e2: 0.0, 1e3: 0.05})}),  # a rise within one grid step
    ("C5", "fails", {"allocation": allocation(by_compute={1e2: 0.0, 1e3: 0.2})}),  # rises with the compute
    ("C5", "fails", {"allocation": allocation(by_rho={0.6: 0.6, 0.9: 0.3})}),  # falls with rho
    ("C5", "inconclusive", {"allocation": allocation(by_rho={0.9: 0.6})}),  # one rho: no direction
    ("C5", "inconclusive", {"allocation": allocation().drop(columns="n_grid")}),
    ("C6", "holds", {}),
    ("C6", "fails", {"amplification": amplification(reverse=True)}),  # Spearman -1
    ("C6", "fails", {"amplification": amplification(weak_gains_more=True)}),  # value set to -1
    ("C6", "inconclusive", {"amplification": amplification(flat=True)}),  # Spearman undefined
    ("C6", "inconclusive", {"amplification": amplification(task_nan=True)}),
    ("C7", "holds", {}),  # 4000 / 200 = 20
    ("C7", "inconclusive", {"plateau": plateau({2: 50.0, 6: 900.0})}),  # no L = 4 and 8: nothing to compare
    ("C7", "fails", {"plateau": plateau({**PLATEAU, 8: 600.0})}),  # 3
    ("C7", "inconclusive", {"plateau": plateau({4: 200.0})}),
    ("C7", "inconclusive", {"plateau": plateau({**PLATEAU, 8: np.inf})}),  # never reached
    ("C8", "holds", {}),  # 0.35 against 1/3: 5%
    ("C8", "fails", {"pretraining": pretraining(exponent=0.378)}),
    ("C8", "inconclusive", {"pretraining": pretraining(fit_points=2)}),
    ("C8", "inconclusive", {"pretraining": None}),
    ("C9", "holds", {"ceiling": ceiling(exponent=0.3)}),  # 0.3 against 1/3: 10% off
    ("C9", "fails", {"ceiling": ceiling(exponent=0.22)}),  # 0.22 against 1/3: 34% off
    ("C9", "inconclusive", {"ceiling": ceiling(fit_points=2)}),
    ("K1", "holds", {}),  # 0.65 - 0.6561
    ("K1", "fails", {"complementarity": complementarity({**CELLS, (1e4, 1e2): (0.68, 0.3, 0.6, 0.70)})}),
    ("K1", "inconclusive", {"complementarity": complementarity(nan="sft_only")}),
    ("K1", "inconclusive", {"comp": {k: v for k, v in COMP.items() if k != "demo_quality"}}),
    ("K2", "holds", {}),
    ("K2", "fails", {"simulation": simulation({**OFFSETS, "rl_only": (0.08, 0.07, 0.06)})}),
    ("K2", "inconclusive", {"simulation": simulation(nan=True)}),
    ("K2", "inconclusive", {"simulation": simulation(drop=True)}),  # a seed lacks a recorded update
    ("K2", "inconclusive", {"simulation": simulation().iloc[0:0]}),
    ("K3", "holds", {}),
    ("K3", "fails", {"amplification": amplification(off_delta=1e-3)}),
    ("K3", "inconclusive", {"amplification": amplification(task_only=True)}),  # no skill off the task
    ("K3", "inconclusive", {"amplification": amplification(off_nan=True)}),
]


@pytest.mark.parametrize(
    "claim_id, expected, scenario", VERDICT_CASES, ids=[f"{c[0]}-{c[1]}-{i}" for i, c in enumerate(VERDICT_CASES)]
)
def test_claim_verdict_in_scenario(claim_id, expected, scenario):
    table = decided(**scenario)
    assert table.loc[claim_id, "verdict"] == expected, table.loc[claim_id, "note"]


def test_the_values_are_the_numbers_computed_by_hand():
    table = decided()
    expected = {
        "C1": 0.75 - 0.65,
        "C2": abs(0.25 / (2 / 9) - 1),
        "C3": 0.99,
        "C4": 0.25,
        "C5": 0.0 - 1 / 10,  # monotone: no violation, minus one grid step
        "C6": 1.0,
        "C7": 4000 / 200,
        "C8": abs(0.35 / (1 / 3) - 1),
        "K1": 0.65 - 0.9**4,
        "K2": 0.01,  # sft_rl: seed offsets 0.01, 0.03, -0.01 average 0.01 at every update after the first
        "K3": 0.0,
    }
    for claim_id, value in expected.items():
        assert np.isclose(table.loc[claim_id, "value"], value, rtol=1e-9, atol=1e-12), claim_id
    assert table.loc["C7", "runs"] == 4 and table.loc["K2", "runs"] == 3 and table.loc["K3", "runs"] == 8
    assert "do not include both of (4, 8)" in decided(plateau=plateau({2: 50.0, 6: 900.0})).loc["C7", "note"]
    assert np.isclose(decided(ceiling=ceiling(success=(0.40, 0.55, 0.54, 0.74, 0.80))).loc["C3", "value"], 0.0)
    assert np.isclose(decided(allocation=allocation(by_rho={0.6: 0.6, 0.9: 0.3})).loc["C5", "value"], 0.3 - 0.1)
    assert decided(amplification=amplification(weak_gains_more=True)).loc["C6", "value"] == -1.0
    assert np.isclose(decided(amplification=amplification(off_delta=1e-3)).loc["K3", "value"], 1e-3)


def test_incomplete_evidence_is_named_in_the_note():
    notes = decided(complementarity=None, ceiling=ceiling(fit_points=2), simulation=simulation(drop=True))["note"]
    assert "no complementarity table" in notes["C1"] and "no complementarity table" in notes["K1"]
    assert "needs 3" in notes["C2"] and "lack some seed" in notes["K2"]
    assert "non-finite values" in decided(pretraining=pretraining(exponent=np.inf)).loc["C8", "note"]


def test_the_claims_file_thresholds_are_the_configs_comparisons():
    assert set(THRESHOLD_KEYS) <= {d.claim_id for d in DEFINITIONS}
    for scale in ("smoke", "quick", "paper"):
        assert threshold_mismatches(DEFINITIONS, CONFIG[scale]["comparisons"]) == [], scale
    assert threshold_mismatches(DEFINITIONS, {**COMP, "agreement": 0.1}) == [
        "K2: claims file threshold 0.05, comparisons.agreement 0.1"
    ]


def test_the_smoke_configurations_real_tables_are_decided():
    from neurips26.multistage_training.experiment import PHENOMENA, model_params, phenomenon_table, simulation_table

    cfg = CONFIG["smoke"]
    params = model_params(cfg["model"])
    real = {name: phenomenon_table(name, params, cfg[name]) for name in PHENOMENA}
    sim = cfg["simulation"]
    sampling = (sim["runs"], sim["batch"], sim["record_every"])
    real["simulation"] = pd.concat(
        [simulation_table(params, run, seed, *sampling).assign(config=name, seed=seed)
         for name, run in sim["configs"].items() for seed in sim["seeds"]], ignore_index=True,
    )  # fmt: skip
    comp = {**cfg["comparisons"], "demo_quality": cfg["model"]["demo_quality"],
            "chain_length": cfg["model"]["chain_length"]}  # fmt: skip
    table = decide(DEFINITIONS, measure_claims(real, comp)).set_index("claim_id")
    assert list(table.index) == [d.claim_id for d in DEFINITIONS]
    assert set(table["verdict"]) <= set(VERDICTS)
    # every table is complete: each value is a number, and the checks hold (they are the model's construction)
    assert table["value"].notna().all(), table.loc[table["value"].isna(), "note"].to_dict()
    assert (table.loc[table["kind"] == "check", "verdict"] == "holds").all(), table["note"].to_dict()
