"""Paper 06's claims (C1-C6) with three verdicts: for each claim a small world where it holds, one where it fails
and one where its evidence is too thin or missing, run through the library's measure function and `decide` with
the definitions of config/claims/fairness_audit.yaml.

The world is a set of data sets with four players whose SP and EO "true gaps" add up over a feature set; the
measures follow (or not) those gaps, the tuned predictors' informations sit below (or above) the baselines, the
Shapley rankings put the most (or least) biased player first. The pipeline's own table functions (dpi_table,
pairs_table, selection_from_true_bias, random_removal_table, judge_axioms, redundancy_check) build the inputs.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from functools import cache
from itertools import combinations
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from neurips26.common.claims import decide, load_definitions
from neurips26.common.config import load_yaml
from neurips26.fairness_audit import measure_validation as validation
from neurips26.fairness_audit.axioms import INSTANCES, judge_axioms
from neurips26.fairness_audit.claims import (
    C1_MIN_MEASURABLE,
    CONDITIONAL_AXIOMS,
    _c4,
    cluster_bootstrap,
    measure_claims,
)
from neurips26.fairness_audit.estimators import Estimate
from neurips26.fairness_audit.experiment import scenario_of
from neurips26.fairness_audit.true_bias import coalition_key

ROOT = Path(__file__).resolve().parents[1]
DEFINITIONS = load_definitions(ROOT / "config/claims/fairness_audit.yaml")
PLAYERS = ("X1", "X2", "X3", "X4")
DATASETS = tuple(f"{s}_s{k}" for s in ("predictive_proxy", "nonpredictive_proxy") for k in (0, 1, 2))
THIN = ("predictive_proxy_s0", "nonpredictive_proxy_s0")  # two data sets: fewer than min_runs 3
SELECTION = {"SP": "bayes_SP", "EO": "bayes_EO"}
AXIOM_MEASURES = ("B_SP", "bayes_SP", "prod_SP", "red_SP", "B_EO", "bayes_EO", "uniA_EO")


@dataclass(frozen=True)
class World:
    """Knobs of the small world; the default is the paper's world, where every claim holds."""

    datasets: tuple[str, ...] = DATASETS
    aligned: bool = True  # the SP measures follow the SP gap and the EO measures the EO gap (else swapped)
    bayes_informative: bool = True  # bayes_SP follows the SP gap (else it is noise and B_SP follows the gap)
    bound_ok: bool = True  # the predictors' informations lie below the baselines (else the CE fit misses them)
    attribution_ok: bool = True  # the Shapley rankings put the most biased player first (else the least)
    axiom_measures: tuple[str, ...] = AXIOM_MEASURES
    axiom_leak: tuple[tuple[str, str, float], ...] = ()  # (instance, measure, value) overriding the ideal value
    redundancy: str = "additive"  # "additive": A follows the copied feature alone; "xor": A = X1 xor X2
    redundancy_datasets: int = 3
    redundancy_broken: bool = False  # a Shapley implementation that gives the copy less credit than the original
    redundancy_missing: bool = False  # a measure's Shapley values are missing (NaN)


def _subsets():
    return [c for k in range(len(PLAYERS) + 1) for c in combinations(range(len(PLAYERS)), k)]


