"""AMORTIX corpus: filtering reasons, Murcko scaffolds, the cluster split and its leak check, scaffold checks."""

from __future__ import annotations

import re

import numpy as np
import pandas as pd
import pytest
from rdkit import Chem

from neurips26.amortix import corpus


@pytest.fixture(scope="module")
def nci_corpus():
    """The first 1000 NCI molecules prepared as in the quick pipeline (about half a second)."""
    smiles = corpus.read_smiles_file(corpus.rdkit_data_path(*corpus.NCI_FIRST_5K))[:1000]
    return corpus.prepare_corpus(smiles)


@pytest.fixture(scope="module")
def nci_split(nci_corpus):
    frame, _ = nci_corpus
    return corpus.split_scaffolds(frame["scaffold"].tolist(), cutoff=0.6, seed=0)


def test_rdkit_paths_find_shipped_files_and_name_missing_ones():
    assert corpus.rdkit_data_path(*corpus.NCI_FIRST_5K).is_file()
    assert corpus.rdkit_contrib_path("SA_Score", "sascorer.py").is_file()
    with pytest.raises(FileNotFoundError, match="no_such_file.smi"):
        corpus.rdkit_data_path("NCI", "no_such_file.smi")


def test_read_smiles_file_takes_first_column_of_smi_and_smiles_column_of_csv(tmp_path):
    smi = tmp_path / "mols.smi"
    smi.write_text("CCO\t1\nc1ccccc1 2\n\n")
    assert corpus.read_smiles_file(smi) == ["CCO", "c1ccccc1"]
    csv = tmp_path / "mols.csv"
    pd.DataFrame({"id": [1, 2], "SMILES": ["CCN", "CCC"]}).to_csv(csv, index=False)
    assert corpus.read_smiles_file(csv) == ["CCN", "CCC"]
    nci = corpus.read_smiles_file(corpus.rdkit_data_path(*corpus.NCI_FIRST_5K))
    assert len(nci) == 4999 and nci[0] == "CC1=CC(=O)C=CC1=O"


@pytest.mark.parametrize(
    "smiles, reason",
    [
        ("not_a_smiles", "parse_error"),
        ("C" * 31 + "c1ccccc1", "too_large"),  # 37 heavy atoms
        ("CCCCO", "no_ring"),
        ("Cc1ccco1", "scaffold_size"),  # furan: 5 scaffold atoms
        ("C[Si]1(C)CCCCC1", "scaffold_atom"),  # Si in the ring
        ("Brc1ccccc1", "decoration_atom"),  # Br may not be added
        ("[O-]C(=O)c1ccccc1", "decoration_atom"),  # charged decoration atom
        ("O=[N+]([O-])c1ccccc1", "decoration_atom"),  # nitro group
        ("CN(C)c1ccc(C(=C2C=CC(=[N+](C)C)C=C2)c2ccc(N(C)C)cc2)cc1", "scaffold_mismatch"),  # dye: scaffold re-perceived
    ],
)
def test_prepare_corpus_drops_with_the_first_failing_reason(smiles, reason):
    frame, counts = corpus.prepare_corpus([smiles])
    assert frame.empty
    assert counts[reason] == 1
    assert sum(counts[r] for r in corpus.DROP_REASONS) == 1


def test_prepare_corpus_standardises_deduplicates_and_counts():
    smiles = [
        "CCc1ccccc1",
        "c1ccccc1CC",
        "C[C@H](N)c1ccccc1",
        "c1ccc2ccccc2c1CCCC1CC1.[Na+]",
        "c1ccc2ccccc2c1",
        "CCCCO",
    ]
    frame, counts = corpus.prepare_corpus(smiles)
    assert frame["smiles"].tolist() == ["CCc1ccccc1", "CC(N)c1ccccc1", "c1ccc2c(CCCC3CC3)cccc2c1", "c1ccc2ccccc2c1"]
    assert counts["duplicate"] == 1 and counts["no_ring"] == 1
    assert counts["kept"] == 4 and counts["kept_no_decoration"] == 2  # naphthalenes that are their own scaffold
    assert counts["input"] == sum(counts[r] for r in corpus.DROP_REASONS) + counts["kept"]
    assert (frame["n_heavy"] == frame["n_scaffold_heavy"] + frame["n_decoration"]).all()


