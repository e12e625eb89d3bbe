"""Paper 02's rehearsal (issue 38): the rehearsal block derived from the paper block passes the paper's own checks
and keeps every shape; the fixture tarball has GitHub's layout and AnalogGenie's file names and format, matches the
fixture manifest by git blob SHA-1, and the paper's reader types, filters and splits it with the real type table."""

from __future__ import annotations

import io
import tarfile

import pytest

from conftest import ROOT, assert_keeps_shapes
from neurips26.analogtobi import experiment, rehearsal
from neurips26.analogtobi.dataset import read_archive, read_manifest, stratified_split
from neurips26.common.config import derived_rehearsal, load_yaml

CONFIG = load_yaml(ROOT / "config/analogtobi.yaml")
SCHEMA = load_yaml(ROOT / "workflow/schemas/analogtobi.schema.yaml")
SHAPES = ("model", "context", "sample.max_len", "sample.temperature", "rename_pool", "classifier.n_features", "main")
PAYLOADS = rehearsal.fixtures(1)


@pytest.mark.parametrize("factor", [1, 2])
def test_the_rehearsal_block_passes_the_papers_checks_and_keeps_its_shapes(factor):
    block = derived_rehearsal("analogtobi", CONFIG, SCHEMA, factor)
    experiment.check_config(block)
    assert_keeps_shapes(block, CONFIG["paper"], SHAPES)
    assert block["main"]["config"] in block["configs"] and "devpin-type-rename" in block["configs"]
    assert block["train"]["batch_size"] == 4 * factor and block["data"]["manifest"] == rehearsal.MANIFEST_FIXTURE
    assert CONFIG["paper"]["data"]["manifest"] == "config/analogtobi/manifest.txt"


def test_the_tarball_has_githubs_layout_and_analoggenies_netlists():
    with tarfile.open(fileobj=io.BytesIO(PAYLOADS[rehearsal.ARCHIVE])) as tar:
        names = tar.getnames()
    assert {name.split("/")[0] for name in names} == {rehearsal.TOP}
    assert any(name.endswith("/Opamp1.cir") for name in names)  # a neighbour that is not a dataset netlist
    assert rehearsal.fixtures(1) == PAYLOADS  # deterministic


def test_the_paper_reader_checks_types_and_splits_the_fixture(tmp_path):
    archive = tmp_path / "AnalogGenie.tar.gz"
    archive.write_bytes(PAYLOADS[rehearsal.ARCHIVE])
    manifest = tmp_path / "manifest.txt"
    manifest.write_bytes(rehearsal.local_files()[rehearsal.MANIFEST_FIXTURE])
    assert len(read_manifest(manifest)) == rehearsal.CIRCUITS + 1
    kept, rejects = read_archive(archive, manifest, rehearsal.TYPES, reference_bjt_filter=False)
    assert len(kept) == rehearsal.CIRCUITS and rejects["stage"].tolist() == ["digital"]
    assert set(kept["type"]) == set(rehearsal.WEIGHTS)  # the real type table types every fixture id
    assert kept["netlist"].str.contains(r"^MM1 \(", regex=True).any()
    split = stratified_split(kept, CONFIG["paper"]["data"]["test_fraction"], 0)
    assert set(kept.loc[split == "test", "type"]) == set(rehearsal.WEIGHTS)  # every type is evaluated


@pytest.mark.parametrize("config", ["devpin-type-rename", "bipart-type-rename", "random"])
def test_every_cut_rule_does_more_work_at_paper_scale(config):
    from neurips26.common.rehearsal import work_ratio

    block = derived_rehearsal("analogtobi", CONFIG, SCHEMA)
    wildcards = {"config": config, "seed": "0", "rep": "devpin"}
    rules = ["walks", "reference", "sample", "evaluate"] + ([] if config == "random" else ["train"])
    for rule in rules:
        ratio = work_ratio(rehearsal.PLAN, f"analogtobi_{rule}", CONFIG["paper"], block, wildcards)
        assert 1 < ratio < 1e8, rule
    assert work_ratio(rehearsal.PLAN, "analogtobi_sample", CONFIG["paper"], block, wildcards) == 1000
    assert work_ratio(rehearsal.PLAN, "analogtobi_report", CONFIG["paper"], block, wildcards) == 1
    assert not rehearsal.PLAN.not_rehearsed  # no rule left out on purpose (the driver reports any the DAG misses)