def _tables(world: World) -> tuple[pd.DataFrame, pd.DataFrame, dict]:
    """Coalitions and true-bias tables of the world's data sets, and the Shapley rankings of the aligned measures."""
    coalitions, true_bias, rankings = [], [], {}
    for index, dataset in enumerate(world.datasets):
        rng = np.random.default_rng(index)
        b, e, z = (rng.uniform(0.0, 0.1, len(PLAYERS)) for _ in range(3))  # SP bias, EO bias, proxy strength
        proxies = rng.permutation(len(PLAYERS))[:2]  # two non-predictive proxies: strong on A, no SP gap
        b[proxies], z[np.setdiff1d(np.arange(len(PLAYERS)), proxies)] = 0.002, 0.002
        own_sp, own_eo = (b, e) if world.aligned else (e, b)
        bayes = own_sp if world.bayes_informative else z
        base_sp = 0.3 * b + z if world.bayes_informative else b
        for subset in _subsets():
            s = list(subset)
            sp, eo = b[s].sum(), e[s].sum()
            noise = rng.normal(0.0, 0.003, 4)
            values = {
                "B_SP": base_sp[s].sum() + 0.05 * bool(s),
                "B_EO": 0.3 * e[s].sum() + z[s].sum() + 0.05 * bool(s),
                "bayes_SP": bayes[s].sum() + noise[0],
                "prod_SP": own_sp[s].sum() + noise[1],
                "bayes_EO": own_eo[s].sum() + noise[2],
                "uniA_EO": own_eo[s].sum() + noise[3],
            }
            names = "+".join(PLAYERS[i] for i in s)
            coalitions += [
                dict(dataset=dataset, estimator="ce", measure=m, players=names, value=max(v, 0.0))
                for m, v in values.items()
            ]
            scale = 0.5 if world.bound_ok else 1.5
            true_bias.append(
                dict(
                    dataset=dataset,
                    coalition=coalition_key([PLAYERS[i] for i in s]),
                    size=len(s),
                    seed=0,
                    accuracy=0.7 + 0.02 * len(s),
                    sp_gap=sp + abs(rng.normal(0, 0.002)),
                    eo_gap=eo + abs(rng.normal(0, 0.002)),
                    i_yhat_a=scale * values["B_SP"] + 0.01 * (not world.bound_ok),
                    i_yhat_a_given_y=scale * values["B_EO"] + 0.01 * (not world.bound_ok),
                    i_yhat_a_se=0.001,
                    i_yhat_a_given_y_se=0.001,
                )
            )
        order = 1 if world.attribution_ok else -1
        rankings[dataset] = {
            f"shapley_{SELECTION['SP']}": [PLAYERS[i] for i in np.argsort(-order * b)],
            f"shapley_{SELECTION['EO']}": [PLAYERS[i] for i in np.argsort(-order * e)],
        }
    return pd.DataFrame(coalitions), pd.DataFrame(true_bias), rankings


IDEAL = {  # population values (nats) of the axiom instances: each premise makes some measures 0 by definition
    "indep_a": dict(B_SP=0.0, bayes_SP=0.0, prod_SP=0.0, red_SP=0.0),
    "indep_a_collider": dict(B_SP=0.0, bayes_SP=0.0, prod_SP=0.0, red_SP=0.04),  # I_min's artefact
    "indep_y": dict(B_SP=0.1, bayes_SP=0.0, prod_SP=0.0, red_SP=0.0, B_EO=0.1, bayes_EO=0.0, uniA_EO=0.0),
    "indep_y_cancel": dict(B_SP=0.05, bayes_SP=0.0, prod_SP=0.0, red_SP=0.0, B_EO=0.05, bayes_EO=0.0, uniA_EO=0.0),
    "eo_leak": dict(B_SP=0.08, bayes_SP=0.06, prod_SP=0.03, red_SP=0.05, B_EO=0.0, bayes_EO=0.0, uniA_EO=0.0),
    "eo_leak_spread": dict(B_SP=0.07, bayes_SP=0.05, prod_SP=0.02, red_SP=0.04, B_EO=0.0, bayes_EO=0.0, uniA_EO=0.0),
    "witness": dict(B_SP=0.13, bayes_SP=0.13, prod_SP=0.1, red_SP=0.12, B_EO=0.0, bayes_EO=0.0, uniA_EO=0.0),
}


def _axioms(world: World) -> pd.DataFrame:
    values = {inst: {m: IDEAL[inst].get(m, 0.0) for m in world.axiom_measures} for inst in INSTANCES}
    for inst, measure, value in world.axiom_leak:
        values[inst][measure] = value
    estimates = {inst: {m: Estimate(v, v) for m, v in by.items()} for inst, by in values.items()}
    return judge_axioms(estimates, list(world.axiom_measures)).assign(estimator="plugin", n=4000, seed=0)


