"""Paper 14's experiments at tiny sizes: the config's bad inputs refused before any job (beta <= 0, empty grids,
unknown rule or axiom names, fewer than three seeds at quick scale), the axiom table's rows with witnesses that
replay, the threshold search finding NLHF's violations below the bound and none for DPO, RLHF-BT equal to DPO, the
report's axiom table, and the figures."""

from __future__ import annotations

import copy
import json

import numpy as np
import pytest

from conftest import ROOT
from neurips26.common.config import load_yaml
from neurips26.posttrain_voting import experiment, plots, summary
from neurips26.posttrain_voting.axioms import replay

CONFIG = load_yaml(ROOT / "config/posttrain_voting.yaml")
SMOKE = CONFIG["smoke"]


@pytest.mark.parametrize("scale", ["smoke", "quick", "paper"])
def test_the_shipped_configs_pass_their_checks(scale):
    experiment.check_config(CONFIG[scale], scale)


@pytest.mark.parametrize(
    ("path", "value", "match"),
    [
        (("betas",), [0.1, 0.0], "finite and > 0"),
        (("betas",), [], "empty"),
        (("threshold", "betas"), [-1.0], "finite and > 0"),
        (("rules",), ["dpo", "ppo"], "unknown rules"),
        (("axioms",), ["monotonicity", "anonymity"], "unknown axioms"),
        (("adversarial", "rules"), ["nash"], "unknown adversarial.rules"),
        (("sources",), ["coval"], "unknown sources"),
        (("seeds",), [0, 1], "needs >= 3"),
        (("seeds",), [0, 0, 1], "repeat"),
        (("threshold", "grid"), [1.0, 0.1, 5], "0 < low < high"),
    ],
)
def test_bad_inputs_are_refused_naming_the_key(path, value, match):
    cfg = copy.deepcopy(CONFIG["quick"])
    node = cfg
    for key in path[:-1]:
        node = node[key]
    node[path[-1]] = value
    with pytest.raises(ValueError, match=match):
        experiment.check_config(cfg, "quick")


def test_the_smoke_config_may_have_one_seed_but_quick_not():
    experiment.check_config(SMOKE, "smoke")
    with pytest.raises(ValueError, match="needs >= 3"):
        experiment.check_config({**CONFIG["quick"], "seeds": [0]}, "quick")


def test_the_axiom_table_checks_every_cell_and_its_witnesses_replay():
    table = experiment.axiom_table(SMOKE, "synthetic", 0)
    n_profiles = len(SMOKE["synthetic"]["families"]) * SMOKE["synthetic"]["profiles"]
    per_profile = 0
    for axiom in SMOKE["axioms"]:
        for rule in SMOKE["rules"]:
            if rule == "proportional_borda":
                per_profile += axiom != "commutativity"
            else:
                per_profile += len(SMOKE["betas"]) * len(SMOKE["references"]["kinds"])
    assert len(table) == n_profiles * per_profile
    violated = table[~table["holds"]]
    assert len(violated) and (violated["witness"] != "").all() and (table.loc[table["holds"], "witness"] == "").all()
    for _, row in violated.iterrows():  # every violation in the table replays with its margin
        result = replay(json.loads(row["witness"]))
        assert not result.holds and result.margin == pytest.approx(row["margin"], abs=1e-9)
    dpo = table[table["rule"] == "dpo"]
    assert dpo.loc[dpo["axiom"] == "commutativity", "holds"].all()  # DPO's closed form commutes
    prop = table[table["rule"] == "proportional_borda"]
    assert prop["holds"].all() and prop["beta"].isna().all()  # linear in P: mixing consistent, participation


def test_the_threshold_search_finds_nlhf_violations_below_the_bound_and_none_for_dpo():
    table = experiment.threshold_table(SMOKE["threshold"], [0])
    bound = table.loc[table["kind"] == "bound", "threshold"].iloc[0]
    assert 0.1 <= bound <= 0.126  # 1/8 at smoke's coarse bisection (realisable profiles)
    assert set(table["kind"]) >= {"control", "test"}
    search = table[table["kind"] == "search"]
    nlhf = search[(search["rule"] == "nlhf") & (search["beta"] < bound)]
    assert nlhf["violations"].sum() > 0
    assert search.loc[search["rule"] == "dpo", "violations"].sum() == 0
    refined = table.loc[table["kind"] == "refined", "threshold"]
    assert len(refined) and (refined > 0).all() and (refined < bound).all()
    witness = json.loads(search.loc[search["witness"] != "", "witness"].iloc[0])
    assert not replay(witness).holds


def test_rlhf_bt_equals_dpo_and_the_adversarial_search_records_witnesses():
    eq = experiment.equivalence_table(SMOKE, [0])
    assert eq["gap"].max() < 1e-6
    adv = experiment.adversarial_table({**SMOKE["adversarial"], "steps": 30}, 0)
    assert set(adv.columns) >= {"seed", "rule", "axiom", "beta", "holds", "magnitude", "margin", "witness"}
    for _, row in adv[~adv["holds"]].iterrows():
        assert not replay(json.loads(row["witness"])).holds


def test_the_report_tables_and_figures_read_the_tables():
    axioms = experiment.axiom_table(SMOKE, "synthetic", 0)
    adv = experiment.adversarial_table(SMOKE["adversarial"], 0)
    matrix = summary.axiom_matrix(axioms, adv)
    assert set(matrix["status"]) <= {"holds", "violated"}
    assert (matrix.loc[matrix["status"] == "violated", "witness"] != "").all()
    row = matrix[(matrix["rule"] == "dpo") & (matrix["axiom"] == "mixing_consistency")].iloc[0]
    assert row["status"] == "violated" and "N = [" in row["witness"] and "M = [" in row["witness"]
    thr = experiment.threshold_table(SMOKE["threshold"], [0])
    for fig in (plots.violations(axioms), plots.staged(axioms), plots.threshold(thr)):
        assert fig.axes
    assert np.isfinite(summary.threshold_summary(thr)["bound"])
