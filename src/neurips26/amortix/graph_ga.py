"""Scaffold-constrained graph genetic algorithm: the per-scaffold instance-optimisation baseline.

Jensen's Graph GA (Chem. Sci. 2019) as run in PMO (Gao et al. 2022, `wenhao-gao/mol_opt` main/graph_ga):
parents are drawn in proportion to their score, each child is a crossover followed (with probability
`mutation_rate`) by one mutation, and the best `population_size` molecules survive. Here every edit
touches only decoration atoms, the atoms outside the scaffold's substructure match, so the scaffold's
atoms and bonds are never modified (as in the policy's action space). Offspring that fail to sanitize, lose
the scaffold, use an element outside the vocabulary, exceed `max_heavy` or were seen before are dropped before
the oracle sees them: every oracle call is spent on a new valid molecule.

Mutations (registry MUTATIONS): append an atom, delete a terminal atom, change an element, change a
bond order, insert an atom into a bond, and close a five- or six-membered ring (mol_opt's add_ring).
Crossover swaps whole side chains between two decorations of the same scaffold.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import cache
from time import perf_counter

import numpy as np
import pandas as pd
from rdkit import Chem, rdBase

DEFAULT_VOCAB = ("C", "N", "O", "F", "S", "Cl")
# the operators' shared signature: (molecule, scaffold match, generator, decoration vocabulary)
Mol, Match, Generator, Vocab = Chem.Mol, Sequence[int], np.random.Generator, Sequence[str]
# bond budget of a neutral decoration atom (as in environment.MAX_VALENCE: S may be hypervalent)
MAX_VALENCE = {"C": 4, "N": 3, "O": 2, "F": 1, "S": 6, "Cl": 1, "Br": 1, "I": 1, "P": 5}
BOND_TYPES = {1: Chem.BondType.SINGLE, 2: Chem.BondType.DOUBLE, 3: Chem.BondType.TRIPLE}
BOND_ORDERS = {bond_type: order for order, bond_type in BOND_TYPES.items()}
# mol_opt's append_atom draws single/double/triple with these weights
ORDER_WEIGHTS = np.array([0.60, 0.35, 0.05])
RING_CLOSURE_DISTANCES = (4, 5)  # closing a path of 4 or 5 bonds makes a five- or six-membered ring
MUTATION_TRIES = 10  # as mol_opt: try up to ten operators before giving up on a mutation

_PERIODIC_TABLE = Chem.GetPeriodicTable()


@cache
def _element(symbol: str) -> tuple[int, int]:
    """Atomic number and bond budget of a vocabulary element; ValueError if RDKit does not know it."""
    with rdBase.BlockLogs():
        probe = Chem.MolFromSmiles(f"[{symbol}]")
    if probe is None or probe.GetNumAtoms() != 1:
        raise ValueError(f"unknown element in vocabulary: {symbol!r}")
    z = probe.GetAtomWithIdx(0).GetAtomicNum()
    return z, MAX_VALENCE.get(symbol, _PERIODIC_TABLE.GetDefaultValence(z))


def _elements(vocab: Sequence[str]) -> list[tuple[int, int]]:
    if len(vocab) == 0:
        raise ValueError("the decoration vocabulary is empty")
    return [_element(symbol) for symbol in vocab]


def decoration_atoms(mol: Chem.Mol, scaffold: Chem.Mol) -> set[int]:
    """Indices of the atoms of `mol` outside the first substructure match of `scaffold`."""
    match = mol.GetSubstructMatch(scaffold)
    if not match:
        raise ValueError(f"scaffold {Chem.MolToSmiles(scaffold)} is not a substructure of {Chem.MolToSmiles(mol)}")
    return set(range(mol.GetNumAtoms())) - set(match)


# ---------------------------------------------------------------------------------------------------
# Bookkeeping shared by the operators


# RDKit's GetAtoms()/GetBonds() sequences cost about twice as much per item as indexing; these loops are hot
def _atoms(mol: Chem.Mol) -> list[Chem.Atom]:
    return [mol.GetAtomWithIdx(i) for i in range(mol.GetNumAtoms())]


def _bonds(mol: Chem.Mol) -> list[Chem.Bond]:
    return [mol.GetBondWithIdx(i) for i in range(mol.GetNumBonds())]


def _take_bond(atom: Chem.Atom, order: int) -> None:
    """`atom` gains a bond of `order`: an atom whose hydrogens are explicit ([nH], [NH+]) gives them up."""
    n_explicit = atom.GetNumExplicitHs()
    if n_explicit:
        atom.SetNumExplicitHs(max(0, n_explicit - order))


def _release_bond(atom: Chem.Atom, order: int) -> None:
    """`atom` loses a bond of `order`: an atom without implicit hydrogens gets them back explicitly, and so
    does an aromatic heteroatom (RDKit cannot infer the H of a pyrrole-type n, so Cn1cccc1 -> [nH]1cccc1)."""
    if atom.GetNoImplicit() or (atom.GetIsAromatic() and atom.GetAtomicNum() != 6):
        atom.SetNumExplicitHs(atom.GetNumExplicitHs() + order)


def _draw_order(rng: np.random.Generator, max_order: int) -> int:
    weights = ORDER_WEIGHTS[:max_order] / ORDER_WEIGHTS[:max_order].sum()
    return int(rng.choice(max_order, p=weights)) + 1


def _pick(rng: np.random.Generator, items: Sequence):
    return items[int(rng.integers(len(items)))]


def _scaffold_intact(
    before: Chem.Mol, after: Chem.Mol, match_before: Sequence[int], match_after: Sequence[int]
) -> bool:
    """Whether the matched atoms kept element, charge and aromaticity and the bonds among them kept their type.

    Substructure matching with a molecule query compares exactly these, so the scaffold still matches
    `after` through `match_after`; sanitization can only change them through aromaticity perception.
    """
    for i, j in zip(match_before, match_after):
        a, b = before.GetAtomWithIdx(i), after.GetAtomWithIdx(j)
        if (
            a.GetAtomicNum() != b.GetAtomicNum()
            or a.GetFormalCharge() != b.GetFormalCharge()
            or a.GetIsAromatic() != b.GetIsAromatic()
        ):
            return False
    position = {atom: q for q, atom in enumerate(match_before)}
    for bond in _bonds(before):
        q = position.get(bond.GetBeginAtomIdx())
        r = position.get(bond.GetEndAtomIdx())
        if q is None or r is None:
            continue
        twin = after.GetBondBetweenAtoms(match_after[q], match_after[r])
        if twin is None or twin.GetBondType() != bond.GetBondType():
            return False
    return True


def _finish(
    edited: Chem.RWMol, before: Chem.Mol, match_before: Sequence[int], match_after: Sequence[int]
) -> Chem.Mol | None:
    mol = edited.GetMol()
    try:
        Chem.SanitizeMol(mol)
    except Chem.MolSanitizeException:
        return None
    return mol if _scaffold_intact(before, mol, match_before, match_after) else None


def _decoration_bonds(mol: Chem.Mol, match: Sequence[int]) -> list[Chem.Bond]:
    """Non-aromatic single/double/triple bonds with at least one end outside the scaffold match."""
    in_scaffold = set(match)
    return [
        bond
        for bond in _bonds(mol)
        if bond.GetBondType() in BOND_ORDERS
        and not (bond.GetBeginAtomIdx() in in_scaffold and bond.GetEndAtomIdx() in in_scaffold)
    ]


def _bond_sum(atom: Chem.Atom) -> int:
    """Lower bound on the bond valence of `atom` (aromatic bonds count 1; sanitization checks the rest)."""
    return sum(BOND_ORDERS.get(bond.GetBondType(), 1) for bond in atom.GetBonds())


# ---------------------------------------------------------------------------------------------------
# Mutation operators: (mol, scaffold match, rng, vocab) -> a new sanitized Mol that still contains the
# scaffold at the same atoms, or None when the drawn edit is impossible.


def append_atom(mol: Mol, match: Match, rng: Generator, vocab: Vocab = DEFAULT_VOCAB) -> Mol | None:
    """Bond a new vocabulary atom to any atom (scaffold or decoration) that has a free hydrogen."""
    hosts = [atom.GetIdx() for atom in _atoms(mol) if atom.GetTotalNumHs() > 0]
    if not hosts:
        return None
    host = mol.GetAtomWithIdx(_pick(rng, hosts))
    z, valence = _element(_pick(rng, vocab))
    # an exocyclic double bond on an aromatic atom would dearomatize its ring
    max_order = 1 if host.GetIsAromatic() else min(host.GetTotalNumHs(), valence, 3)
    order = _draw_order(rng, max_order)
    edited = Chem.RWMol(mol)
    new = edited.AddAtom(Chem.Atom(z))
    edited.AddBond(host.GetIdx(), new, BOND_TYPES[order])
    _take_bond(edited.GetAtomWithIdx(host.GetIdx()), order)
    return _finish(edited, mol, match, match)


def delete_atom(mol: Mol, match: Match, rng: Generator, vocab: Vocab = DEFAULT_VOCAB) -> Mol | None:
    """Remove a terminal (degree-1) decoration atom; its neighbour takes the hydrogens back."""
    in_scaffold = set(match)
    leaves = [atom.GetIdx() for atom in _atoms(mol) if atom.GetIdx() not in in_scaffold and atom.GetDegree() == 1]
    if not leaves:
        return None
    leaf = _pick(rng, leaves)
    bond = mol.GetAtomWithIdx(leaf).GetBonds()[0]
    if bond.GetBondType() not in BOND_ORDERS:
        return None
    edited = Chem.RWMol(mol)
    _release_bond(edited.GetAtomWithIdx(bond.GetOtherAtomIdx(leaf)), BOND_ORDERS[bond.GetBondType()])
    edited.RemoveAtom(leaf)
    shifted = tuple(i - (i > leaf) for i in match)  # RemoveAtom renumbers the atoms after `leaf`
    return _finish(edited, mol, match, shifted)


def change_atom(mol: Mol, match: Match, rng: Generator, vocab: Vocab = DEFAULT_VOCAB) -> Mol | None:
    """Turn a decoration atom into another vocabulary element whose valence fits its bonds."""
    in_scaffold = set(match)
    candidates = [atom.GetIdx() for atom in _atoms(mol) if atom.GetIdx() not in in_scaffold]
    if not candidates:
        return None
    atom = mol.GetAtomWithIdx(_pick(rng, candidates))
    needed = _bond_sum(atom)
    options = [(z, valence) for z, valence in _elements(vocab) if z != atom.GetAtomicNum() and valence >= needed]
    if not options:
        return None
    z, _ = _pick(rng, options)
    edited = Chem.RWMol(mol)
    changed = edited.GetAtomWithIdx(atom.GetIdx())
    changed.SetAtomicNum(z)
    changed.SetFormalCharge(0)
    changed.SetNumExplicitHs(0)
    changed.SetNoImplicit(False)
    return _finish(edited, mol, match, match)


def change_bond_order(mol: Mol, match: Match, rng: Generator, vocab: Vocab = DEFAULT_VOCAB) -> Mol | None:
    """Set a decoration bond to another order in {1, 2, 3} that both ends' hydrogens allow."""
    bonds = _decoration_bonds(mol, match)
    if not bonds:
        return None
    bond = _pick(rng, bonds)
    ends = (bond.GetBeginAtom(), bond.GetEndAtom())
    order = BOND_ORDERS[bond.GetBondType()]
    options = []
    for new_order in (1, 2, 3):
        delta = new_order - order
        if delta == 0 or (new_order == 3 and bond.IsInRing()):
            continue
        if delta > 0 and any(atom.GetIsAromatic() or atom.GetTotalNumHs() < delta for atom in ends):
            continue
        options.append(new_order)
    if not options:
        return None
    new_order = _pick(rng, options)
    delta = new_order - order
    edited = Chem.RWMol(mol)
    edited.GetBondWithIdx(bond.GetIdx()).SetBondType(BOND_TYPES[new_order])
    for atom in ends:
        if delta > 0:
            _take_bond(edited.GetAtomWithIdx(atom.GetIdx()), delta)
        else:
            _release_bond(edited.GetAtomWithIdx(atom.GetIdx()), -delta)
    return _finish(edited, mol, match, match)