@cache
def _redundancy_rows(kind: str, index: int) -> pd.DataFrame:
    """redundancy_check on three binary features (plug-in estimator), sampled: A follows X1 alone ("additive":
    a copy of X1 splits its credit) or A = X1 xor X2 ("xor": the copies get 1/6 each of what X1 alone had 1/2)."""
    rng = np.random.default_rng(100 + index)
    n = 1500
    x = rng.integers(0, 2, size=(n, 3))
    a = x[:, 0] ^ x[:, 1] if kind == "xor" else np.where(rng.random(n) < 0.9, x[:, 0], 1 - x[:, 0])
    y = (x[:, 0] + x[:, 2] + rng.normal(size=n) > 1).astype(int)
    table = validation.redundancy_check(
        [x[:, [i]].astype(float) for i in range(3)], a, y, 0, ["B_SP", "B_EO"], "plugin"
    )
    return table.assign(dataset=f"predictive_proxy_s{index}")


def _redundancy(world: World) -> pd.DataFrame:
    table = pd.concat(
        [_redundancy_rows(world.redundancy, i) for i in range(world.redundancy_datasets)], ignore_index=True
    )
    if world.redundancy_broken:
        table["phi_copy"] = 0.5 * table["phi_copy"]
    if world.redundancy_missing:
        table.loc[table["measure"] == "B_EO", ["phi_orig", "phi_i", "phi_copy", "rel_err", "asym"]] = np.nan
    return table


def inputs(world: World) -> dict:
    coalitions, true_bias, rankings = _tables(world)
    return dict(
        dpi=validation.dpi_table(coalitions, true_bias, "ce"),
        axioms=_axioms(world),
        redundancy=_redundancy(world),
        pairs=validation.pairs_table(coalitions, true_bias),
        selection=validation.selection_from_true_bias(true_bias, rankings, 1),
        random_removal=validation.random_removal_table(true_bias, k_max=1),
        scenario_of={d: scenario_of(d) for d in world.datasets},
        selection_measures=SELECTION,
    )


def verdicts(world: World) -> pd.DataFrame:
    return decide(DEFINITIONS, measure_claims(**inputs(world), n_boot=300)).set_index("claim_id")


BASE = World()
LEAK = {
    "C2a": (("indep_y", "bayes_SP", 0.04),),  # the Bayes score leaks a proxy's A-information under X ⟂ Y
    "C2b": (("eo_leak", "uniA_EO", 0.03),),  # the EO PID measure is not 0 under X ⟂ A | Y on one instance
    "C2c": (("witness", "bayes_EO", 0.05),),  # an EO measure is positive on the witness X = Y
    "C2d": (("eo_leak", "prod_SP", 0.0), ("eo_leak_spread", "prod_SP", 0.0)),
}  # an SP measure vanishes
THIN_WORLD = replace(BASE, datasets=THIN, redundancy_datasets=2)
# C1 is decided by a cluster bootstrap over scenarios (issue 41, review item 21): its world has three of them
C1_DATASETS = tuple(f"{s}_s{k}" for s in ("predictive_proxy", "nonpredictive_proxy", "eo_leakage") for k in (0, 1))
C1_WORLD = replace(BASE, datasets=C1_DATASETS)