def test_murcko_scaffold_of_known_drugs():
    aspirin = Chem.MolFromSmiles("CC(=O)Oc1ccccc1C(=O)O")
    assert corpus.murcko_scaffold(aspirin) == "c1ccccc1"
    celecoxib = Chem.MolFromSmiles("Cc1ccc(-c2cc(C(F)(F)F)nn2-c2ccc(S(N)(=O)=O)cc2)cc1")
    assert corpus.murcko_scaffold(celecoxib) == "c1ccc(-c2ccnn2-c2ccccc2)cc1"
    # exocyclic double bonds stay on the scaffold (RDKit's Murcko variant)
    assert corpus.murcko_scaffold(Chem.MolFromSmiles("CC1=CC(=O)C=CC1=O")) == "O=C1C=CC(=O)C=C1"


def test_kept_molecules_contain_their_scaffold_and_respect_the_vocabularies(nci_corpus):
    frame, counts = nci_corpus
    assert 300 < len(frame) < 800
    assert frame["smiles"].is_unique
    for smiles, scaffold in frame[["smiles", "scaffold"]].itertuples(index=False):
        mol, core = Chem.MolFromSmiles(smiles), Chem.MolFromSmiles(scaffold)
        match = mol.GetSubstructMatch(core)
        assert match, (smiles, scaffold)
        decoration = [a for a in mol.GetAtoms() if a.GetIdx() not in set(match)]
        assert all(a.GetSymbol() in corpus.DECORATION_VOCAB and a.GetFormalCharge() == 0 for a in decoration)
        assert mol.GetNumHeavyAtoms() <= 35 and 6 <= core.GetNumHeavyAtoms() <= 20


def test_split_keeps_whole_clusters_and_hits_the_fractions(nci_split):
    corpus.check_no_leak(nci_split)
    assert nci_split["scaffold"].is_unique
    assert (nci_split.groupby("cluster")["split"].nunique() == 1).all()
    fractions = nci_split["split"].value_counts(normalize=True)
    assert fractions["train"] == pytest.approx(0.7, abs=0.08)
    assert fractions["val"] == pytest.approx(0.1, abs=0.06)
    assert fractions["test"] == pytest.approx(0.2, abs=0.06)


def test_split_clusters_are_butina_clusters_at_the_cutoff(nci_split):
    """Every scaffold lies within the Tanimoto distance cutoff of some other member of its cluster (its centroid)."""
    from rdkit import DataStructs

    fingerprints = corpus.scaffold_fingerprints(nci_split["scaffold"].tolist())
    for _, members in nci_split.groupby("cluster").groups.items():
        members = list(members)
        if len(members) == 1:
            continue
        sims = np.array(
            [DataStructs.BulkTanimotoSimilarity(fingerprints[i], [fingerprints[j] for j in members]) for i in members]
        )
        assert (sims >= 0.4 - 1e-9).all(axis=0).any()  # some member (the centroid) is within 0.6 of all


def test_split_is_seeded(nci_corpus):
    scaffolds = nci_corpus[0]["scaffold"].tolist()
    first = corpus.split_scaffolds(scaffolds, seed=0)
    pd.testing.assert_frame_equal(first, corpus.split_scaffolds(scaffolds, seed=0))
    assert not first["split"].equals(corpus.split_scaffolds(scaffolds, seed=1)["split"])


def test_split_refuses_fewer_than_three_clusters_and_bad_fractions():
    with pytest.raises(ValueError, match="need 3"):
        corpus.split_scaffolds(["c1ccccc1", "C1CCCCC1"])
    with pytest.raises(ValueError, match="fractions"):
        corpus.split_scaffolds(["c1ccccc1", "C1CCCCC1", "c1ccncc1"], fractions=(0.5, 0.5, 0.0))


def test_cluster_assignment_never_leaves_a_split_empty():
    # one giant cluster fills train past 80%; val would stay empty without the repair step
    assigned = corpus._assign_clusters(np.array([10, 1, 1]), np.array([0, 1, 2]), (0.7, 0.1, 0.2))
    assert sorted(assigned.tolist()) == [0, 1, 2]


def test_check_no_leak_names_a_planted_leak(nci_split):
    train_scaffold = nci_split.loc[nci_split["split"] == "train", "scaffold"].iloc[0]
    leaked = pd.concat([nci_split, pd.DataFrame({"scaffold": [train_scaffold], "cluster": [-1], "split": ["test"]})])
    with pytest.raises(ValueError, match=f"in more than one split.*{re.escape(train_scaffold)}"):
        corpus.check_no_leak(leaked)