def insert_atom(mol: Mol, match: Match, rng: Generator, vocab: Vocab = DEFAULT_VOCAB) -> Mol | None:
    """Put a new vocabulary atom X into a decoration bond A~B: A keeps the bond order to X, X-B is single."""
    bonds = _decoration_bonds(mol, match)
    if not bonds:
        return None
    bond = _pick(rng, bonds)
    order = BOND_ORDERS[bond.GetBondType()]
    options = [z for z, valence in _elements(vocab) if valence >= order + 1]
    if not options:
        return None
    z = _pick(rng, options)
    keeper, other = bond.GetBeginAtomIdx(), bond.GetEndAtomIdx()
    if rng.random() < 0.5:
        keeper, other = other, keeper
    edited = Chem.RWMol(mol)
    edited.RemoveBond(keeper, other)
    new = edited.AddAtom(Chem.Atom(z))
    edited.AddBond(keeper, new, BOND_TYPES[order])
    edited.AddBond(new, other, Chem.BondType.SINGLE)
    _release_bond(edited.GetAtomWithIdx(other), order - 1)
    return _finish(edited, mol, match, match)


def close_ring(mol: Mol, match: Match, rng: Generator, vocab: Vocab = DEFAULT_VOCAB) -> Mol | None:
    """Single bond between two non-aromatic atoms with a free hydrogen, 4 or 5 bonds apart, at least one
    of them decoration: a new five- or six-membered ring (mol_opt's add_ring; the AMORTIX environment's
    ring closure)."""
    in_scaffold = set(match)
    hosts = [atom.GetIdx() for atom in _atoms(mol) if atom.GetTotalNumHs() > 0 and not atom.GetIsAromatic()]
    if len(hosts) < 2:
        return None
    distance = Chem.GetDistanceMatrix(mol, force=True)  # never a matrix cached on a parent it was copied from
    pairs = [
        (i, j)
        for k, i in enumerate(hosts)
        for j in hosts[k + 1 :]
        if distance[i, j] in RING_CLOSURE_DISTANCES and not (i in in_scaffold and j in in_scaffold)
    ]
    if not pairs:
        return None
    i, j = _pick(rng, pairs)
    edited = Chem.RWMol(mol)
    edited.AddBond(i, j, Chem.BondType.SINGLE)
    _take_bond(edited.GetAtomWithIdx(i), 1)
    _take_bond(edited.GetAtomWithIdx(j), 1)
    return _finish(edited, mol, match, match)


