"""Scaffold decoration as a sequence of masked graph edits (GraphXForm's action hierarchy, arXiv:2411.01667).

A state is a scaffold (never modified) plus the atoms and bonds added so far. One action is
  level 1: STOP, or an existing atom with a free hydrogen to build on;
  level 2: a new atom of a vocabulary element, or a ring closure to an existing atom;
  level 3: the bond order (1, 2 or 3).
Every choice is masked by valence, so only chemically possible edits can be sampled. The molecule is
sanitised by RDKit once, at the end; scaffold retention is then verified by substructure match.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from rdkit import Chem

from neurips26.amortix.experiment import MAX_VALENCE, EnvConfig  # noqa: F401 (re-exported)
from neurips26.amortix.scaffold_check import check_scaffold_smiles

BOND_TYPES = {1: Chem.BondType.SINGLE, 2: Chem.BondType.DOUBLE, 3: Chem.BondType.TRIPLE}
BOND_CODE = {Chem.BondType.SINGLE: 1, Chem.BondType.DOUBLE: 2, Chem.BondType.TRIPLE: 3, Chem.BondType.AROMATIC: 4}
STOP = -1
FAR = 64  # distance code between atoms in different components (never used: the graph stays connected)


@dataclass(frozen=True)
class Scaffold:
    """A checked scaffold: its RDKit molecule (the substructure query) and the arrays a state starts from."""

    smiles: str
    mol: Chem.Mol
    elements: tuple[str, ...]
    charges: np.ndarray
    aromatic: np.ndarray
    hydrogens: np.ndarray
    bonds: np.ndarray
    distances: np.ndarray

    @property
    def n_atoms(self) -> int:
        return len(self.elements)


def make_scaffold(smiles: str, config: EnvConfig) -> Scaffold:
    """Parse and check a scaffold; errors name the SMILES and what is wrong with it."""
    mol = check_scaffold_smiles(smiles, config.scaffold_vocab, config.max_atoms)
    elements = tuple(atom.GetSymbol() for atom in mol.GetAtoms())
    hydrogens = np.array([atom.GetTotalNumHs() for atom in mol.GetAtoms()], dtype=np.int16)
    n = mol.GetNumAtoms()
    bonds = np.zeros((n, n), dtype=np.int8)
    for bond in mol.GetBonds():
        i, j = bond.GetBeginAtomIdx(), bond.GetEndAtomIdx()
        bonds[i, j] = bonds[j, i] = BOND_CODE.get(bond.GetBondType(), 1)
    distances = Chem.GetDistanceMatrix(mol)
    distances = np.where(distances > FAR, FAR, distances).astype(np.int16)
    return Scaffold(
        smiles,
        mol,
        elements,
        np.array([a.GetFormalCharge() for a in mol.GetAtoms()], dtype=np.int8),
        np.array([a.GetIsAromatic() for a in mol.GetAtoms()]),
        hydrogens,
        bonds,
        distances,
    )


@dataclass
class State:
    """The scaffold plus the decoration so far. Arrays are sized for the final molecule; `n` atoms are live."""

    scaffold: Scaffold
    config: EnvConfig
    elements: list[str]
    charges: np.ndarray
    aromatic: np.ndarray
    free: np.ndarray  # hydrogens left to replace (scaffold) or valence left (new atoms)
    branch: np.ndarray  # new atoms: the first atom of their side chain (-1 on the scaffold)
    bonds: np.ndarray
    distances: np.ndarray
    n: int
    actions: int = 0
    done: bool = False
    history: list[tuple[int, int, int]] = field(default_factory=list)

    @property
    def n_scaffold(self) -> int:
        return self.scaffold.n_atoms

    @property
    def n_new(self) -> int:
        return self.n - self.n_scaffold

    def is_scaffold(self) -> np.ndarray:
        return np.arange(self.n) < self.n_scaffold

    def degree(self) -> np.ndarray:
        return (self.bonds[: self.n, : self.n] > 0).sum(axis=1)


def initial_state(scaffold: Scaffold, config: EnvConfig) -> State:
    size = min(scaffold.n_atoms + config.max_new_atoms, config.max_atoms)
    n = scaffold.n_atoms
    bonds = np.zeros((size, size), dtype=np.int8)
    bonds[:n, :n] = scaffold.bonds
    distances = np.full((size, size), FAR, dtype=np.int16)
    distances[:n, :n] = scaffold.distances
    charges = np.zeros(size, dtype=np.int8)
    charges[:n] = scaffold.charges
    aromatic = np.zeros(size, dtype=bool)
    aromatic[:n] = scaffold.aromatic
    free = np.zeros(size, dtype=np.int16)
    free[:n] = scaffold.hydrogens
    branch = np.full(size, -1, dtype=np.int16)
    return State(scaffold, config, list(scaffold.elements), charges, aromatic, free, branch, bonds, distances, n)


def room_for_atom(state: State) -> bool:
    return state.n < len(state.free)


def ring_targets(state: State, atom: int) -> np.ndarray:
    """Atoms a ring closure from `atom` may bond to: atoms of the same side chain with free valence, not bonded
    yet, closing a ring of an allowed size. Rings stay inside one side chain (each hangs from the scaffold by a
    single bond), so they never touch the scaffold: a ring fused onto it can change its aromaticity (a benzene
    turned quinoid no longer matches the scaffold), and retention is checked by substructure match."""
    n = state.n
    if atom < state.n_scaffold:
        return np.zeros(n, dtype=bool)
    ok = (state.branch[:n] == state.branch[atom]) & (state.free[:n] > 0)
    ok &= state.bonds[atom, :n] == 0
    ok[atom] = False
    ok &= np.isin(state.distances[atom, :n] + 1, state.config.ring_sizes)
    return ok


def level1_mask(state: State) -> np.ndarray:
    """[STOP, atom 0, ..., atom n-1]: STOP is always allowed; an atom needs a free hydrogen and somewhere to go."""
    mask = np.zeros(state.n + 1, dtype=bool)
    mask[0] = True
    if state.done or state.actions >= state.config.max_actions:
        return mask
    free = state.free[: state.n] > 0
    if room_for_atom(state):
        mask[1:] = free
    else:
        mask[1:] = [f and ring_targets(state, i).any() for i, f in enumerate(free)]
    return mask


def level2_mask(state: State, atom: int) -> np.ndarray:
    """[new atom of each decoration element, ring closure to atom 0..n-1] for an anchor atom."""
    vocab = len(state.config.decoration_vocab)
    mask = np.zeros(vocab + state.n, dtype=bool)
    mask[:vocab] = room_for_atom(state)
    mask[vocab:] = ring_targets(state, atom)
    return mask


def level3_mask(state: State, atom: int, target: int) -> np.ndarray:
    """Bond orders 1..3 that fit the anchor's free valence and the target's (a new atom's element budget).
    Bonds to the scaffold are single: a Bemis-Murcko scaffold keeps its exocyclic double bonds, so side chains
    always hang from it by single bonds, and a double bond onto a ring atom can change which rings RDKit
    perceives as aromatic (two exocyclic C= on a cyclohexadiene read as a benzene), breaking the match."""
    vocab = state.config.decoration_vocab
    budget = MAX_VALENCE[vocab[target]] if target < len(vocab) else int(state.free[target - len(vocab)])
    limit = min(int(state.free[atom]), budget, 1 if atom < state.n_scaffold else 3)
    return np.arange(1, 4) <= limit


def step(state: State, atom: int, target: int = 0, order: int = 1) -> None:
    """Apply one action in place. `atom` = STOP ends the episode; `target` < |vocab| adds a new atom of that
    element, otherwise closes a ring to atom target - |vocab|. Raises on a masked action."""
    if state.done:
        raise ValueError("the episode is over")
    if atom == STOP:
        state.done = True
        state.history.append((STOP, 0, 0))
        return
    if (
        not level1_mask(state)[atom + 1]
        or not level2_mask(state, atom)[target]
        or not level3_mask(state, atom, target)[order - 1]
    ):
        raise ValueError(f"masked action (atom {atom}, target {target}, order {order}) on {partial_smiles(state)}")
    vocab = state.config.decoration_vocab
    state.free[atom] -= order
    if target < len(vocab):
        new = state.n
        state.elements.append(vocab[target])
        state.free[new] = MAX_VALENCE[vocab[target]] - order
        state.branch[new] = new if atom < state.n_scaffold else state.branch[atom]
        state.bonds[atom, new] = state.bonds[new, atom] = order
        state.distances[new, :new] = state.distances[:new, new] = state.distances[atom, :new] + 1
        state.distances[new, new] = 0
        state.n += 1
    else:
        other = target - len(vocab)
        state.free[other] -= order
        state.bonds[atom, other] = state.bonds[other, atom] = order
        d = state.distances[: state.n, : state.n]
        via = np.minimum(d[:, atom, None] + 1 + d[None, other, :], d[:, other, None] + 1 + d[None, atom, :])
        state.distances[: state.n, : state.n] = np.minimum(d, via)
    state.actions += 1
    state.history.append((atom, target, order))
    if state.actions >= state.config.max_actions:
        state.done = True  # the action budget is spent: the episode ends as if STOP was chosen


def to_mol(state: State) -> Chem.RWMol:
    """The unsanitised molecule: the scaffold with hydrogens replaced where decorations attach, plus new atoms."""
    mol = Chem.RWMol(state.scaffold.mol)
    for i in range(state.n_scaffold):
        used = int(state.scaffold.hydrogens[i] - state.free[i])
        atom = mol.GetAtomWithIdx(i)
        if used and atom.GetNumExplicitHs():
            atom.SetNumExplicitHs(max(0, atom.GetNumExplicitHs() - used))  # [nH], [NH3+]: the H is explicit
    for element in state.elements[state.n_scaffold : state.n]:
        mol.AddAtom(Chem.Atom(element))
    rows, cols = np.nonzero(np.triu(state.bonds[: state.n, : state.n]))
    for i, j in zip(rows.tolist(), cols.tolist()):
        if i >= state.n_scaffold or j >= state.n_scaffold:
            mol.AddBond(i, j, BOND_TYPES[int(state.bonds[i, j])])
    return mol


def partial_smiles(state: State) -> str:
    try:
        return Chem.MolToSmiles(to_mol(state), sanitize=False)
    except Exception:  # noqa: BLE001 - only for error messages
        return f"<state on {state.scaffold.smiles}>"


@dataclass(frozen=True)
class Outcome:
    smiles: str | None
    valid: bool
    retained: bool
    n_new: int


def finish(state: State) -> Outcome:
    """Sanitise the final molecule and verify the scaffold is still a substructure of it."""
    mol = to_mol(state)
    try:
        Chem.SanitizeMol(mol)
        smiles = Chem.MolToSmiles(mol)
        final = Chem.MolFromSmiles(smiles)
    except Exception:  # noqa: BLE001 - RDKit raises several types for chemically invalid graphs
        final = None
    if final is None:
        return Outcome(None, False, False, state.n_new)
    return Outcome(smiles, True, final.HasSubstructMatch(state.scaffold.mol), state.n_new)


def scaffold_bonds(mol: Chem.Mol, match: tuple[int, ...]) -> list[Chem.Bond]:
    """The bonds of `mol` between two atoms of the scaffold match."""
    inside = set(match)
    return [b for b in mol.GetBonds() if b.GetBeginAtomIdx() in inside and b.GetEndAtomIdx() in inside]


def demonstration(smiles: str, scaffold: Scaffold, config: EnvConfig) -> list[tuple[int, int, int]] | None:
    """The action sequence that builds molecule `smiles` from `scaffold`: decoration atoms in breadth-first
    order from the scaffold, each bonded to the atom it was reached from; remaining bonds between placed atoms
    as ring closures; then STOP. None when the molecule cannot be built within the environment's rules."""
    mol = Chem.MolFromSmiles(smiles)
    if mol is None:
        return None
    match = mol.GetSubstructMatch(scaffold.mol)
    if not match:
        return None
    vocab = {e: k for k, e in enumerate(config.decoration_vocab)}
    placed = {m: s for s, m in enumerate(match)}  # molecule atom -> state atom
    queue, actions, closures = list(match), [], []
    used = {bond.GetIdx() for bond in scaffold_bonds(mol, match)}
    head = 0
    while head < len(queue):
        current = queue[head]
        head += 1
        for neighbour in sorted(n.GetIdx() for n in mol.GetAtomWithIdx(current).GetNeighbors()):
            bond = mol.GetBondBetweenAtoms(current, neighbour)
            if bond.GetIdx() in used:
                continue
            used.add(bond.GetIdx())
            if neighbour in placed:
                closures.append((placed[current], placed[neighbour], bond))
                continue
            atom = mol.GetAtomWithIdx(neighbour)
            if atom.GetSymbol() not in vocab or atom.GetFormalCharge() or bond.GetBondType() not in BOND_TYPES.values():
                return None
            actions.append((placed[current], vocab[atom.GetSymbol()], BOND_CODE[bond.GetBondType()]))
            placed[neighbour] = len(placed)
            queue.append(neighbour)
    if len(placed) != mol.GetNumAtoms():
        return None
    for a, b, bond in closures:
        if bond.GetBondType() not in BOND_TYPES.values():
            return None
        actions.append((a, len(vocab) + b, BOND_CODE[bond.GetBondType()]))
    state = initial_state(scaffold, config)
    try:
        for action in actions:
            step(state, *action)
        if state.done:
            return None  # the action budget ran out before the molecule was complete
        step(state, STOP)
    except ValueError:
        return None
    outcome = finish(state)
    if not outcome.valid or outcome.smiles != Chem.MolToSmiles(mol):
        return None
    return state.history
