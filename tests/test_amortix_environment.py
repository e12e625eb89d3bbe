"""Paper 19's decoration environment: valence masks, scaffold preservation on tricky scaffolds, demonstrations."""

from __future__ import annotations

import numpy as np
import pytest
from rdkit import Chem
from scipy.sparse.csgraph import shortest_path

from neurips26.amortix import environment as env

CONFIG = env.EnvConfig(max_new_atoms=8, max_actions=10)
TRICKY = {
    "fused aromatic": "c1ccc2ccccc2c1",
    "aromatic N-H": "c1ccc2[nH]ccc2c1",
    "charged pyridinium N-H": "c1cc[nH+]cc1",
    "charged ammonium": "[NH3+]C1CCCCC1",
    "lactam with exocyclic O": "O=C1CCCN1Cc1ccccc1",
    "spiro": "C1CCC2(CC1)CCNC2",
    "thiophene": "c1ccsc1",
}


def random_episode(scaffold: env.Scaffold, rng: np.random.Generator, config=CONFIG) -> env.State:
    """Uniformly random choices among the unmasked ones at every level (STOP rarely, to grow decorations)."""
    state = env.initial_state(scaffold, config)
    while not state.done:
        mask1 = env.level1_mask(state)
        atoms = np.flatnonzero(mask1[1:])
        if not len(atoms) or rng.random() < 0.1:
            env.step(state, env.STOP)
            continue
        atom = int(rng.choice(atoms))
        target = int(rng.choice(np.flatnonzero(env.level2_mask(state, atom))))
        order = int(rng.choice(np.flatnonzero(env.level3_mask(state, atom, target)))) + 1
        env.step(state, atom, target, order)
    return state


@pytest.mark.parametrize("name", sorted(TRICKY))
def test_every_masked_random_decoration_is_valid_and_keeps_the_scaffold(name):
    scaffold = env.make_scaffold(TRICKY[name], CONFIG)
    rng = np.random.default_rng(0)
    outcomes = [env.finish(random_episode(scaffold, rng)) for _ in range(150)]
    assert all(o.valid for o in outcomes), [o for o in outcomes if not o.valid][:3]
    assert all(o.retained for o in outcomes)
    assert np.mean([o.n_new > 0 for o in outcomes]) > 0.5  # the test actually decorated


def test_charges_and_scaffold_atoms_survive_decoration():
    scaffold = env.make_scaffold("c1cc[nH+]cc1", CONFIG)
    state = env.initial_state(scaffold, CONFIG)
    nitrogen = scaffold.elements.index("N")
    env.step(state, nitrogen, 0, 1)  # methyl on the charged N-H
    mol = Chem.MolFromSmiles(env.finish(state).smiles)
    assert Chem.MolToSmiles(mol) == Chem.CanonSmiles("C[n+]1ccccc1")
    assert sum(a.GetFormalCharge() for a in mol.GetAtoms()) == 1


def test_aromatic_nh_takes_one_single_bond_and_then_is_full():
    scaffold = env.make_scaffold("c1ccc2[nH]ccc2c1", CONFIG)
    state = env.initial_state(scaffold, CONFIG)
    nitrogen = scaffold.elements.index("N")
    assert env.level3_mask(state, nitrogen, 0).tolist() == [True, False, False]  # no double bond to [nH]
    env.step(state, nitrogen, 2, 1)  # N-O
    assert not env.level1_mask(state)[nitrogen + 1]
    assert env.finish(state).smiles == Chem.CanonSmiles("On1ccc2ccccc21")


def test_fused_ring_junctions_and_quaternary_atoms_are_never_anchors():
    scaffold = env.make_scaffold("c1ccc2ccccc2c1", CONFIG)
    mask = env.level1_mask(env.initial_state(scaffold, CONFIG))[1:]
    junctions = [a.GetIdx() for a in scaffold.mol.GetAtoms() if a.GetTotalNumHs() == 0]
    assert len(junctions) == 2 and not mask[junctions].any() and mask.sum() == 8


def test_bond_orders_follow_the_new_atoms_valence():
    scaffold = env.make_scaffold("C1CCCCC1", CONFIG)
    state = env.initial_state(scaffold, CONFIG)
    vocab = CONFIG.decoration_vocab
    assert env.level3_mask(state, 0, vocab.index("F")).tolist() == [True, False, False]
    assert env.level3_mask(state, 0, vocab.index("O")).tolist() == [True, False, False]  # bonds to the scaffold
    env.step(state, 0, vocab.index("C"), 1)
    new = state.n - 1  # a CH3 on the ring: three free valences
    assert env.level3_mask(state, new, vocab.index("O")).tolist() == [True, True, False]
    assert env.level3_mask(state, new, vocab.index("N")).tolist() == [True, True, True]
    assert env.level3_mask(state, new, vocab.index("Cl")).tolist() == [True, False, False]


