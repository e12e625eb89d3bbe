"""Scaffold-constrained Graph GA (paper 19): edits touch decorations only, budgets hold."""

from __future__ import annotations

import numpy as np
import pytest
from rdkit import Chem, rdBase
from rdkit.Chem import QED
from rdkit.Chem.Scaffolds import MurckoScaffold

from neurips26.amortix import graph_ga

VOCAB_Z = {6, 7, 8, 9, 16, 17}
# fused rings, an aromatic N-H, a charged ring atom that carries an H, an exocyclic double bond
TRICKY_SCAFFOLDS = ["c1ccc2ccccc2c1", "c1ccc2[nH]ccc2c1", "c1cc[nH+]cc1", "C=C1CCC(c2ccccc2)CC1"]
OPERATORS = sorted(graph_ga.MUTATIONS)
# what each operator does to the heavy-atom count
ATOM_DELTA = {
    "append_atom": 1,
    "delete_atom": -1,
    "change_atom": 0,
    "change_bond_order": 0,
    "insert_atom": 1,
    "close_ring": 0,
}


@pytest.fixture(autouse=True)
def quiet_rdkit():
    with rdBase.BlockLogs():
        yield


def canonical(smiles: str) -> str:
    return Chem.MolToSmiles(Chem.MolFromSmiles(smiles))


def assert_valid_decoration(mol: Chem.Mol, scaffold: Chem.Mol) -> None:
    """Round-trips, contains the scaffold, and every decoration atom is a neutral vocabulary element."""
    parsed = Chem.MolFromSmiles(Chem.MolToSmiles(mol))
    assert parsed is not None
    assert parsed.HasSubstructMatch(scaffold)
    for i in graph_ga.decoration_atoms(parsed, scaffold):
        atom = parsed.GetAtomWithIdx(i)
        assert atom.GetAtomicNum() in VOCAB_Z and atom.GetFormalCharge() == 0


# decorated molecules with chains long enough for every operator (bonds between decoration atoms)
CHAINED = {
    "c1ccc2ccccc2c1": ["CCCCc1ccc2ccccc2c1", "OCC(C)c1cccc2ccccc12"],
    "c1ccc2[nH]ccc2c1": ["CCCCn1ccc2ccccc21", "CC(O)Cc1c[nH]c2ccccc12"],
    "c1cc[nH+]cc1": ["CCCC[n+]1ccccc1", "CC(N)Cc1cc[nH+]cc1"],
    "C=C1CCC(c2ccccc2)CC1": ["C=C1CCC(CCOC)(c2ccccc2)CC1", "CCCCc1ccc(C2CCC(=C)CC2)cc1"],
}


def decorated_family(scaffold_smiles: str, rng: np.random.Generator, n: int = 12) -> list[Chem.Mol]:
    """The bare scaffold, two hand-made chained decorations and random appends of 1-6 atoms."""
    scaffold = Chem.MolFromSmiles(scaffold_smiles)
    family = [Chem.Mol(scaffold)] + [Chem.MolFromSmiles(s) for s in CHAINED[scaffold_smiles]]
    while len(family) < n:
        mol = Chem.Mol(scaffold)
        for _ in range(int(rng.integers(1, 7))):
            grown = graph_ga.append_atom(mol, mol.GetSubstructMatch(scaffold), rng)
            mol = grown if grown is not None else mol
        family.append(Chem.MolFromSmiles(Chem.MolToSmiles(mol)))
    return family


def test_exocyclic_double_bond_is_part_of_the_murcko_scaffold():
    # so the last tricky scaffold is one the corpus pipeline can produce
    mol = Chem.MolFromSmiles("CCC(=O)Nc1ccc(C2CCC(=C)CC2)cc1")
    assert Chem.MolToSmiles(MurckoScaffold.GetScaffoldForMol(mol)) == canonical(TRICKY_SCAFFOLDS[3])


def test_decoration_atoms_are_the_atoms_outside_the_match():
    scaffold = Chem.MolFromSmiles("c1ccc2[nH]ccc2c1")
    mol = Chem.MolFromSmiles("CC(=O)c1ccc2[nH]ccc2c1")
    decoration = graph_ga.decoration_atoms(mol, scaffold)
    assert sorted(mol.GetAtomWithIdx(i).GetSymbol() for i in decoration) == ["C", "C", "O"]
    with pytest.raises(ValueError):
        graph_ga.decoration_atoms(Chem.MolFromSmiles("c1ccccc1"), scaffold)


@pytest.mark.parametrize("scaffold_smiles", TRICKY_SCAFFOLDS)
def test_every_mutation_operator_keeps_the_scaffold(scaffold_smiles):
    scaffold = Chem.MolFromSmiles(scaffold_smiles)
    rng = np.random.default_rng(7)
    family = decorated_family(scaffold_smiles, rng)
    for name in OPERATORS:
        operator = graph_ga.MUTATIONS[name]
        produced = 0
        for draw in range(120):
            mol = family[draw % len(family)]
            child = operator(mol, mol.GetSubstructMatch(scaffold), rng, graph_ga.DEFAULT_VOCAB)
            if child is None:
                continue
            produced += 1
            assert_valid_decoration(child, scaffold)
            assert child.GetNumAtoms() - mol.GetNumAtoms() == ATOM_DELTA[name], name
            # the scaffold's charge is never touched and decorations are neutral
            assert Chem.GetFormalCharge(child) == Chem.GetFormalCharge(mol), name
        assert produced >= 10, f"{name} on {scaffold_smiles}: only {produced} of 120 draws gave a molecule"