VERDICT_CASES = [
    # C1: the predictors' informations below the CE baselines; above them (a CE fit that misses dependence)
    ("C1a", "holds", C1_WORLD),
    ("C1a", "fails", replace(C1_WORLD, bound_ok=False)),
    ("C1a", "inconclusive", THIN_WORLD),
    ("C1b", "holds", C1_WORLD),
    ("C1b", "fails", replace(C1_WORLD, bound_ok=False)),
    ("C1b", "inconclusive", THIN_WORLD),
    # C2: the ideal axiom values; one estimator leaking on one instance; no measure of the kind checked
    ("C2a", "holds", BASE),
    ("C2a", "fails", replace(BASE, axiom_leak=LEAK["C2a"])),
    ("C2a", "inconclusive", replace(BASE, axiom_measures=("B_SP", "B_EO", "bayes_EO"))),
    ("C2b", "holds", BASE),
    ("C2b", "fails", replace(BASE, axiom_leak=LEAK["C2b"])),
    ("C2b", "inconclusive", replace(BASE, axiom_measures=("B_SP", "bayes_SP", "prod_SP"))),
    ("C2c", "holds", BASE),
    ("C2c", "fails", replace(BASE, axiom_leak=LEAK["C2c"])),
    ("C2c", "inconclusive", replace(BASE, axiom_measures=("B_SP", "bayes_SP"))),
    ("C2d", "holds", BASE),
    ("C2d", "fails", replace(BASE, axiom_leak=LEAK["C2d"])),
    ("C2d", "inconclusive", replace(BASE, axiom_measures=("B_EO", "bayes_EO"))),
    # C3: a copy of the feature A follows; a broken Shapley; missing values / the xor game; too few data sets
    ("C3a", "holds", BASE),
    ("C3a", "fails", replace(BASE, redundancy_broken=True)),
    ("C3a", "inconclusive", replace(BASE, redundancy_missing=True)),
    ("C3b", "holds", BASE),
    ("C3b", "fails", replace(BASE, redundancy="xor")),
    ("C3b", "inconclusive", replace(BASE, redundancy_datasets=2)),
    ("C3c", "holds", BASE),
    ("C3c", "fails", replace(BASE, redundancy="xor")),
    ("C3c", "inconclusive", replace(BASE, redundancy_missing=True)),
    # C4: measures aligned with their notion; swapped; two data sets
    ("C4a", "holds", BASE),
    ("C4a", "fails", replace(BASE, aligned=False)),
    ("C4a", "inconclusive", THIN_WORLD),
    ("C4b", "holds", BASE),
    ("C4b", "fails", replace(BASE, aligned=False)),
    ("C4b", "inconclusive", THIN_WORLD),
    # C5: bayes_SP follows the SP gap; it is noise while B_SP follows the gap; one non-predictive data set
    ("C5", "holds", BASE),
    ("C5", "fails", replace(BASE, bayes_informative=False)),
    ("C5", "inconclusive", THIN_WORLD),
    # C6: the ranking removes the most biased player first; the least biased; two data sets
    ("C6a", "holds", BASE),
    ("C6a", "fails", replace(BASE, attribution_ok=False)),
    ("C6a", "inconclusive", THIN_WORLD),
    ("C6b", "holds", BASE),
    ("C6b", "fails", replace(BASE, attribution_ok=False)),
    ("C6b", "inconclusive", THIN_WORLD),
]


@cache
def _verdicts_cached(world: World) -> pd.DataFrame:
    return verdicts(world)


@pytest.mark.parametrize("claim_id, expected, world", VERDICT_CASES)
def test_each_claim_holds_fails_or_is_inconclusive(claim_id, expected, world):
    row = _verdicts_cached(world).loc[claim_id]
    assert row["verdict"] == expected, (claim_id, row["value"], row["low"], row["high"], row["runs"], row["note"])
    if expected == "inconclusive":
        assert row["note"]  # the reason is said


def test_the_definitions_count_checks_apart_and_say_why_no_claim_is_hard():
    # issue 41 (review item 2): the data-processing bound is a theorem; measured, it tests our estimators: checks
    kinds = {d.claim_id: d.kind for d in DEFINITIONS}
    assert [c for c, k in kinds.items() if k == "hard"] == []
    assert [c for c, k in kinds.items() if k == "check"] == ["C1a", "C1b", "C2a", "C2b", "C2c", "C3a"]
    assert kinds["C2d"] == "info"
    assert all(d.min_runs >= 3 for d in DEFINITIONS if d.kind in ("hard", "soft"))
    assert all(d.min_runs >= 3 and d.threshold == 0.95 for d in DEFINITIONS if d.claim_id in ("C1a", "C1b"))
    reason = " ".join(load_yaml(ROOT / "config/claims/fairness_audit.yaml")["no_hard_claim"].split())
    assert "data-processing inequality" in reason and "estimator" in reason


