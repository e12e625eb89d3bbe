"""Scaffold-decoration corpus: NCI molecules, their Bemis-Murcko scaffolds and a cluster split.

Every molecule becomes one behaviour-cloning example: start from its scaffold, add the decoration atoms.
So a molecule is kept only if the environment could build it: decoration atoms neutral and in the
decoration vocabulary, joined by non-aromatic bonds, scaffold atoms in the scaffold vocabulary, and the
molecule matching the scaffold parsed back from its canonical SMILES (what the environment starts from).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
from rdkit import Chem, DataStructs, RDConfig, rdBase
from rdkit.Chem import rdFingerprintGenerator
from rdkit.Chem.Scaffolds import MurckoScaffold

from neurips26.amortix.scaffold_check import SCAFFOLD_VOCAB, check_scaffold_smiles  # noqa: F401 (re-exported)

DECORATION_VOCAB = ("C", "N", "O", "F", "S", "Cl")
# first failing reason wins, in this order; counts of these plus "kept" add up to "input"
DROP_REASONS = (
    "parse_error",
    "duplicate",
    "too_large",
    "no_ring",
    "scaffold_size",
    "scaffold_atom",
    "decoration_atom",
    "decoration_bond",
    "scaffold_mismatch",
)
SPLITS = ("train", "val", "test")
NCI_FIRST_5K = ("NCI", "first_5K.smi")


def _existing(root: str, parts: tuple[str, ...]) -> Path:
    path = Path(root).joinpath(*parts)
    if not path.exists():
        raise FileNotFoundError(f"{path} is not in this RDKit installation")
    return path


def rdkit_data_path(*parts: str) -> Path:
    """A file shipped in RDKit's Data directory (e.g. 'NCI', 'first_5K.smi'): the quick data needs no download."""
    return _existing(RDConfig.RDDataDir, parts)


def rdkit_contrib_path(*parts: str) -> Path:
    """A file shipped in RDKit's Contrib directory (SA score, EGFR and CDK2 ligand sets)."""
    return _existing(RDConfig.RDContribDir, parts)


def read_smiles_file(path: str | Path) -> list[str]:
    """SMILES from a .smi ('SMILES<whitespace>id' per line, as NCI first_5K.smi) or a .csv with a smiles column."""
    path = Path(path)
    if path.suffix.lower() == ".csv":
        frame = pd.read_csv(path)
        column = next((c for c in frame.columns if c.lower() == "smiles"), None)
        if column is None:
            raise ValueError(f"{path} has no 'smiles' column (columns: {list(frame.columns)})")
        return frame[column].astype(str).str.strip().tolist()
    lines = path.read_text().splitlines()
    smiles = [line.split()[0] for line in lines if line.strip() and not line.startswith("#")]
    if smiles and smiles[0].lower() == "smiles":  # header line
        smiles = smiles[1:]
    return smiles


def standardise(smiles: str) -> Chem.Mol | None:
    """Parse, drop stereochemistry and keep the largest fragment (salts, counter-ions); None if unparseable."""
    with rdBase.BlockLogs():
        mol = Chem.MolFromSmiles(smiles) if smiles else None
    if mol is None or mol.GetNumAtoms() == 0:
        return None
    Chem.RemoveStereochemistry(mol)
    fragments = Chem.GetMolFrags(mol, asMols=True, sanitizeFrags=False)
    return max(fragments, key=lambda frag: frag.GetNumHeavyAtoms()) if len(fragments) > 1 else mol


def murcko_scaffold(mol: Chem.Mol) -> str:
    """Canonical SMILES of the Bemis-Murcko scaffold (ring systems, linkers and their exocyclic double bonds)."""
    return Chem.MolToSmiles(MurckoScaffold.GetScaffoldForMol(mol))


def _filter_reason(
    mol: Chem.Mol,
    scaffold: Chem.Mol | None,
    decoration_vocab,
    scaffold_vocab,
    max_heavy: int,
    min_rings: int,
    scaffold_heavy: tuple[int, int],
) -> str | None:
    if mol.GetNumHeavyAtoms() > max_heavy:
        return "too_large"
    if mol.GetRingInfo().NumRings() < min_rings:
        return "no_ring"
    if scaffold is None:
        return "scaffold_mismatch"
    if not scaffold_heavy[0] <= scaffold.GetNumHeavyAtoms() <= scaffold_heavy[1]:
        return "scaffold_size"
    if any(atom.GetSymbol() not in scaffold_vocab for atom in scaffold.GetAtoms()):
        return "scaffold_atom"
    match = mol.GetSubstructMatch(scaffold)
    if not match:  # the canonical scaffold SMILES re-perceives aromaticity or charges differently
        return "scaffold_mismatch"
    in_scaffold = np.zeros(mol.GetNumAtoms(), dtype=bool)
    in_scaffold[list(match)] = True
    for atom in mol.GetAtoms():
        if not in_scaffold[atom.GetIdx()] and (atom.GetSymbol() not in decoration_vocab or atom.GetFormalCharge()):
            return "decoration_atom"
    for bond in mol.GetBonds():
        outside = not (in_scaffold[bond.GetBeginAtomIdx()] and in_scaffold[bond.GetEndAtomIdx()])
        if outside and bond.GetBondType() not in (Chem.BondType.SINGLE, Chem.BondType.DOUBLE, Chem.BondType.TRIPLE):
            return "decoration_bond"
    return None