MUTATIONS: dict[str, Callable[..., Chem.Mol | None]] = {
    "append_atom": append_atom,
    "delete_atom": delete_atom,
    "change_atom": change_atom,
    "change_bond_order": change_bond_order,
    "insert_atom": insert_atom,
    "close_ring": close_ring,
}


def mutate(mol: Mol, match: Match, rng: Generator, vocab: Vocab = DEFAULT_VOCAB) -> Mol | None:
    """One mutation by an operator drawn uniformly; up to MUTATION_TRIES draws before returning None."""
    operators = list(MUTATIONS.values())
    for _ in range(MUTATION_TRIES):
        child = _pick(rng, operators)(mol, match, rng, vocab)
        if child is not None:
            return child
    return None


# ---------------------------------------------------------------------------------------------------
# Crossover


def side_chains(mol: Chem.Mol, match: Sequence[int]) -> list[tuple[tuple[int, ...], frozenset[int]]]:
    """Connected components of the decoration atoms, each with the scaffold positions (indices into the
    scaffold query) it is bonded to."""
    return _side_chains(mol, match, _bonds(mol))


def _side_chains(
    mol: Chem.Mol, match: Sequence[int], bonds: list[Chem.Bond]
) -> list[tuple[tuple[int, ...], frozenset[int]]]:
    position = {atom: q for q, atom in enumerate(match)}
    neighbors: dict[int, list[int]] = {}
    for bond in bonds:
        u, v = bond.GetBeginAtomIdx(), bond.GetEndAtomIdx()
        neighbors.setdefault(u, []).append(v)
        neighbors.setdefault(v, []).append(u)
    unvisited = set(range(mol.GetNumAtoms())) - set(position)
    chains = []
    for start in sorted(unvisited):
        if start not in unvisited:
            continue
        unvisited.discard(start)
        component, anchors, frontier = [start], set(), [start]
        while frontier:
            for k in neighbors.get(frontier.pop(), ()):
                if k in position:
                    anchors.add(position[k])
                elif k in unvisited:
                    unvisited.discard(k)
                    component.append(k)
                    frontier.append(k)
        chains.append((tuple(sorted(component)), frozenset(anchors)))
    return chains