def test_measured_values_and_notes_in_the_paper_world():
    table = _verdicts_cached(BASE)
    # C1's runs are the scenarios (clusters), not the data sets
    assert table.loc["C1a", "value"] == pytest.approx(1.0) and table.loc["C1a", "runs"] == 2
    assert "cluster bootstrap over scenarios" in table.loc["C1a", "note"]
    assert table.loc["C2a", "runs"] == 1 + 2 * 3 - 1  # B_SP P2; P1, P2 of 3 measures, less red_SP P1
    assert "red_SP P1: holds_under_condition" in table.loc["C2a", "note"]
    assert table.loc["C3b", "runs"] == 3 and table.loc["C3a", "runs"] == 6
    assert table.loc["C4a", "runs"] == len(DATASETS) and "cluster bootstrap" in table.loc["C4a", "note"]
    assert table.loc["C4a", "low"] > 0 and "SP: prod_SP" in table.loc["C4a", "note"]  # the best SP measure
    assert table.loc["C5", "runs"] == 3  # the non-predictive-proxy data sets only
    assert table.loc["C6a", "value"] < 0 and table.loc["C6a", "runs"] == len(DATASETS)
    assert ("red_SP", "P1") in CONDITIONAL_AXIOMS


def test_failures_are_named_in_the_notes():
    table = _verdicts_cached(replace(BASE, axiom_leak=LEAK["C2b"]))
    assert "uniA_EO Q1: holds_under_condition (expected pass)" in table.loc["C2b", "note"]
    broken = _verdicts_cached(replace(C1_WORLD, bound_ok=False))
    assert "predictive_proxy" in broken.loc["C1a", "note"] and "largest excess" in broken.loc["C1a", "note"]


def test_c2b_without_eo_measures_is_not_a_pass():
    row = _verdicts_cached(replace(BASE, axiom_measures=("B_SP", "bayes_SP", "prod_SP"))).loc["C2b"]
    assert np.isnan(row["value"]) and row["runs"] == 0 and "no EO measure" in row["note"]


def test_c6_reads_one_expected_random_removal_row_per_dataset():
    data = inputs(BASE)
    full = measure_claims(**data)
    data["random_removal"] = data["random_removal"].query("k == 1").drop(columns="k")
    assert {m.claim_id: m.value for m in measure_claims(**data)}["C6a"] == pytest.approx(
        {m.claim_id: m.value for m in full}["C6a"]
    )


def test_c6_leaves_out_data_sets_without_a_random_expectation_and_says_so():
    data = inputs(BASE)
    data["random_removal"] = data["random_removal"][data["random_removal"]["dataset"] != DATASETS[0]]
    c6a = {m.claim_id: m for m in measure_claims(**data)}["C6a"]
    assert c6a.runs == len(DATASETS) - 1 and DATASETS[0] in c6a.note


def test_cluster_bootstrap_resamples_whole_groups():
    groups = [np.arange(0, 3), np.arange(3, 6), np.arange(6, 9)]
    values = np.array([1.0, 1, 1, 2, 2, 2, 3, 3, 3])
    spread = cluster_bootstrap(groups, lambda i: float(values[i].mean()), n_boot=200)
    assert spread.mean == pytest.approx(2.0) and spread.runs == 3 and 1.0 <= spread.low < 2.0 < spread.high <= 3.0
    one = cluster_bootstrap(groups[:1], lambda i: float(values[i].mean()))
    assert one.runs == 1 and np.isnan(one.low)


