"""Paper 19's policy: a normalised hierarchical action distribution, permutation equivariance of the graph
transformer, behaviour cloning that fits demonstrations, and RL that raises a simple reward."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from rdkit import Chem

from neurips26.amortix import environment as env
from neurips26.amortix.features import collate, state_features
from neurips26.amortix.policy import (
    GraphTransformerPolicy,
    PolicyConfig,
    batch_tensors,
    policy_from_state,
    policy_state,
)
from neurips26.amortix.rollout import StepRecord, demonstration_records, record_masks, rollout, step_log_probs
from neurips26.amortix.training import RLSettings, behaviour_cloning, episode_rewards, reinforce, validation_nll

CONFIG = env.EnvConfig(max_new_atoms=4, max_actions=6)
ELEMENTS = {e: k for k, e in enumerate(CONFIG.scaffold_vocab)}
N_VOCAB = len(CONFIG.decoration_vocab)


def tiny_policy(seed: int = 0, d_model: int = 32, n_layers: int = 2) -> GraphTransformerPolicy:
    torch.manual_seed(seed)
    policy = GraphTransformerPolicy(
        PolicyConfig(len(CONFIG.scaffold_vocab), N_VOCAB, d_model=d_model, n_layers=n_layers, n_heads=4)
    )
    with torch.no_grad():  # open the ReZero gates so that attention and its biases matter in the tests
        for block in policy.blocks:
            block.gate.fill_(0.5)
    return policy


def all_actions(state: env.State):
    yield env.STOP, 0, 0
    for atom in np.flatnonzero(env.level1_mask(state)[1:]):
        for target in np.flatnonzero(env.level2_mask(state, int(atom))):
            for order in np.flatnonzero(env.level3_mask(state, int(atom), int(target))):
                yield int(atom), int(target), int(order) + 1


def records_for(state: env.State, actions) -> list[StepRecord]:
    features = state_features(state, ELEMENTS)
    return [
        StepRecord(features, *record_masks(state, a, t, o), 0 if a == env.STOP else a + 1, t, max(o - 1, 0))
        for a, t, o in actions
    ]


@pytest.mark.parametrize("smiles", ["c1ccc2[nH]ccc2c1", "CC1CCC(C)N1"])
def test_the_hierarchical_action_distribution_sums_to_one(smiles):
    state = env.initial_state(env.make_scaffold(smiles, CONFIG), CONFIG)
    env.step(state, 0 if state.free[0] else int(np.flatnonzero(state.free)[0]), 0, 1)  # grow one atom first
    actions = list(all_actions(state))
    with torch.no_grad():
        log_p = step_log_probs(tiny_policy(), records_for(state, actions), N_VOCAB)
    assert len(actions) > 20
    assert torch.logsumexp(log_p, 0).item() == pytest.approx(0.0, abs=1e-5)


def test_the_encoder_is_equivariant_to_atom_order():
    mol = Chem.MolFromSmiles("Oc1ccc(N)cc1Cl")
    order = [int(i) for i in np.random.default_rng(0).permutation(mol.GetNumAtoms())]
    smiles = [Chem.MolToSmiles(m, canonical=False) for m in (mol, Chem.RenumberAtoms(mol, order))]
    assert smiles[0] != smiles[1]
    policy = tiny_policy()
    outputs = []
    for text in smiles:
        state = env.initial_state(env.make_scaffold(text, CONFIG), CONFIG)
        with torch.no_grad():
            outputs.append(policy.encode(batch_tensors(collate([state_features(state, ELEMENTS)]))))
    original, permuted = outputs
    # atom k of the second parse is atom match[k] of the first (the molecule has no symmetry to confuse it)
    match = list(Chem.MolFromSmiles(smiles[0]).GetSubstructMatch(Chem.MolFromSmiles(smiles[1])))
    assert sorted(match) != match
    assert torch.allclose(permuted[0, 0], original[0, 0], atol=1e-5)  # the virtual token
    assert torch.allclose(permuted[0, 1:], original[0, 1:][match], atol=1e-5)


def test_padding_does_not_change_a_graphs_embeddings():
    small = env.initial_state(env.make_scaffold("c1ccoc1", CONFIG), CONFIG)
    large = env.initial_state(env.make_scaffold("c1ccc2ccccc2c1", CONFIG), CONFIG)
    policy = tiny_policy()
    with torch.no_grad():
        alone = policy.encode(batch_tensors(collate([state_features(small, ELEMENTS)])))
        padded = policy.encode(
            batch_tensors(collate([state_features(small, ELEMENTS), state_features(large, ELEMENTS)]))
        )
    assert torch.allclose(alone[0], padded[0, : alone.shape[1]], atol=1e-5)


def test_rollouts_of_an_untrained_policy_are_valid_and_keep_the_scaffold():
    scaffolds = [env.make_scaffold(s, CONFIG) for s in ("c1ccc2[nH]ccc2c1", "c1cc[nH+]cc1", "O=C1CCCN1")]
    episodes = rollout(tiny_policy(), scaffolds, 20, CONFIG, ELEMENTS, generator=torch.Generator().manual_seed(0))
    assert all(e.outcome.valid and e.outcome.retained for e in episodes)
    assert np.mean([e.outcome.n_new for e in episodes]) > 0.5
    greedy = rollout(tiny_policy(), scaffolds, 2, CONFIG, ELEMENTS, greedy=True)
    assert greedy[0].outcome.smiles == greedy[1].outcome.smiles  # greedy decoding is deterministic


def test_behaviour_cloning_fits_its_demonstrations():
    config = env.EnvConfig()
    demos = [("CC(=O)Nc1ccc(O)cc1", "c1ccccc1"), ("Cn1ccc2ccccc21", "c1ccc2[nH]ccc2c1")]
    records = []
    for smiles, scaffold in demos:
        s = env.make_scaffold(scaffold, config)
        records += demonstration_records(s, env.demonstration(smiles, s, config), config, ELEMENTS)
    policy = tiny_policy()
    untrained = validation_nll(policy, records, N_VOCAB)
    rows = behaviour_cloning(
        policy, records, records, steps=60, batch_size=len(records), lr=3e-3, n_vocab=N_VOCAB, seed=0, eval_every=20
    )
    assert rows[-1]["val_nll"] < 0.1 * untrained
    greedy = rollout(policy, [env.make_scaffold("c1ccc2[nH]ccc2c1", config)], 1, config, ELEMENTS, greedy=True)
    assert greedy[0].outcome.smiles == Chem.CanonSmiles("Cn1ccc2ccccc21")  # imitation, reproduced by decoding


def test_a_checkpoint_round_trip_gives_the_same_policy():
    policy = tiny_policy(seed=3)
    copy = policy_from_state(policy_state(policy))
    state = env.initial_state(env.make_scaffold("c1ccncc1", CONFIG), CONFIG)
    batch = batch_tensors(collate([state_features(state, ELEMENTS)]))
    with torch.no_grad():
        assert torch.equal(policy.encode(batch), copy.encode(batch))


def oxygen_reward(smiles: list[str]) -> np.ndarray:
    """1 when the decoration added an oxygen (none of the scaffolds below has one)."""
    return np.array([float("O" in s or "o" in s) for s in smiles])


def test_group_relative_rl_raises_a_simple_reward():
    scaffolds = [env.make_scaffold(s, CONFIG) for s in ("c1ccccc1", "C1CCNCC1", "c1ccncc1", "C1CCCC1")]
    policy = tiny_policy(seed=1, d_model=32, n_layers=1)

    def sampled_reward() -> float:
        episodes = rollout(policy, scaffolds, 32, CONFIG, ELEMENTS, generator=torch.Generator().manual_seed(9))
        return float(episode_rewards(episodes, oxygen_reward)[0].mean())

    before = sampled_reward()
    reinforce(
        policy,
        scaffolds,
        scaffolds,
        oxygen_reward,
        "drgrpo",
        RLSettings(steps=25, batch_scaffolds=4, group_size=8, lr=3e-3, val_every=100),
        CONFIG,
        ELEMENTS,
        seed=0,
    )
    # reinforce keeps the best greedy-validation checkpoint; with val_every > steps that is the final policy
    # unless the untrained one validated higher
    assert sampled_reward() > before + 0.15


def test_log_probabilities_make_every_tensor_on_the_policys_device():
    """On the meta device any tensor created off the policy's device raises (a GPU run would crash there)."""
    config = env.EnvConfig()
    scaffold = env.make_scaffold("c1ccccc1", config)
    records = demonstration_records(
        scaffold, env.demonstration("CC(=O)Nc1ccc(O)cc1", scaffold, config), config, ELEMENTS
    )
    policy = tiny_policy().to("meta")
    log_p = step_log_probs(policy, records, N_VOCAB)
    assert log_p.device.type == "meta" and log_p.shape == (len(records),)