@dataclass(frozen=True)
class _Parent:
    """A molecule with what crossover needs of it, computed once per population member."""

    mol: Chem.Mol
    match: tuple[int, ...]
    bonds: list[Chem.Bond]
    chains: list[tuple[tuple[int, ...], frozenset[int]]]


def _as_parent(mol: Chem.Mol, scaffold: Chem.Mol) -> _Parent:
    match = mol.GetSubstructMatch(scaffold)
    if not match:
        raise ValueError("both parents must contain the scaffold")
    bonds = _bonds(mol)
    return _Parent(mol, match, bonds, _side_chains(mol, match, bonds))


def crossover(parent_a: Chem.Mol, parent_b: Chem.Mol, scaffold: Chem.Mol, rng: np.random.Generator) -> Chem.Mol | None:
    """A child with the scaffold and, at each attachment point, the side chains of parent A or of parent B.

    Side chains are mapped onto the scaffold through each parent's substructure match. Attachment points
    joined by one side chain (a chain bonded to two scaffold atoms) are inherited together, so every
    scaffold atom keeps exactly the substituents (and hydrogens) it had in the parent it came from.
    Returns None if the assembled child fails to sanitize or no longer contains the scaffold.
    """
    return _crossover(_as_parent(parent_a, scaffold), _as_parent(parent_b, scaffold), scaffold, rng)