@pytest.mark.parametrize(
    "decorated, scaffold_smiles",
    [
        ("Cn1ccc2ccccc21", "c1ccc2[nH]ccc2c1"),  # the N gets its H back
        ("C[n+]1ccccc1", "c1cc[nH+]cc1"),  # the charged N too, and keeps its charge
        ("CC(C)c1ccccc1", "c1ccccc1"),
    ],
)
def test_deleting_every_decoration_atom_gives_back_the_bare_scaffold(decorated, scaffold_smiles):
    scaffold = Chem.MolFromSmiles(scaffold_smiles)
    mol = Chem.MolFromSmiles(decorated)
    rng = np.random.default_rng(0)
    while graph_ga.decoration_atoms(mol, scaffold):
        mol = graph_ga.delete_atom(mol, mol.GetSubstructMatch(scaffold), rng)
        assert mol is not None
    assert Chem.MolToSmiles(mol) == canonical(scaffold_smiles)


def test_an_edit_that_would_aromatize_the_scaffold_is_refused():
    # C=O on C4 of a 1,4-dihydropyridine makes 4-pyridone, which RDKit perceives as aromatic: the
    # scaffold's single and double bonds would no longer match
    scaffold = Chem.MolFromSmiles("C1=CNC=CC1")
    mol = Chem.MolFromSmiles("OC1C=CNC=C1")
    rng = np.random.default_rng(0)
    assert not Chem.MolFromSmiles("O=C1C=CNC=C1").HasSubstructMatch(scaffold)
    assert all(graph_ga.change_bond_order(mol, mol.GetSubstructMatch(scaffold), rng) is None for _ in range(20))


def test_append_to_aromatic_nh_replaces_its_hydrogen():
    scaffold = Chem.MolFromSmiles("c1ccc2[nH]ccc2c1")
    rng = np.random.default_rng(1)
    products = set()
    for _ in range(300):
        child = graph_ga.append_atom(scaffold, scaffold.GetSubstructMatch(scaffold), rng, ("C",))
        if child is not None:
            products.add(Chem.MolToSmiles(child))
    # six ring CH positions and the N-H: seven distinct methylindoles, all single bonds on aromatic atoms
    assert canonical("Cn1ccc2ccccc21") in products
    assert len(products) == 7


def side_chains_by_position(mol: Chem.Mol, scaffold: Chem.Mol) -> dict[int, str]:
    """Side chains keyed by the scaffold atom they hang on (independently of graph_ga, via ReplaceCore)."""
    stripped = Chem.ReplaceCore(mol, scaffold, labelByIndex=True)
    chains = {}
    for fragment in Chem.GetMolFrags(stripped, asMols=True, sanitizeFrags=False):
        labels = [atom.GetIsotope() for atom in fragment.GetAtoms() if atom.GetAtomicNum() == 0]
        assert len(labels) == 1  # the test parents have one attachment per chain
        chains[labels[0]] = Chem.MolToSmiles(fragment)
    return chains


def test_crossover_keeps_the_scaffold_and_takes_each_side_chain_from_a_parent():
    scaffold = Chem.MolFromSmiles("c1ccc2[nH]ccc2c1")  # no symmetry: positions are unambiguous
    parent_a = Chem.MolFromSmiles("CC(=O)c1ccc2[nH]c(CO)cc2c1")
    parent_b = Chem.MolFromSmiles("NCCn1ccc2ccc(C(F)(F)F)cc21")
    chains_a = side_chains_by_position(parent_a, scaffold)
    chains_b = side_chains_by_position(parent_b, scaffold)
    assert len(set(chains_a) | set(chains_b)) == 4  # four distinct attachment points
    rng = np.random.default_rng(3)
    children = set()
    for _ in range(200):
        child = graph_ga.crossover(parent_a, parent_b, scaffold, rng)
        assert child is not None
        assert_valid_decoration(child, scaffold)
        assert len(Chem.GetMolFrags(child)) == 1
        for position, chain in side_chains_by_position(child, scaffold).items():
            assert chain in (chains_a.get(position), chains_b.get(position))
        children.add(Chem.MolToSmiles(child))
    # four attachment points, each from A or B: 2**4 distinct children (the parents among them)
    assert len(children) == 16
    assert Chem.MolToSmiles(parent_a) in children and Chem.MolToSmiles(parent_b) in children