def test_the_policy_gradient_backward_runs_a_group_of_episodes_at_a_time(monkeypatch):
    """Paper scale: 10 scaffolds x 16 completions of up to 40 decisions through the 512-wide, 10-layer policy held
    about 97 GB of activations in one backward (the rehearsal's count), past an 80 GB GPU. The step accumulates the
    gradient over groups of `chunk` episodes: the same gradient, a group's activations at a time."""
    from neurips26.amortix import training
    from neurips26.common.optim import Adam

    scaffolds = [env.make_scaffold(s, CONFIG) for s in ("c1ccc2[nH]ccc2c1", "c1cc[nH+]cc1", "O=C1CCCN1")]
    episodes = rollout(tiny_policy(), scaffolds, 12, CONFIG, ELEMENTS, generator=torch.Generator().manual_seed(1))
    adv = np.random.default_rng(0).normal(size=len(episodes))
    sizes = []
    real = training.step_log_probs

    def counted(policy, records, n_vocab):
        sizes.append(len(records))
        return real(policy, records, n_vocab)

    monkeypatch.setattr(training, "step_log_probs", counted)
    results = {}
    for chunk in (len(episodes), 8):
        policy = tiny_policy()
        optimiser = Adam(policy.parameters(), lr=1e-3)
        loss, norm = training.policy_gradient_step(policy, optimiser, episodes, adv, N_VOCAB, 1e9, chunk=chunk)
        results[chunk] = (float(loss), norm, [p.grad.detach().clone() for p in policy.parameters()])
    largest_group = max(sum(len(e.steps) for e in episodes[i : i + 8]) for i in range(0, len(episodes), 8))
    assert max(sizes[1:]) == largest_group < sizes[0] == sum(len(e.steps) for e in episodes)
    whole, grouped = results[len(episodes)], results[8]
    assert grouped[0] == pytest.approx(whole[0], rel=1e-5) and grouped[1] == pytest.approx(whole[1], rel=1e-4)
    for a, b in zip(whole[2], grouped[2]):
        torch.testing.assert_close(a, b, rtol=1e-4, atol=1e-6)  # the same gradient, summed in another order
