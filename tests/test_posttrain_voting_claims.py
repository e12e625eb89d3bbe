"""Paper 14's claims decided on small tables in the formats of experiment.axiom_table, adversarial_table,
threshold_table and equivalence_table: every claim and check has a case where it holds, one where it fails and one
where it is inconclusive (too few seeds, a null that passes too, missing rows); a real witness replays (K3)."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from conftest import ROOT
from neurips26.common.claims import decide, load_definitions
from neurips26.posttrain_voting.axioms import check_mixing_consistency
from neurips26.posttrain_voting.claims import largest_violating_beta, measure_claims
from neurips26.posttrain_voting.profiles import Profile
from neurips26.posttrain_voting.rules import RULES

DEFINITIONS = load_definitions(ROOT / "config/claims/posttrain_voting.yaml")
SEEDS = (0, 1, 2)
BETAS = (0.1, 1.0, 2.0)
AXIOMS = ("monotonicity", "participation", "participation_sd_strong", "participation_sd_weak", "mixing_consistency",
          "commutativity", "staged_vs_joint")  # fmt: skip
MAGNITUDES = {  # (rule, axiom) -> largest violation in every seed (0: holds)
    ("dpo", "mixing_consistency"): 0.01, ("dpo", "participation"): 0.001, ("dpo", "commutativity"): 1e-16,
    ("dpo", "participation_sd_strong"): 0.002,
    ("dpo", "staged_vs_joint"): 0.05, ("nlhf", "mixing_consistency"): 0.02, ("nlhf", "commutativity"): 0.1,
    ("nlhf", "staged_vs_joint"): 0.03, ("probabilistic_borda", "mixing_consistency"): 1e-3,
    ("probabilistic_borda", "participation"): 1e-4, ("probabilistic_borda", "staged_vs_joint"): 0.02,
}  # fmt: skip
A = Profile.from_strings(["A>B>C", "B>C>A", "C>A>B"], [3, 2, 1])
B = Profile.from_strings(["C>B>A", "A>C>B"], [2, 3])
REAL = check_mixing_consistency(RULES["dpo"], A, B, np.array([0.5, 0.3, 0.2]), 1.0)


def axioms(magnitudes=None, seeds=SEEDS, drop=(), witness=True):
    mags = {**MAGNITUDES, **(magnitudes or {})}
    rows = []
    for seed in seeds:
        for rule in ("dpo", "nlhf", "probabilistic_borda", "proportional_borda"):
            for axiom in AXIOMS:
                if (rule, axiom) in drop or rule in drop or (rule == "proportional_borda" and "staged" in axiom):
                    continue
                for profile, beta in [(p, b) for p in range(5) for b in (BETAS if rule != "proportional_borda"
                                                                         else [np.nan])]:  # fmt: skip
                    m = mags.get((rule, axiom), 0.0)
                    m = m(seed) if callable(m) else m
                    rows.append({"source": "synthetic", "seed": seed, "family": "coval_like", "profile": profile,
                                 "reference": "uniform", "rule": rule, "beta": beta, "axiom": axiom,
                                 "holds": m <= 1e-7, "magnitude": m, "margin": m if m > 0 else -1.0,
                                 "witness": ""})  # fmt: skip
    frame = pd.DataFrame(rows)
    if witness and len(frame):
        i = frame.index[(frame["rule"] == "dpo") & (frame["axiom"] == "mixing_consistency")][0]
        frame.loc[i, ["holds", "magnitude", "margin", "witness"]] = [False, REAL.magnitude, REAL.margin,
                                                                     json.dumps(REAL.witness)]  # fmt: skip
    return frame


def adversarial():
    return pd.DataFrame(columns=["seed", "rule", "axiom", "beta", "holds", "magnitude", "margin", "witness"]).astype(
        {"magnitude": float, "margin": float, "beta": float, "seed": int, "holds": bool, "witness": str}
    )


def threshold(
    nlhf_margins=(0.01, 0.001, -1e-3),
    violations=(5, 2, 0),
    refined=0.11,
    dpo_margin=0.0,
    seeds=SEEDS,
    control=1e-5,
    test=-1e-12,
):
    rows = []
    for seed in seeds:
        for beta, margin, count in zip((0.05, 0.12, 0.5), nlhf_margins, violations):
            rows.append({"kind": "search", "seed": seed, "rule": "nlhf", "beta": beta, "draws": 10,
                         "violations": count, "max_margin": margin, "threshold": np.nan, "witness": ""})  # fmt: skip
            rows.append({"kind": "search", "seed": seed, "rule": "dpo", "beta": beta, "draws": 10,
                         "violations": int(dpo_margin > 1e-7), "max_margin": dpo_margin, "threshold": np.nan,
                         "witness": ""})  # fmt: skip
        for kind, beta, margin in (("control", 0.95 * 0.125, control), ("test", 1.05 * 0.125, test)):
            if margin is not None:
                rows.append({"kind": kind, "seed": seed, "rule": "nlhf", "beta": beta, "draws": 1,
                             "violations": int(margin > 1e-7), "max_margin": margin, "threshold": np.nan,
                             "witness": ""})  # fmt: skip
        if refined is not None:
            rows.append({"kind": "refined", "seed": seed, "rule": "nlhf", "beta": np.nan, "draws": 1, "violations": 1,
                         "max_margin": np.nan, "threshold": refined, "witness": ""})  # fmt: skip
    for m, value in ((3, 0.125), (4, 0.124)):
        rows.append({"kind": "bound", "seed": -1, "rule": "nlhf", "beta": np.nan, "draws": 0, "violations": 0,
                     "max_margin": np.nan, "threshold": value, "witness": json.dumps({"m": m})})  # fmt: skip
    return pd.DataFrame(rows)


def tables(**changes):
    out = {"axioms": axioms(), "adversarial": adversarial(), "threshold": threshold(),
           "equivalence": pd.DataFrame({"seed": [0, 1], "gap": [1e-9, 2e-10]})}  # fmt: skip
    out.update(changes)
    return out


def verdicts(t):
    return decide(DEFINITIONS, measure_claims(t)).set_index("claim_id")


VERDICT_CASES = [
    ("A1", "holds", {}),
    ("A1", "fails", {"threshold": threshold(nlhf_margins=(0.01, -1e-3, -1e-3), violations=(5, 0, 0), refined=None)}),
    ("A1", "inconclusive", {"threshold": threshold(dpo_margin=0.01)}),  # the null passes too
    ("A2", "holds", {}),
    ("A2", "fails", {"threshold": threshold(test=1e-5)}),  # the directed test finds one at 1.05 x bound
    ("A2", "inconclusive", {"threshold": threshold(control=-1e-9)}),  # no power: nothing at 0.95 x bound
    ("B1", "holds", {}),
    ("B1", "fails", {"axioms": axioms({("dpo", "participation_sd_strong"): 0.0})}),
    ("B1", "inconclusive", {"axioms": axioms({("proportional_borda", "participation_sd_strong"): 0.01})}),
    ("B1", "inconclusive", {"axioms": axioms(seeds=(0, 1))}),  # fewer replications than min_runs
    ("B3", "holds", {"axioms": axioms({("dpo", "participation_sd_weak"): 0.001})}),
    ("B3", "fails", {}),
    ("B3", "inconclusive", {"axioms": axioms(drop=(("dpo", "participation_sd_weak"),))}),
    ("B2", "holds", {}),
    ("B2", "fails", {"axioms": axioms({("probabilistic_borda", "participation"): 0.0})}),
    ("B2", "inconclusive", {"axioms": axioms(drop=("probabilistic_borda",))}),
    ("C1", "holds", {}),
    ("C1", "fails", {"axioms": axioms({("nlhf", "commutativity"): 0.0})}),
    ("C1", "inconclusive", {"axioms": axioms(drop=(("nlhf", "commutativity"),))}),
    ("D1", "holds", {}),
    ("D1", "fails", {"axioms": axioms({("dpo", "mixing_consistency"): 0.0}, witness=False)}),
    (
        "D1",
        "inconclusive",
        {"axioms": axioms({("dpo", "mixing_consistency"): lambda s: 0.01 * (s > 0)}, witness=False, seeds=(0, 1))},
    ),  # 5 of 10 pooled checks: the Wilson interval contains 0.5
    ("D2", "holds", {"axioms": axioms({("nlhf", "monotonicity"): 0.01})}),
    ("D2", "fails", {}),
    ("D2", "inconclusive", {"axioms": axioms(drop=(("nlhf", "monotonicity"),))}),
    ("D3", "holds", {"axioms": axioms({("nlhf", "staged_vs_joint"): 0.1})}),
    ("D3", "fails", {}),
    ("D3", "inconclusive", {"axioms": axioms(drop=(("nlhf", "staged_vs_joint"), ("dpo", "staged_vs_joint")))}),
    ("K1", "holds", {}),
    ("K1", "fails", {"equivalence": pd.DataFrame({"seed": [0], "gap": [1e-3]})}),
    (
        "K1",
        "inconclusive",
        {"equivalence": pd.DataFrame({"seed": pd.Series([], dtype=int), "gap": pd.Series([], dtype=float)})},
    ),  # fmt: skip
    ("K2", "holds", {}),
    ("K2", "fails", {"axioms": axioms({("dpo", "commutativity"): 1e-3})}),
    ("K2", "inconclusive", {"axioms": axioms(drop=(("dpo", "commutativity"),))}),
    ("K3", "holds", {}),
    (
        "K3",
        "fails",
        {"axioms": axioms().assign(margin=lambda f: np.where(f["witness"] != "", f["margin"] + 0.1, f["margin"]))},
    ),  # fmt: skip
    ("K3", "inconclusive", {"axioms": axioms(witness=False)}),
    ("K4", "holds", {}),
    ("K4", "fails", {"axioms": axioms({("dpo", "mixing_consistency"): 0.0}, witness=False)}),
    ("K4", "inconclusive", {"axioms": axioms(drop=(("dpo", "mixing_consistency"),), witness=False)}),
    ("K5", "holds", {}),
    ("K5", "fails", {"threshold": threshold(dpo_margin=0.01)}),
    (
        "K5",
        "inconclusive",
        {"axioms": axioms(drop=(("dpo", "monotonicity"),)), "threshold": threshold().query("rule != 'dpo'")},
    ),  # fmt: skip
]


@pytest.mark.parametrize("claim, expected, changes", VERDICT_CASES)
def test_each_claim_holds_fails_or_is_inconclusive(claim, expected, changes):
    table = verdicts(tables(**changes))
    assert table.loc[claim, "verdict"] == expected, table.loc[claim, "note"]


def test_the_values_are_the_hand_computed_numbers():
    table = verdicts(tables())
    assert table.loc["A1", "value"] == pytest.approx(0.001) and table.loc["A1", "null_value"] == 0.0
    assert table.loc["A1", "runs"] == 3
    assert table.loc["A2", "value"] == pytest.approx(0.12 / 0.125)
    assert table.loc["C1", "value"] == pytest.approx(0.1)
    assert table.loc["B1", "value"] == pytest.approx(0.002)
    assert table.loc["D3", "value"] == pytest.approx(0.03 / 0.05)
    assert table.loc["B1", "runs"] == 3 and table.loc["B1", "null_value"] == 0.0
    assert table.loc["D1", "low"] < table.loc["D1", "value"] == 1.0


def test_largest_violating_beta_reads_searched_and_refined_thresholds():
    got = largest_violating_beta(threshold(refined=0.1))
    assert list(got) == [0.12, 0.12, 0.12]
    none = threshold(violations=(0, 0, 0), refined=None, control=None, test=None)
    assert np.isinf(largest_violating_beta(none)).all()