def _c1_rows(dpi: pd.DataFrame, datasets, **columns) -> pd.DataFrame:
    dpi = dpi.copy()
    rows = dpi["dataset"].isin(datasets)
    for column, value in columns.items():
        dpi.loc[rows, column] = value
    return dpi


def test_c1_reads_a_negative_bound_estimate_as_zero():
    # issue 41: a CE estimate of I(X_S; A) below -0.01 nats (its downward bias on feature sets without A-information)
    # is not a bound below 0: a measurably biased predictor on such a feature set is counted against a bound of 0
    given = inputs(C1_WORLD)
    given["dpi"] = _c1_rows(given["dpi"], C1_DATASETS[:1], B_SP=-0.02, B_EO=-0.02)
    table = decide(DEFINITIONS, measure_claims(**given, n_boot=300)).set_index("claim_id")
    for claim_id in ("C1a", "C1b"):
        assert "negative estimate(s) of B read as 0" in table.loc[claim_id, "note"]


def _dpi_rows(scenarios: int, per_scenario: int, biased: int, inside: int) -> tuple[pd.DataFrame, dict]:
    """A dpi table of ``scenarios`` scenarios x 3 data sets x ``per_scenario`` predictors: per data set, ``biased``
    predictors with a measurable information (20 SE) of which ``inside`` lie within their bound, the rest within
    2 SE of 0 (no measurable bias) and trivially within any bound."""
    rows, scenario = [], {}
    for k in range(scenarios):
        for seed in range(3):
            dataset = f"sc{k}_s{seed}"
            scenario[dataset] = f"sc{k}"
            for j in range(per_scenario):
                info = 0.02 if j < biased else 0.0005
                bound = 0.05 if (j >= biased or j < inside) else 0.0
                rows.append(
                    dict(
                        dataset=dataset,
                        coalition=f"X{j}",
                        size=1,
                        estimator="ce",
                        B_SP=bound,
                        B_EO=bound,
                        i_yhat_a=info,
                        i_yhat_a_se=0.001,
                        i_yhat_a_given_y=info,
                        i_yhat_a_given_y_se=0.001,
                    )
                )
    return pd.DataFrame(rows), scenario


def _c1_only(dpi: pd.DataFrame, scenario: dict) -> pd.DataFrame:
    given = inputs(BASE)
    given.update(dpi=dpi, scenario_of={**given["scenario_of"], **scenario})
    return decide(DEFINITIONS, measure_claims(**given, n_boot=300)).set_index("claim_id")


def test_c1_counts_only_predictors_with_measurable_bias():
    # review item 2: 94% of the predictors carry no measurable bias and pass any bound; of the measurably biased
    # ones only 1 in 6 lies within its bound. Over all predictors the share was 0.95 (a holds); over the measurable
    # ones it is 1/6, and the check fails
    dpi, scenario = _dpi_rows(scenarios=6, per_scenario=100, biased=6, inside=1)
    table = _c1_only(dpi, scenario)
    for claim_id in ("C1a", "C1b"):
        row = table.loc[claim_id]
        assert row["value"] == pytest.approx(1 / 6) and row["verdict"] == "fails", row["note"]
        assert row["runs"] == 6 and "108 of 1800 predictors with measurable bias" in row["note"]


def test_c1_is_inconclusive_below_the_minimum_count_of_measurable_predictors():
    # every measurable predictor within its bound, but only 3 x 3 x 2 = 18 of them: too few to tell 0.95 from 1
    dpi, scenario = _dpi_rows(scenarios=3, per_scenario=20, biased=2, inside=2)
    table = _c1_only(dpi, scenario)
    for claim_id in ("C1a", "C1b"):
        row = table.loc[claim_id]
        assert row["verdict"] == "inconclusive" and f"minimum {C1_MIN_MEASURABLE}" in row["note"], row["note"]