def prepare_corpus(
    smiles: list[str],
    decoration_vocab: tuple[str, ...] = DECORATION_VOCAB,
    scaffold_vocab: tuple[str, ...] = SCAFFOLD_VOCAB,
    max_heavy: int = 35,
    min_rings: int = 1,
    scaffold_heavy: tuple[int, int] = (6, 20),
) -> tuple[pd.DataFrame, dict[str, int]]:
    """Standardise, deduplicate and filter molecules into (molecule, scaffold) pairs the environment can build.

    Returns the kept rows (smiles, scaffold, n_heavy, n_scaffold_heavy, n_decoration) and counts: one per
    entry of DROP_REASONS, plus input, kept and kept_no_decoration (molecules equal to their scaffold, kept
    as examples of stopping at once).
    """
    counts = dict.fromkeys(DROP_REASONS, 0) | {"input": len(smiles), "kept": 0, "kept_no_decoration": 0}
    seen: set[str] = set()
    rows = []
    for raw in smiles:
        mol = standardise(raw)
        if mol is None:
            counts["parse_error"] += 1
            continue
        canonical = Chem.MolToSmiles(mol)
        if canonical in seen:
            counts["duplicate"] += 1
            continue
        seen.add(canonical)
        with rdBase.BlockLogs():  # atom order and perception as any later reader of the SMILES sees them
            mol = Chem.MolFromSmiles(canonical)
        if mol is None:
            counts["parse_error"] += 1
            continue
        scaffold_smiles = murcko_scaffold(mol)
        with rdBase.BlockLogs():  # a few charged dyes give scaffolds RDKit cannot kekulise on their own
            scaffold = Chem.MolFromSmiles(scaffold_smiles)
        reason = _filter_reason(mol, scaffold, decoration_vocab, scaffold_vocab, max_heavy, min_rings, scaffold_heavy)
        if reason is not None:
            counts[reason] += 1
            continue
        n_heavy, n_scaffold = mol.GetNumHeavyAtoms(), scaffold.GetNumHeavyAtoms()
        rows.append((canonical, scaffold_smiles, n_heavy, n_scaffold, n_heavy - n_scaffold))
    frame = pd.DataFrame(rows, columns=["smiles", "scaffold", "n_heavy", "n_scaffold_heavy", "n_decoration"])
    counts["kept"] = len(frame)
    counts["kept_no_decoration"] = int((frame["n_decoration"] == 0).sum())
    return frame, counts


def scaffold_fingerprints(smiles: list[str]) -> list[DataStructs.ExplicitBitVect]:
    """ECFP4 bit vectors (Morgan radius 2, 2048 bits), the fingerprint of the paper's scaffold clustering."""
    generator = rdFingerprintGenerator.GetMorganGenerator(radius=2, fpSize=2048)
    mols = [Chem.MolFromSmiles(s) for s in smiles]
    bad = [s for s, m in zip(smiles, mols) if m is None]
    if bad:
        raise ValueError(f"cannot fingerprint unparseable scaffold SMILES {bad[:3]}")
    return [generator.GetFingerprint(m) for m in mols]


