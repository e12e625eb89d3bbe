"""AMORTIX's paper-scale sources: ChEMBL 35's chemreps reader and EBI checksum check, and the kinase objective with
TDC's forests (tdc_kinase): formula, success rule, storage, self-test and the scoring interface the jobs use. The
forests here are fitted in the test (the real ones are paper-scale downloads)."""

from __future__ import annotations

import gzip
import hashlib

import numpy as np
import pandas as pd
import pytest
from rdkit import Chem
from sklearn.ensemble import RandomForestClassifier

from neurips26.amortix import artifacts, chembl, corpus, oracles, surrogate, tdc, tdc_kinase
from neurips26.common.io import load_npz, save_npz

CHEMREPS = (
    "chembl_id\tcanonical_smiles\tstandard_inchi\tstandard_inchi_key\n"
    "CHEMBL1\tCc1ccccc1O\tInChI=1S/x\tAAAA\n"
    "CHEMBL2\t\t\t\n"
    "CHEMBL3\tc1ccc2ccccc2c1\tInChI=1S/y\tBBBB\n"
    "CHEMBL4\n"
)


@pytest.fixture
def chemreps(tmp_path):
    path = tmp_path / "chembl_35_chemreps.txt.gz"
    with gzip.open(path, "wt") as handle:
        handle.write(CHEMREPS)
    return path


def test_chemreps_reader_keeps_ids_and_smiles_and_counts_rows_without(chemreps):
    table, counts = chembl.read_chemreps(chemreps)
    assert table["chembl_id"].tolist() == ["CHEMBL1", "CHEMBL3"]
    assert table["smiles"].tolist() == ["Cc1ccccc1O", "c1ccc2ccccc2c1"]
    assert counts == {"rows": 4, "no_smiles": 2, "kept": 2}


def test_chemreps_reader_refuses_another_layout(tmp_path):
    path = tmp_path / "other.txt"
    path.write_text("smiles\tid\nCCO\t1\n")
    with pytest.raises(ValueError, match="chembl_id"):
        chembl.read_chemreps(path)


def test_the_corpus_job_reads_what_the_chembl_job_writes(chemreps, tmp_path):
    """rule amortix_chembl writes smiles, chembl_id as CSV; the corpus job's reader takes its smiles column and
    filters it as any source."""
    table, _ = chembl.read_chemreps(chemreps)
    csv = tmp_path / "chembl35_smiles.csv"
    table[["smiles", "chembl_id"]].to_csv(csv, index=False)
    smiles = corpus.read_smiles_file(csv)
    assert smiles == ["Cc1ccccc1O", "c1ccc2ccccc2c1"]
    kept, counts = corpus.prepare_corpus(smiles)
    assert counts["input"] == 2 and counts["kept"] == len(kept) == 2


def test_checksums_line_is_found_and_its_algorithm_read_from_its_length(chemreps, tmp_path):
    data = chemreps.read_bytes()
    sha256, md5 = hashlib.sha256(data).hexdigest(), hashlib.md5(data).hexdigest()
    listing = tmp_path / "checksums.txt"
    for digest, algorithm in ((sha256, "sha256"), (md5, "md5")):
        listing.write_text(f"{'0' * 64}\tchembl_35_sqlite.tar.gz\n{digest}\t{chemreps.name}\n")
        assert chembl.checksum_of(listing.read_text(), chemreps.name) == (algorithm, digest)
        assert algorithm in chembl.verify_against_checksums(chemreps, listing)
    listing.write_text(f"{'1' * 64}  {chemreps.name}\n")
    with pytest.raises(ValueError, match="differs from EBI's checksums.txt"):
        chembl.verify_against_checksums(chemreps, listing)
    listing.write_text(f"{sha256}  chembl_35.fa.gz\n")
    with pytest.raises(ValueError, match="chembl_35_chemreps.txt.gz is not listed in"):
        chembl.verify_against_checksums(chemreps, listing)
    with pytest.raises(ValueError, match="no known algorithm"):
        chembl.checksum_of(f"abc123  {chemreps.name}\n", chemreps.name)


# ---------------------------------------------------------------- the objective with TDC's forests

MOLECULES = [
    "CC(=O)Oc1ccccc1C(=O)O",
    "Cn1c(=O)c2c(ncn2C)n(C)c1=O",
    "Cc1ccc(NC(=O)c2ccc(CN3CCN(C)CC3)cc2)cc1Nc1nccc(-c2cccnc2)n1",
    "COCCOc1cc2ncnc(Nc3cccc(C#C)c3)c2cc1OCCOC",
    "c1ccccc1",
    "CCN(CC)CCNC(=O)c1ccc(N)cc1",
    "O=C(O)c1ccccc1O",
    "Clc1ccc(cc1)C(c1ccccc1)N1CCNCC1",
    "CC(C)Cc1ccc(cc1)C(C)C(=O)O",
    "c1ccc2[nH]ccc2c1",
    *tdc.SELFTEST_SMILES,
]