def test_c1_resamples_scenarios_not_data_sets():
    # review item 21: one scenario whose three data sets all break the bound; resampling the 18 data sets as
    # independent gives an interval above 0.95's failing side that a resample of 6 scenarios does not
    dpi, scenario = _dpi_rows(scenarios=6, per_scenario=20, biased=20, inside=20)
    broken = dpi["dataset"].str.startswith("sc0_")
    dpi.loc[broken, ["B_SP", "B_EO"]] = 0.0
    table = _c1_only(dpi, scenario)
    for claim_id in ("C1a", "C1b"):
        row = table.loc[claim_id]
        assert row["runs"] == 6 and row["value"] == pytest.approx(5 / 6)
        # with 6 clusters a resample misses the broken scenario with probability (5/6)^6 = 0.33
        assert row["high"] == pytest.approx(1.0) and row["verdict"] == "inconclusive", row["note"]


def _trading_pairs(n_datasets: int = 6, rows: int = 16) -> pd.DataFrame:
    """C4's pairs where the best SP measure depends on the data set: sp_A follows the SP gap on the first half of
    the data sets and is noise on the rest, sp_B the other way round; eo_C is noise everywhere."""
    rng = np.random.default_rng(7)
    frames = []
    for d in range(n_datasets):
        gap = rng.uniform(0, 1, rows)
        first = d < n_datasets // 2
        values = {
            "sp_A": gap + rng.normal(0, 0.1 if first else 3.0, rows),
            "sp_B": gap + rng.normal(0, 3.0 if first else 0.1, rows),
            "eo_C": rng.normal(0, 1, rows),
        }
        for measure, mu in values.items():
            frames.append(
                pd.DataFrame(
                    dict(dataset=f"d{d}", coalition=[f"S{i}" for i in range(rows)], estimator="ce", measure=measure,
                         mu=mu, notion=measure[:2].upper(), family="pid", sp_gap=gap, eo_gap=rng.uniform(0, 1, rows))
                )
            )  # fmt: skip
    return pd.concat(frames, ignore_index=True)


def test_c4_chooses_the_best_measures_again_inside_each_resample():
    """Issue 41's review (#11): the best measure of each notion was chosen on the pooled pairs and held fixed in the
    cluster bootstrap, so the interval ignored the selection. The interval is now the bootstrap of the whole
    procedure, selection included: the same numbers as choosing by hand in each resample, and not those of the
    fixed choice where the best measure changes between resamples."""
    from scipy.stats import spearmanr

    pairs = _trading_pairs()
    n_boot, seed = 200, 3
    c4a = next(m for m in _c4(pairs, "ce", n_boot, seed) if m.claim_id == "C4a")
    wide = pairs.pivot_table(index=["dataset", "coalition"], columns="measure", values="mu").join(
        pairs.groupby(["dataset", "coalition"])[["sp_gap"]].first()
    )
    datasets = sorted(pairs["dataset"].unique())

    def rho(rows, measure):
        return spearmanr(rows[measure], rows["sp_gap"])[0]

    def by_hand(rows, fixed=None):
        own = fixed or max(("sp_A", "sp_B"), key=lambda m: rho(rows, m))
        return rho(rows, own) - rho(rows, "eo_C")

    pooled = max(("sp_A", "sp_B"), key=lambda m: rho(wide, m))
    rng = np.random.default_rng(seed)
    resamples = [
        pd.concat([wide.loc[datasets[i]] for i in rng.integers(0, len(datasets), len(datasets))]) for _ in range(n_boot)
    ]
    chosen = np.quantile([by_hand(r) for r in resamples], [0.025, 0.975])
    fixed = np.quantile([by_hand(r, pooled) for r in resamples], [0.025, 0.975])
    assert c4a.value == pytest.approx(by_hand(wide)) and c4a.runs == len(datasets)
    assert [c4a.low, c4a.high] == pytest.approx(list(chosen))
    assert abs(fixed[0] - chosen[0]) > 0.05, (fixed, chosen)  # the fixed choice gives another interval here
    assert "chosen again inside each resample" in c4a.note and f"of {n_boot} resamples" in c4a.note