def test_crossover_moves_a_chain_bonded_to_two_scaffold_atoms_as_one_piece():
    scaffold = Chem.MolFromSmiles("c1ccccc1")
    parent_a = Chem.MolFromSmiles("c1ccc2c(c1)CCCC2")  # one chain on two adjacent ring atoms
    parent_b = Chem.MolFromSmiles("Cc1ccc(O)cc1")
    rng = np.random.default_rng(0)
    for _ in range(100):
        child = graph_ga.crossover(parent_a, parent_b, scaffold, rng)
        if child is not None:
            assert_valid_decoration(child, scaffold)
            assert child.GetNumAtoms() in {6 + 1, 6 + 2, 6 + 4, 6 + 4 + 1, 6 + 4 + 2}


class CountingOracle:
    """QED, with a record of every molecule it was asked about and checks on what it is given."""

    def __init__(self, scaffold: str):
        self.scaffold = Chem.MolFromSmiles(scaffold)
        self.calls: list[str] = []

    def __call__(self, mols: list[Chem.Mol]) -> np.ndarray:
        for mol in mols:
            assert_valid_decoration(mol, self.scaffold)
            self.calls.append(Chem.MolToSmiles(mol))
        return np.array([QED.qed(mol) for mol in mols])


@pytest.mark.parametrize("budget", [1, 2, 37])
def test_ga_never_exceeds_the_budget_and_never_scores_a_molecule_twice(budget):
    scaffold = "c1ccc2[nH]ccc2c1"
    oracle = CountingOracle(scaffold)
    initial = ["Cc1ccc2[nH]ccc2c1", "c1ccc2[nH]ccc2c1", "OCc1ccc2[nH]ccc2c1", "Nc1ccc2[nH]ccc2c1"]
    table = graph_ga.run_constrained_ga(scaffold, initial, oracle, budget=budget, seed=1)
    assert len(table) == len(oracle.calls) == budget
    assert list(table["call"]) == list(range(1, budget + 1))
    assert list(table["smiles"]) == oracle.calls
    assert table["smiles"].is_unique
    assert all(Chem.MolFromSmiles(s).GetNumHeavyAtoms() <= 35 for s in table["smiles"])
    assert (table["generation"].diff().dropna() >= 0).all()


def test_initial_population_is_deduplicated_and_filtered():
    scaffold = "c1ccccc1"
    initial = [
        "Cc1ccccc1",
        "c1ccccc1C",
        "not a smiles",
        "CCO",
        "Brc1ccccc1",
        "C[N+](C)(C)c1ccccc1",
        "Cc1ccccc1.O",
        "Oc1ccccc1",
    ]
    table = graph_ga.run_constrained_ga(scaffold, initial, CountingOracle(scaffold), budget=2, seed=0)
    assert list(table["smiles"]) == ["Cc1ccccc1", "Oc1ccccc1"]


def test_ga_starts_from_the_bare_scaffold_and_stops_when_nothing_new_fits():
    oracle = CountingOracle("c1ccccc1")
    table = graph_ga.run_constrained_ga("c1ccccc1", [], oracle, budget=50, max_heavy=6, max_attempts_factor=5)
    assert list(table["smiles"]) == ["c1ccccc1"]
    assert table.attrs["stop"] == "exhausted"


def test_ga_is_deterministic_for_a_seed():
    scaffold = "O=C1CCCN1c1ccccc1"
    runs = [
        graph_ga.run_constrained_ga(
            scaffold, ["CC1CC(=O)N(c2ccccc2)C1"], CountingOracle(scaffold), budget=48, seed=seed
        )
        for seed in (5, 5, 6)
    ]
    assert runs[0].equals(runs[1])
    assert not runs[0]["smiles"].equals(runs[2]["smiles"])


@pytest.mark.parametrize(
    "scaffold, initial",
    [
        ("c1ccc2[nH]ccc2c1", ["Cc1ccc2[nH]ccc2c1", "CCc1c[nH]c2ccccc12"]),
        ("c1ccc(-c2ccccn2)cc1", ["Cc1ccc(-c2ccccn2)cc1"]),
    ],
)
def test_ga_improves_qed_over_its_initial_population(scaffold, initial):
    table = graph_ga.run_constrained_ga(scaffold, initial, CountingOracle(scaffold), budget=200, seed=0)
    initial_best = table.loc[table["generation"] == 0, "score"].max()
    assert len(table) == 200
    assert table["score"].max() > initial_best + 0.15


def test_bad_inputs_raise():
    oracle = CountingOracle("c1ccccc1")
    with pytest.raises(ValueError, match="budget"):
        graph_ga.run_constrained_ga("c1ccccc1", [], oracle, budget=0)
    with pytest.raises(ValueError, match="scaffold"):
        graph_ga.run_constrained_ga("c1cccc1X", [], oracle, budget=5)
    with pytest.raises(ValueError, match="element"):
        graph_ga.run_constrained_ga("c1ccccc1", [], oracle, budget=5, vocab=("C", "Xx"))
    with pytest.raises(ValueError, match="max_heavy"):
        graph_ga.run_constrained_ga("c1ccc2ccccc2c1", [], oracle, budget=5, max_heavy=8)
    with pytest.raises(ValueError, match="non-finite"):
        graph_ga.run_constrained_ga("c1ccccc1", [], lambda mols: np.full(len(mols), np.nan), budget=5)