def test_check_no_leak_catches_split_clusters_and_empty_splits():
    frame = pd.DataFrame(
        {"scaffold": ["a", "b", "c", "d"], "cluster": [0, 0, 1, 2], "split": ["train", "test", "val", "test"]}
    )
    with pytest.raises(ValueError, match=r"cluster\(s\) \[0\]"):
        corpus.check_no_leak(frame)
    with pytest.raises(ValueError, match="val"):
        corpus.check_no_leak(frame.assign(split=["train", "train", "test", "test"]))


@pytest.mark.parametrize(
    "smiles, message",
    [
        ("C1CC(", "invalid scaffold SMILES"),
        ("", "invalid scaffold SMILES"),
        ("c1ccc([Xe])cc1", r"\['Xe'\] outside the vocabulary"),
        ("C1(F)(F)C(F)(F)C1(F)F", "no attachable atom"),  # perfluorocyclopropane: no H anywhere
        ("c1ccccc1.c1ccccc1", "disconnected"),
    ],
)
def test_check_scaffold_smiles_names_what_is_wrong(smiles, message):
    with pytest.raises(ValueError, match=message):
        corpus.check_scaffold_smiles(smiles, corpus.SCAFFOLD_VOCAB)


@pytest.mark.parametrize(
    "smiles",
    [
        "c1cc[n+](C)cc1",  # charged ring N, ring carbons carry H
        "c1ccc2[nH]ccc2c1",  # indole: aromatic N-H
        "c1ccc2ccccc2c1",  # fused rings
        "Fc1c(F)c(F)c2[nH]c(F)c(F)c2c1F",  # the only hydrogen is on the aromatic nitrogen
        "O=C1C=CC(=O)C=C1",  # quinone with exocyclic oxygens
    ],
)
def test_check_scaffold_smiles_accepts_tricky_valid_scaffolds(smiles):
    mol = corpus.check_scaffold_smiles(smiles, corpus.SCAFFOLD_VOCAB)
    assert any(atom.GetTotalNumHs() for atom in mol.GetAtoms())


def test_check_scaffold_smiles_enforces_room_under_max_atoms():
    with pytest.raises(ValueError, match="max_atoms 6"):
        corpus.check_scaffold_smiles("c1ccccc1", corpus.SCAFFOLD_VOCAB, max_atoms=6)


def _rdkit_butina_labels(fingerprints, cutoff: float) -> np.ndarray:
    """Cluster ids from RDKit's Butina.ClusterData on the full lower-triangle distance list (the reference)."""
    from rdkit import DataStructs
    from rdkit.ML.Cluster import Butina

    distances = []
    for i in range(1, len(fingerprints)):
        distances.extend(1.0 - np.asarray(DataStructs.BulkTanimotoSimilarity(fingerprints[i], fingerprints[:i])))
    labels = np.empty(len(fingerprints), dtype=np.int64)
    for cluster_id, members in enumerate(Butina.ClusterData(distances, len(fingerprints), cutoff, isDistData=True)):
        labels[list(members)] = cluster_id
    return labels


@pytest.mark.parametrize("cutoff", [0.3, 0.6, 0.8])
def test_butina_clusters_equal_rdkits_butina(nci_corpus, cutoff):
    """Same clusters, same ids, same tie order (most neighbours first, then the higher index) as RDKit's."""
    fingerprints = corpus.scaffold_fingerprints(sorted(nci_corpus[0]["scaffold"].unique()))
    np.testing.assert_array_equal(
        corpus.butina_clusters(fingerprints, cutoff), _rdkit_butina_labels(fingerprints, cutoff)
    )


def test_butina_clusters_hold_no_pairwise_distance_matrix():
    """The split runs on every scaffold of ChEMBL 35 at paper scale (hundreds of thousands): the clustering keeps
    the neighbours within the cutoff, never the n x n distances (RDKit's Butina builds an n x n float64 matrix from
    the n(n-1)/2 distance list: 72 MB and 140 MB here, hundreds of GB for ChEMBL)."""
    import tracemalloc

    from rdkit import DataStructs

    rng = np.random.default_rng(0)
    fingerprints = []
    for bits in rng.random((3000, 2048)) < 0.02:
        fingerprint = DataStructs.ExplicitBitVect(2048)
        fingerprint.SetBitsFromList(np.flatnonzero(bits).tolist())
        fingerprints.append(fingerprint)
    tracemalloc.start()
    try:
        labels = corpus.butina_clusters(fingerprints, 0.6)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert len(np.unique(labels)) > 1
    assert peak < 8e6, f"peak {peak / 1e6:.0f} MB of Python and numpy memory for 3,000 fingerprints"