def butina_clusters(fingerprints: list, cutoff: float) -> np.ndarray:
    """Cluster id per fingerprint from Butina clustering at Tanimoto distance `cutoff` (0 = largest cluster).

    Exactly RDKit's Butina.ClusterData (isDistData, no reordering): centroids in order of decreasing neighbour
    count (a point counts itself; ties to the higher index), each taking its unassigned neighbours, then the points
    without neighbours as singletons. Only the pairs within the cutoff are kept, not the n(n-1)/2 distances (RDKit
    also expands those to an n x n float64 matrix), so memory grows with the neighbours: the paper-scale split
    clusters every scaffold of ChEMBL 35, where the full matrix would take hundreds of GB. Time is n^2/2 Tanimoto
    similarities, one row at a time."""
    n = len(fingerprints)
    lower = [np.empty(0, dtype=np.int32)]  # per point i, its neighbours j < i
    for i in range(1, n):
        distances = 1.0 - np.asarray(DataStructs.BulkTanimotoSimilarity(fingerprints[i], fingerprints[:i]))
        lower.append(np.flatnonzero(distances <= cutoff).astype(np.int32))
    below = np.concatenate(lower)
    above = np.repeat(np.arange(n, dtype=np.int32), [len(near) for near in lower])
    del lower
    rows = np.concatenate([above, below])  # both directions of every pair within the cutoff
    neighbours = np.concatenate([below, above])[np.argsort(rows, kind="stable")]
    degree = np.bincount(rows, minlength=n)
    del rows, below, above
    starts = np.concatenate([[0], np.cumsum(degree)])
    labels = np.full(n, -1, dtype=np.int64)
    cluster_id = 0
    # RDKit's order: most neighbours first (a point counts itself), ties to the higher index; a centroid takes its
    # unassigned neighbours (which ones, not in which order, decides the labels)
    for point in np.lexsort((-np.arange(n), -degree)):
        if labels[point] >= 0:
            continue
        members = neighbours[starts[point] : starts[point + 1]]
        labels[members[labels[members] < 0]] = cluster_id
        labels[point] = cluster_id
        cluster_id += 1
    return labels


def _assign_clusters(sizes: np.ndarray, order: np.ndarray, fractions: tuple[float, float, float]) -> np.ndarray:
    """Split index (0, 1, 2) per cluster: clusters in `order` fill train, then val, then test to the fractions."""
    targets = np.cumsum(fractions)[:2] * sizes.sum()
    assigned = np.empty(len(sizes), dtype=np.int64)
    filled = 0
    for cluster in order:
        assigned[cluster] = int(np.searchsorted(targets, filled, side="right"))
        filled += sizes[cluster]
    # a split left empty (large clusters overshooting) takes the smallest cluster of the split with most clusters
    for empty in range(3):
        if not (assigned == empty).any():
            donor = np.bincount(assigned, minlength=3).argmax()
            candidates = np.flatnonzero(assigned == donor)
            assigned[candidates[np.argmin(sizes[candidates])]] = empty
    return assigned


def split_scaffolds(
    scaffolds: list[str],
    cutoff: float = 0.6,
    fractions: tuple[float, float, float] = (0.7, 0.1, 0.2),
    seed: int = 0,
) -> pd.DataFrame:
    """Cluster split of unique scaffolds (the paper's, made on ZINC): Butina on ECFP4, whole clusters to
    train/val/test.

    Test scaffolds then come from clusters never seen in training (out-of-distribution constraints).
    Returns one row per unique scaffold (sorted): scaffold, cluster, split.
    """
    fractions = tuple(float(f) for f in fractions)
    if len(fractions) != 3 or min(fractions) <= 0 or not np.isclose(sum(fractions), 1.0):
        raise ValueError(f"fractions must be three positive numbers summing to 1, got {fractions}")
    unique = sorted(set(scaffolds))
    labels = butina_clusters(scaffold_fingerprints(unique), cutoff)
    n_clusters = int(labels.max()) + 1 if len(unique) else 0
    if n_clusters < 3:
        raise ValueError(
            f"{len(unique)} scaffolds form {n_clusters} clusters at cutoff {cutoff}: need 3 for "
            "non-empty train/val/test splits"
        )
    sizes = np.bincount(labels, minlength=n_clusters)
    order = np.random.default_rng(seed).permutation(n_clusters)
    split_of_cluster = _assign_clusters(sizes, order, fractions)
    frame = pd.DataFrame({"scaffold": unique, "cluster": labels, "split": np.asarray(SPLITS)[split_of_cluster[labels]]})
    check_no_leak(frame)
    return frame


def check_no_leak(split_frame: pd.DataFrame) -> None:
    """Raise ValueError if a scaffold or a cluster sits in two splits, or a split is empty."""
    splits_per_scaffold = split_frame.groupby("scaffold")["split"].nunique()
    leaked = splits_per_scaffold.index[splits_per_scaffold > 1].tolist()
    if leaked:
        raise ValueError(f"{len(leaked)} scaffold(s) in more than one split: {leaked[:5]}")
    if "cluster" in split_frame:
        splits_per_cluster = split_frame.groupby("cluster")["split"].nunique()
        clusters = splits_per_cluster.index[splits_per_cluster > 1].tolist()
        if clusters:
            examples = split_frame.loc[split_frame["cluster"].isin(clusters[:3]), "scaffold"].tolist()[:5]
            raise ValueError(f"cluster(s) {clusters[:5]} span more than one split (scaffolds {examples})")
    empty = [s for s in SPLITS if not (split_frame["split"] == s).any()]
    if empty:
        raise ValueError(f"split(s) {empty} are empty")