@pytest.fixture(scope="module")
def objective() -> tdc_kinase.TDCKinase:
    """Two forests fitted on ECFP4 bits of a few drugs (labels: has a nitrogen / has an aromatic N-H or amide)."""
    mols = [Chem.MolFromSmiles(s) for s in MOLECULES]
    bits = oracles.ecfp4_bits(mols).astype(float)
    labels = {
        "gsk3b": [int(any(a.GetSymbol() == "N" for a in m.GetAtoms())) for m in mols],
        "jnk3": [int(m.HasSubstructMatch(Chem.MolFromSmarts("[#7][#6]=O"))) for m in mols],
    }
    forests = {
        target: tdc.TreeForest(
            tdc.forest_arrays(RandomForestClassifier(n_estimators=15, random_state=0).fit(bits, labels[target]))
        )
        for target in tdc.TARGETS
    }
    return tdc_kinase.TDCKinase(forests, sources={"gsk3b": "test forest", "jnk3": "test forest"})


def test_score_is_the_papers_mean_of_gsk3b_jnk3_qed_and_sa(objective):
    mols = [Chem.MolFromSmiles(s) for s in MOLECULES] + [None]
    parts = objective.components(mols)
    assert parts.columns.tolist() == ["qed", "sa", "p_gsk3b", "p_jnk3"]
    scores = objective(mols)
    for i, row in enumerate(parts.itertuples()):
        if i < len(MOLECULES):
            expected = np.mean([row.p_gsk3b, row.p_jnk3, row.qed, (10 - row.sa) / 9])
            assert scores[i] == pytest.approx(expected, abs=1e-12)
    assert scores[-1] == 0.0 and parts.iloc[-1].isna().all()
    bits = oracles.ecfp4_bits([m for m in mols if m is not None])
    np.testing.assert_array_equal(parts["p_gsk3b"].to_numpy()[:-1], objective.forests["gsk3b"].predict_active(bits))


def test_success_needs_both_kinases_qed_and_sa(objective):
    parts = pd.DataFrame(
        {
            "qed": [0.6, 0.6, 0.59, 0.9, 0.9, np.nan],
            "sa": [3.9, 3.9, 2.0, 4.0, 2.0, np.nan],
            "p_gsk3b": [0.5, 0.49, 0.9, 0.9, 0.9, np.nan],
            "p_jnk3": [0.5, 0.9, 0.9, 0.9, 0.49, np.nan],
        }
    )
    assert objective.success(parts).tolist() == [True, False, False, False, False, False]


def test_stored_objective_is_rebuilt_with_identical_scores(objective, tmp_path):
    path = tmp_path / "oracle.npz"
    save_npz(path, **tdc_kinase.tdc_state(objective))
    state = load_npz(path)
    assert tdc_kinase.is_tdc_state(state) and not tdc_kinase.is_tdc_state({"egfr.left": np.zeros(1)})
    loaded = tdc_kinase.tdc_from_state(state)
    assert loaded.sources == objective.sources
    mols = [Chem.MolFromSmiles(s) for s in MOLECULES]
    np.testing.assert_array_equal(loaded(mols), objective(mols))


def test_candidates_are_scored_through_the_jobs_interface(objective):
    """artifacts.score_candidates and surrogate.corpus_scores (used by every job that scores) take the
    objective as they take the surrogate: components, score and success."""
    candidates = pd.DataFrame({"smiles": MOLECULES[:4], "valid": [True] * 4, "retained": [True, True, False, True]})
    scored = artifacts.score_candidates(candidates, objective)
    assert {"p_gsk3b", "p_jnk3", "score", "success"} <= set(scored.columns)
    assert scored["score"].iloc[2] == 0.0 and not scored["success"].iloc[2]
    base = surrogate.corpus_scores(objective, MOLECULES[:4])
    np.testing.assert_allclose(base["score"].to_numpy()[[0, 1, 3]], scored["score"].to_numpy()[[0, 1, 3]])


def test_selftest_enforces_tdcs_published_scores(objective, monkeypatch):
    parts = objective.components([Chem.MolFromSmiles(s) for s in tdc.SELFTEST_SMILES])
    own = {t: tuple(float(v) for v in parts[f"p_{t}"]) for t in tdc.TARGETS}
    monkeypatch.setattr(tdc, "PUBLISHED", own)
    table = tdc_kinase.selftest_table(objective)
    assert table["passed"].all() and table["check"].str.contains("published").sum() == 6
    shifted = {t: tuple(v + 2 * tdc.TOLERANCE for v in values) for t, values in own.items()}
    monkeypatch.setattr(tdc, "PUBLISHED", shifted)
    with pytest.raises(tdc.ConversionError, match="published score"):
        tdc_kinase.selftest_table(objective)


def test_the_jobs_oracle_loader_reads_the_tdc_objective(objective, tmp_path):
    path = tmp_path / "oracle.npz"
    save_npz(path, **tdc_kinase.tdc_state(objective))
    loaded = artifacts.load_oracle(path)
    mols = [Chem.MolFromSmiles(s) for s in MOLECULES]
    assert isinstance(loaded, tdc_kinase.TDCKinase)
    np.testing.assert_array_equal(loaded(mols), objective(mols))