def _crossover(parent_a: _Parent, parent_b: _Parent, scaffold: Chem.Mol, rng: np.random.Generator) -> Chem.Mol | None:
    if parent_a is parent_b:
        return Chem.Mol(parent_a.mol)
    parents = (parent_a, parent_b)
    chains = (parent_a.chains, parent_b.chains)
    n_positions = scaffold.GetNumAtoms()
    root = list(range(n_positions))

    def find(q: int) -> int:
        while root[q] != q:
            root[q] = root[root[q]]
            q = root[q]
        return q

    for _, anchors in chains[0] + chains[1]:
        ordered = sorted(anchors)
        for q in ordered[1:]:
            root[find(q)] = find(ordered[0])
    attached = sorted({find(q) for parent_chains in chains for _, anchors in parent_chains for q in anchors})
    donor = {group: int(rng.random() < 0.5) for group in attached}  # 0: parent A, 1: parent B
    sources = set(donor.values()) or {0}
    if len(sources) == 1 and all(anchors for _, anchors in chains[min(sources)]):
        return Chem.Mol(parents[min(sources)].mol)  # every side chain from one parent: that parent itself
    donor_of_position = [donor.get(find(q), 0) for q in range(n_positions)]

    child = Chem.RWMol()
    for q in range(n_positions):
        parent = parents[donor_of_position[q]]
        child.AddAtom(Chem.Atom(parent.mol.GetAtomWithIdx(parent.match[q])))
    position_a = {atom: q for q, atom in enumerate(parent_a.match)}
    for bond in parent_a.bonds:
        q, r = position_a.get(bond.GetBeginAtomIdx()), position_a.get(bond.GetEndAtomIdx())
        if q is not None and r is not None:
            _copy_bond(child, bond, q, r)
    for d, parent in enumerate(parents):
        new_index = {atom: q for q, atom in enumerate(parent.match)}
        for atoms, anchors in parent.chains:
            # a fragment bonded to no scaffold atom is not a side chain and is dropped
            if anchors and donor[find(min(anchors))] == d:
                for atom in atoms:
                    new_index[atom] = child.AddAtom(Chem.Atom(parent.mol.GetAtomWithIdx(atom)))
        inherited = set(new_index) - set(parent.match)
        for bond in parent.bonds:
            u, v = bond.GetBeginAtomIdx(), bond.GetEndAtomIdx()
            if u in inherited or v in inherited:
                _copy_bond(child, bond, new_index[u], new_index[v])
    mol = child.GetMol()
    try:
        Chem.SanitizeMol(mol)
    except Chem.MolSanitizeException:
        return None
    return mol if mol.HasSubstructMatch(scaffold) else None


def _copy_bond(target: Chem.RWMol, bond: Chem.Bond, u: int, v: int) -> None:
    target.AddBond(u, v, bond.GetBondType())
    target.GetBondBetweenAtoms(u, v).SetIsAromatic(bond.GetIsAromatic())


# ---------------------------------------------------------------------------------------------------
# The genetic algorithm


def _parse_scaffold(scaffold_smiles: str) -> Chem.Mol:
    with rdBase.BlockLogs():
        scaffold = Chem.MolFromSmiles(scaffold_smiles) if isinstance(scaffold_smiles, str) else None
    if scaffold is None or scaffold.GetNumAtoms() == 0:
        raise ValueError(f"invalid scaffold SMILES: {scaffold_smiles!r}")
    return scaffold


