"""Paper 19's rehearsal (issue 38): the rehearsal block derived from the paper block passes the paper's own checks
and keeps every shape, and each fixture source is read by the paper's real readers: ChEMBL's chemreps file and
EBI's checksums, TDC's pickled forests through the conversion job (published scores included), ZINC250k's csv."""

from __future__ import annotations

import logging
import runpy
from types import SimpleNamespace

import numpy as np
import pytest

from conftest import ROOT, assert_keeps_shapes, written_fixture
from neurips26.amortix import chembl, corpus, experiment, rehearsal, tdc, training
from neurips26.common.config import derived_rehearsal, load_yaml
from neurips26.common.rehearsal import work_ratio

CONFIG = load_yaml(ROOT / "config/amortix.yaml")
SCHEMA = load_yaml(ROOT / "workflow/schemas/amortix.schema.yaml")
SHAPES = ("corpus", "split", "task", "env", "policy", "rl.group_size", "evaluate.temperature", "pmo.start", "pmo.top_k")


@pytest.mark.parametrize("factor", [1, 2])
def test_the_rehearsal_block_passes_the_papers_checks_and_keeps_its_shapes(factor):
    block = derived_rehearsal("amortix", CONFIG, SCHEMA, factor)
    experiment.check_config(block)
    assert_keeps_shapes(block, CONFIG["paper"], SHAPES)
    assert block["pretrain"]["batch"] == 4 * factor <= CONFIG["paper"]["pretrain"]["batch"]
    assert block["rl"]["variants"] == ["drgrpo"] and block["rl"]["seeds"] == [0]
    # one RL step of one scaffold's group at either factor: the group is one gradient chunk (the paper's step peak)
    assert block["rl"]["steps"] == block["rl"]["batch_scaffolds"] == 1
    assert block["rl"]["group_size"] == training.GRADIENT_CHUNK == CONFIG["paper"]["rl"]["group_size"]
    for spec in (block["pmo"], block["baselines"]["per_instance"]):  # at least one Dr. GRPO update at either factor
        assert spec["budget"] >= spec["group_size"]


@pytest.fixture(scope="module")
def payloads():
    return rehearsal.fixtures(1)


def test_the_chemreps_fixture_passes_ebis_checksum_and_feeds_a_three_way_scaffold_split(tmp_path, payloads):
    chemreps = written_fixture(tmp_path, payloads, rehearsal.CHEMREPS)
    checksums = written_fixture(tmp_path, payloads, rehearsal.CHECKSUMS)
    assert "sha256" in chembl.verify_against_checksums(chemreps, checksums)
    table, counts = chembl.read_chemreps(chemreps)
    assert counts == {"rows": rehearsal.BASE_MOLECULES + 1, "no_smiles": 1, "kept": rehearsal.BASE_MOLECULES}
    paper = CONFIG["paper"]
    kept, _ = corpus.prepare_corpus(
        table["smiles"].tolist(),
        max_heavy=paper["corpus"]["max_heavy"],
        min_rings=paper["corpus"]["min_rings"],
        scaffold_heavy=tuple(paper["corpus"]["scaffold_heavy"]),
    )
    split = corpus.split_scaffolds(sorted(kept["scaffold"].unique()), paper["split"]["cutoff"])
    sizes = split["split"].value_counts()
    block = derived_rehearsal("amortix", CONFIG, SCHEMA, 2)
    assert sizes["test"] >= block["evaluate"]["test_scaffolds"] and sizes["val"] >= block["rl"]["val_scaffolds"]
    grown = rehearsal.fixture_smiles(2 * rehearsal.BASE_MOLECULES)  # fixtures(2): twice the molecules, the same first
    assert grown[: rehearsal.BASE_MOLECULES] == rehearsal.fixture_smiles(rehearsal.BASE_MOLECULES)
    assert len(set(grown)) == len(grown)


@pytest.mark.parametrize("target", tdc.TARGETS)
def test_the_tdc_fixtures_pass_the_conversion_job_with_tdcs_published_scores(tmp_path, payloads, target):
    pickle_path = written_fixture(tmp_path, payloads, rehearsal.TDC_PICKLES[target])
    out = tmp_path / f"{target}.npz"
    job = SimpleNamespace(
        log=[str(tmp_path / "convert.log")],
        wildcards=SimpleNamespace(target=target),
        input=SimpleNamespace(pickle=str(pickle_path)),
        output=[str(out)],
    )
    try:
        runpy.run_path(str(ROOT / "scripts/amortix/tdc_convert.py"), init_globals={"snakemake": job})
    finally:
        for handler in list(logging.getLogger("neurips26.amortix_tdc_convert").handlers):
            handler.close()
    forest = tdc.load_forest(out)
    assert forest.n_trees == rehearsal.N_TREES and forest.n_features == tdc.N_BITS
    scores = forest.predict_active(tdc.tdc_fingerprints(tdc.SELFTEST_SMILES))
    published = [0.0 if p is None else p for p in tdc.PUBLISHED[target]]
    np.testing.assert_allclose(scores, published, atol=1e-12)


def test_the_zinc_fixture_is_read_as_chemical_vaes_csv(tmp_path, payloads):
    path = written_fixture(tmp_path, payloads, rehearsal.ZINC)
    assert path.read_text().startswith('smiles,logP,qed,SAS\n"')
    smiles = corpus.read_smiles_file(path)
    assert len(smiles) == rehearsal.FOREST_MOLECULES and all("\n" not in s and s for s in smiles)
    assert all(corpus.standardise(s) is not None for s in smiles)


def test_the_split_declares_its_growth_with_chembls_compound_count(payloads):
    assert rehearsal.DATA_GROWTH["amortix_split"] == (rehearsal.BASE_MOLECULES, 2_496_335)
    assert set(payloads) == {
        rehearsal.CHEMREPS,
        rehearsal.CHECKSUMS,
        *rehearsal.TDC_PICKLES.values(),
        rehearsal.ZINC,
    }


@pytest.mark.parametrize(
    ("rule", "wildcards"),
    [
        ("amortix_pretrain", {}),
        ("amortix_rl", {"variant": "drgrpo", "seeds": "0"}),
        ("amortix_sample", {"policy": "drgrpo_s0"}),
        ("amortix_graph_ga", {}),
        ("amortix_per_instance", {}),
        ("amortix_pmo", {"oracle": "osimertinib_mpo"}),
    ],
)
def test_every_cut_rule_does_more_work_at_paper_scale(rule, wildcards):
    ratio = work_ratio(rehearsal.PLAN, rule, CONFIG["paper"], derived_rehearsal("amortix", CONFIG, SCHEMA), wildcards)
    assert 10 < ratio < 1e8