def test_ring_closures_stay_inside_the_decoration_and_close_allowed_ring_sizes():
    scaffold = env.make_scaffold("c1ccccc1", CONFIG)
    state = env.initial_state(scaffold, CONFIG)
    assert not env.ring_targets(state, 0).any()
    env.step(state, 0, 0, 1)
    for _ in range(5):  # a chain of six carbons: closures within the chain appear, never back to the ring
        env.step(state, state.n - 1, 0, 1)
    last = state.n - 1
    targets = np.flatnonzero(env.ring_targets(state, last))
    sizes = state.distances[last, targets] + 1
    assert len(targets) and set(sizes.tolist()) <= set(CONFIG.ring_sizes)
    assert targets.min() >= scaffold.n_atoms
    env.step(state, last, len(CONFIG.decoration_vocab) + int(targets[0]), 1)
    final = Chem.MolFromSmiles(env.finish(state).smiles)
    assert final.GetRingInfo().NumRings() == 2


def test_distances_stay_shortest_paths_after_additions_and_closures():
    scaffold = env.make_scaffold("c1ccsc1", CONFIG)
    rng = np.random.default_rng(3)
    for _ in range(30):
        state = random_episode(scaffold, rng)
        graph = state.bonds[: state.n, : state.n] > 0
        expected = shortest_path(graph.astype(float), unweighted=True)
        assert np.array_equal(state.distances[: state.n, : state.n], expected.astype(int))


@pytest.mark.parametrize(
    "smiles,scaffold",
    [
        ("CC(=O)Nc1ccc(O)cc1", "c1ccccc1"),
        ("Cn1ccc2ccccc21", "c1ccc2[nH]ccc2c1"),
        ("C[n+]1ccccc1", "c1cc[nH+]cc1"),
        ("CS(=O)(=O)c1ccc(Cl)cc1", "c1ccccc1"),
        ("N#CCC1CCCCC1", "C1CCCCC1"),
        ("c1ccccc1", "c1ccccc1"),
    ],
)
def test_demonstrations_rebuild_the_molecule_exactly(smiles, scaffold):
    config = env.EnvConfig()
    s = env.make_scaffold(scaffold, config)
    actions = env.demonstration(Chem.CanonSmiles(smiles), s, config)
    assert actions is not None and actions[-1] == (env.STOP, 0, 0)
    state = env.initial_state(s, config)
    for action in actions:
        env.step(state, *action)
    assert env.finish(state).smiles == Chem.CanonSmiles(smiles)


def test_demonstrations_refuse_what_the_environment_cannot_build():
    config = env.EnvConfig(max_new_atoms=3)
    benzene = env.make_scaffold("c1ccccc1", config)
    assert env.demonstration("O=[N+]([O-])c1ccccc1", benzene, config) is None  # charged decoration atoms
    assert env.demonstration("Brc1ccccc1", benzene, config) is None  # Br is not a decoration element
    assert env.demonstration("CCCCc1ccccc1", benzene, config) is None  # 4 new atoms > max_new_atoms
    assert env.demonstration("C1CCCCC1", benzene, config) is None  # not a substructure


@pytest.mark.parametrize(
    "smiles,message",
    [
        ("c1ccccc", "cannot parse"),
        ("c1ccc[se]1", "outside the vocabulary"),
        ("O=C1C(=O)C1=O", "no attachable atom"),
        ("", "cannot parse"),
    ],
)
def test_bad_scaffolds_are_rejected_with_the_reason(smiles, message):
    with pytest.raises(ValueError, match=message):
        env.make_scaffold(smiles, CONFIG)


def test_masked_actions_are_refused_and_stop_ends_the_episode():
    scaffold = env.make_scaffold("c1ccccc1", CONFIG)
    state = env.initial_state(scaffold, CONFIG)
    with pytest.raises(ValueError, match="masked action"):
        env.step(state, 0, CONFIG.decoration_vocab.index("O"), 2)  # C=O on an aromatic CH
    env.step(state, env.STOP)
    assert state.done
    with pytest.raises(ValueError, match="over"):
        env.step(state, 0, 0, 1)


def test_the_action_budget_ends_the_episode():
    config = env.EnvConfig(max_new_atoms=10, max_actions=2)
    state = env.initial_state(env.make_scaffold("C1CCCCC1", config), config)
    env.step(state, 0, 0, 1)
    assert not state.done
    env.step(state, 1, 0, 1)
    assert state.done and not env.level1_mask(state)[1:].any()