def _admit(
    smiles: str, scaffold: Chem.Mol, vocab_z: frozenset[int], max_heavy: int
) -> tuple[str, Chem.Mol, tuple[int, ...]] | None:
    """(canonical SMILES, parsed Mol, scaffold match) of a valid molecule written as `smiles`, or None.

    Valid: parses (so it sanitizes), is one connected molecule of at most `max_heavy` heavy atoms,
    contains the scaffold, and its decoration atoms are neutral, non-radical vocabulary elements.
    """
    parsed = Chem.MolFromSmiles(smiles)
    if parsed is None or parsed.GetNumHeavyAtoms() > max_heavy or len(Chem.GetMolFrags(parsed)) != 1:
        return None
    match = parsed.GetSubstructMatch(scaffold)
    if not match:
        return None
    in_scaffold = set(match)
    for atom in _atoms(parsed):
        if atom.GetIdx() not in in_scaffold and (
            atom.GetAtomicNum() not in vocab_z or atom.GetFormalCharge() != 0 or atom.GetNumRadicalElectrons() != 0
        ):
            return None
    return Chem.MolToSmiles(parsed), parsed, match


def _score(oracle: Callable[[list[Chem.Mol]], np.ndarray], mols: list[Chem.Mol]) -> np.ndarray:
    scores = np.asarray(oracle(mols), dtype=float)
    if scores.shape != (len(mols),):
        raise ValueError(f"oracle returned shape {scores.shape} for {len(mols)} molecules")
    if not np.all(np.isfinite(scores)):
        raise ValueError("oracle returned a non-finite score")
    return scores


def _selection_probabilities(scores: np.ndarray) -> np.ndarray:
    """Score-proportional (mol_opt's make_mating_pool); negative scores are shifted to weight zero."""
    weights = scores - min(0.0, float(scores.min()))
    total = weights.sum()
    return weights / total if total > 0 else np.full(len(scores), 1.0 / len(scores))


