"""The check of one scaffold SMILES apart from the corpus code so that the parse-time check of
`pmo.start` (experiment.check_config) loads only rdkit.Chem, not the corpus, clustering and pandas stack."""

from __future__ import annotations

from rdkit import Chem, rdBase

SCAFFOLD_VOCAB = ("C", "N", "O", "F", "S", "Cl", "Br", "P", "I")


def check_scaffold_smiles(
    smiles: str,
    vocab: tuple[str, ...] = SCAFFOLD_VOCAB,
    max_atoms: int | None = None,
) -> Chem.Mol:
    """The sanitised scaffold, or a ValueError naming the SMILES and what makes it unusable."""
    with rdBase.BlockLogs():
        mol = Chem.MolFromSmiles(smiles) if isinstance(smiles, str) and smiles.strip() else None
    if mol is None or mol.GetNumAtoms() == 0:
        raise ValueError(f"invalid scaffold SMILES {smiles!r}: RDKit cannot parse it")
    outside = sorted({atom.GetSymbol() for atom in mol.GetAtoms()} - set(vocab))
    if outside:
        raise ValueError(f"scaffold {smiles!r} has element(s) {outside} outside the vocabulary {list(vocab)}")
    if len(Chem.GetMolFrags(mol)) > 1:
        raise ValueError(f"scaffold {smiles!r} is disconnected ({len(Chem.GetMolFrags(mol))} fragments)")
    if not any(atom.GetTotalNumHs() for atom in mol.GetAtoms()):
        raise ValueError(f"scaffold {smiles!r} has no attachable atom (no atom carries a hydrogen)")
    if max_atoms is not None and mol.GetNumAtoms() >= max_atoms:
        raise ValueError(f"scaffold {smiles!r} has {mol.GetNumAtoms()} atoms: no room under max_atoms {max_atoms}")
    return mol