def run_constrained_ga(
    scaffold_smiles: str,
    initial_smiles: list[str],
    oracle: Callable[[list[Chem.Mol]], np.ndarray],
    budget: int,
    population_size: int = 16,
    offspring_size: int = 16,
    mutation_rate: float = 0.5,
    vocab: Sequence[str] = DEFAULT_VOCAB,
    max_heavy: int = 35,
    seed: int = 0,
    max_attempts_factor: int = 50,
) -> pd.DataFrame:
    """Optimize decorations of one scaffold with at most `budget` oracle calls (one call = one molecule).

    Generation 0 scores the valid, deduplicated `initial_smiles` (stereochemistry removed), or the bare
    scaffold if none is valid. Each later generation draws a mating pool of `population_size` in
    proportion to score, makes up to `offspring_size` new valid molecules (crossover, then a mutation
    with probability `mutation_rate`; at most `max_attempts_factor * offspring_size` attempts), scores
    them and keeps the best `population_size` of parents and offspring. The last generation is cut to
    the remaining budget; the run stops early when a generation yields no new valid molecule.

    Returns one row per oracle call, in call order: call (1-based), smiles (canonical), score,
    generation. `attrs["stop"]` is "budget" or "exhausted", `attrs["attempts"]` the offspring attempts.
    """
    if not isinstance(budget, (int, np.integer)) or budget < 1:
        raise ValueError(f"budget must be a positive integer, got {budget!r}")
    if population_size < 1 or offspring_size < 1 or max_attempts_factor < 1:
        raise ValueError("population_size, offspring_size and max_attempts_factor must be >= 1")
    if not 0.0 <= mutation_rate <= 1.0:
        raise ValueError(f"mutation_rate must lie in [0, 1], got {mutation_rate}")
    scaffold = _parse_scaffold(scaffold_smiles)
    vocab = tuple(vocab)
    vocab_z = frozenset(z for z, _ in _elements(vocab))
    rng = np.random.default_rng(seed)

    with rdBase.BlockLogs():
        # SMILES strings already written: those of scored molecules and of every rejected or duplicate
        # candidate (a string fixes the molecule, so a string seen once needs no second look)
        tried: set[str] = set()

        def admit_new(mol: Chem.Mol | None) -> tuple[str, Chem.Mol, tuple[int, ...]] | None:
            if mol is None:
                return None
            written = Chem.MolToSmiles(mol)
            if written in tried:
                return None
            tried.add(written)
            admitted = _admit(written, scaffold, vocab_z, max_heavy)
            if admitted is None or (admitted[0] != written and admitted[0] in tried):
                return None
            tried.add(admitted[0])
            return admitted

        start = []
        for smiles in initial_smiles:
            if len(start) == budget:
                break
            mol = Chem.MolFromSmiles(smiles) if isinstance(smiles, str) else None
            if mol is not None:
                Chem.RemoveStereochemistry(mol)
                admitted = admit_new(mol)
                if admitted is not None:
                    start.append(admitted)
        if not start:
            bare = admit_new(Chem.Mol(scaffold))
            if bare is None:
                raise ValueError(
                    f"the bare scaffold {scaffold_smiles!r} is not a valid start "
                    f"(more than max_heavy={max_heavy} heavy atoms?)"
                )
            start = [bare]

        rows: list[tuple[int, str, float, int]] = []
        population: list[tuple[float, _Parent]] = []

        def evaluate(batch: list[tuple[str, Chem.Mol, tuple[int, ...]]], generation: int) -> None:
            nonlocal population
            scores = _score(oracle, [mol for _, mol, _ in batch])
            for (smiles, mol, match), score in zip(batch, scores):
                rows.append((len(rows) + 1, smiles, float(score), generation))
                bonds = _bonds(mol)
                population.append((float(score), _Parent(mol, match, bonds, _side_chains(mol, match, bonds))))
            # stable sort: ties keep the earlier molecule
            population = sorted(population, key=lambda member: -member[0])[:population_size]

        evaluate(start, 0)
        generation, attempts, stop = 0, 0, "budget"
        while len(rows) < budget:
            generation += 1
            wanted = min(offspring_size, budget - len(rows))
            probabilities = _selection_probabilities(np.array([member[0] for member in population]))
            pool = rng.choice(len(population), size=population_size, p=probabilities)
            offspring: list[tuple[str, Chem.Mol, tuple[int, ...]]] = []
            for _ in range(max_attempts_factor * offspring_size):
                if len(offspring) == wanted:
                    break
                attempts += 1
                parent_a = population[pool[rng.integers(len(pool))]]
                parent_b = population[pool[rng.integers(len(pool))]]
                child = _crossover(parent_a[1], parent_b[1], scaffold, rng)
                if child is not None and rng.random() < mutation_rate:
                    child = mutate(child, child.GetSubstructMatch(scaffold), rng, vocab)
                admitted = admit_new(child)
                if admitted is not None:
                    offspring.append(admitted)
            if not offspring:
                stop = "exhausted"
                break
            evaluate(offspring, generation)

    table = pd.DataFrame(rows, columns=["call", "smiles", "score", "generation"])
    table.attrs.update(stop=stop, attempts=attempts)
    return table


def run_on_scaffolds(
    samples: pd.DataFrame,
    scaffolds: list[str],
    oracle,
    spec: dict,
    vocab: Sequence[str],
    max_heavy: int,
    seed: int,
    log=None,
) -> pd.DataFrame:
    """The graph GA on each scaffold (seed + its index), started from the first `spec['population']` distinct
    valid samples of the pretrained policy for it, with `spec['budget']` oracle calls; every call in order, with
    the scaffold and the calls per second of its run."""
    frames = []
    for index, scaffold in enumerate(scaffolds):
        pool = samples[(samples["scaffold"] == scaffold) & (samples["mode"] == "sample") & samples["valid"]]
        start = perf_counter()
        calls = run_constrained_ga(
            scaffold,
            pool["smiles"].drop_duplicates().head(spec["population"]).tolist(),
            oracle,
            spec["budget"],
            population_size=spec["population"],
            offspring_size=spec["offspring"],
            vocab=vocab,
            max_heavy=max_heavy,
            seed=seed + index,
        )
        seconds = perf_counter() - start
        frames.append(calls.assign(scaffold=scaffold, calls_per_second=len(calls) / seconds))
        if log is not None:
            log.info(
                "%s: %d calls in %.1f s (%.0f per second), best %.3f (%s)",
                scaffold,
                len(calls),
                seconds,
                len(calls) / seconds,
                calls["score"].max(),
                calls.attrs.get("stop"),
            )
    return pd.concat(frames, ignore_index=True)
