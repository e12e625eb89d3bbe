"""Paper 19's RL seeds trained as a group in one job (issue 23): every seed's result from the group run equals its
single-seed run (bit for bit: each seed runs the same operations on its own policy, optimiser, scaffold order and
sampling stream), a shared score cache changes no result, a group killed after a checkpoint resumes to the
uninterrupted result, and the rules' seed groups, job names and policy files."""

from __future__ import annotations

import copy

import numpy as np
import pandas as pd
import pytest
import torch
import yaml
from rdkit import Chem, rdBase

from conftest import ROOT
from neurips26.amortix import corpus, experiment, objectives, surrogate
from neurips26.amortix import environment as env
from neurips26.amortix.policy import (
    GraphTransformerPolicy,
    PolicyConfig,
    load_seed_policy_state,
    policy_from_state,
    policy_state,
    seed_policies_state,
)
from neurips26.amortix.training import RLSettings, reinforce, reinforce_seeds
from neurips26.common import loop
from test_amortix_loop import killed_and_resumed, without_timing

CONFIG = env.EnvConfig(max_new_atoms=4, max_actions=6)
ELEMENTS = {e: k for k, e in enumerate(CONFIG.scaffold_vocab)}
N_VOCAB = len(CONFIG.decoration_vocab)
SCAFFOLDS = ("c1ccccc1", "C1CCNCC1", "c1ccncc1", "C1CCOC1")
SETTINGS = RLSettings(steps=4, batch_scaffolds=2, group_size=3, lr=3e-3, val_every=2)
SEEDS = [0, 1, 2]
CFG = yaml.safe_load((ROOT / "config/amortix.yaml").read_text())


@pytest.fixture(autouse=True)
def one_thread():
    """One torch thread, as the smoke and quick jobs use (rules/common.smk: torch_threads)."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


def pretrained() -> dict:
    """The policy every seed starts from (the job's pretrained.pt)."""
    torch.manual_seed(5)
    return policy_state(GraphTransformerPolicy(PolicyConfig(len(CONFIG.scaffold_vocab), N_VOCAB, 16, 1, 2)))


def scaffolds() -> list[env.Scaffold]:
    return [env.make_scaffold(s, CONFIG) for s in SCAFFOLDS]


def qed_scorer(cache: bool) -> objectives.Scorer:
    return objectives.Scorer(objectives.make_oracle("qed"), cache=cache)


def single(seed: int, state: dict):
    """One seed alone, as a job of one seed runs it (its own uncached scorer)."""
    policy = policy_from_state(state)
    rows = reinforce(
        policy, scaffolds(), scaffolds()[:2], qed_scorer(False), "drgrpo", SETTINGS, CONFIG, ELEMENTS, seed
    )
    return policy, rows


def group(seeds, state: dict, loop_settings=None):
    """The seeds in one run, sharing one cached scorer, as a job of a seed group runs them."""
    policies = [policy_from_state(state) for _ in seeds]
    logs = reinforce_seeds(
        policies,
        scaffolds(),
        scaffolds()[:2],
        qed_scorer(True),
        "drgrpo",
        SETTINGS,
        CONFIG,
        ELEMENTS,
        list(seeds),
        loop_settings=loop_settings,
    )
    return policies, logs


def test_each_seed_of_a_group_run_equals_its_single_seed_run():
    state = pretrained()
    policies, logs = group(SEEDS, state)
    for seed, policy, rows in zip(SEEDS, policies, logs):
        alone, alone_rows = single(seed, state)
        for name, tensor in alone.state_dict().items():
            assert torch.equal(policy.state_dict()[name], tensor), (seed, name)  # bit-identical, not only close
        pd.testing.assert_frame_equal(without_timing(rows), without_timing(alone_rows), check_exact=True)
    # the seeds are different runs (scaffold order and samples of their own), not copies of one
    rewards = [tuple(r["reward_mean"] for r in rows) for rows in logs]
    assert len(set(rewards)) == len(SEEDS)


def test_a_seeds_result_does_not_depend_on_the_other_seeds_of_its_group():
    state = pretrained()
    alone, alone_logs = group([1], state)
    policies, logs = group([2, 1], state)
    pd.testing.assert_frame_equal(without_timing(logs[1]), without_timing(alone_logs[0]), check_exact=True)
    for name, tensor in alone[0].state_dict().items():
        assert torch.equal(policies[1].state_dict()[name], tensor), name


def test_a_group_run_killed_after_a_checkpoint_resumes_to_the_uninterrupted_result(monkeypatch, caplog, tmp_path):
    state = pretrained()
    whole, whole_logs = group([0, 1], state)
    resumed = {}

    def run(settings):
        resumed["policies"], resumed["logs"] = group([0, 1], state, settings)
        return resumed["logs"]

    killed_and_resumed(run, monkeypatch, caplog, tmp_path, kill_step=3, every_steps=2, resumes_at=2)
    for policy, again, rows, rows_again in zip(whole, resumed["policies"], whole_logs, resumed["logs"]):
        for name, tensor in policy.state_dict().items():
            assert torch.equal(again.state_dict()[name], tensor), name
        pd.testing.assert_frame_equal(without_timing(rows_again), without_timing(rows))


def test_a_non_finite_loss_of_one_seed_stops_the_group_naming_that_seeds_policy(monkeypatch):
    from neurips26.amortix import training

    real = training.policy_gradient_step

    def poisoned(policy, optimiser, episodes, adv, n_vocab, grad_clip):
        if policy is victim[0]:
            adv = np.full_like(adv, np.nan)
        return real(policy, optimiser, episodes, adv, n_vocab, grad_clip)

    victim = []
    policies = [policy_from_state(pretrained()) for _ in (0, 1)]
    victim.append(policies[1])
    monkeypatch.setattr(training, "policy_gradient_step", poisoned)
    with pytest.raises(loop.Diverged, match="policy_s1"):
        reinforce_seeds(
            policies, scaffolds(), scaffolds()[:2], qed_scorer(True), "drgrpo", SETTINGS, CONFIG, ELEMENTS, [0, 1]
        )


def test_a_group_needs_one_policy_per_distinct_seed():
    policy = policy_from_state(pretrained())
    with pytest.raises(ValueError, match="one policy per seed"):
        reinforce_seeds([policy], scaffolds(), [], qed_scorer(True), "drgrpo", SETTINGS, CONFIG, ELEMENTS, [0, 1])
    with pytest.raises(ValueError, match="seeds repeat"):
        reinforce_seeds(
            [policy, copy.deepcopy(policy)],
            scaffolds(),
            [],
            qed_scorer(True),
            "drgrpo",
            SETTINGS,
            CONFIG,
            ELEMENTS,
            [0, 0],
        )


@pytest.fixture(scope="module")
def small_kinase():
    """A small kinase surrogate (10 trees per target; the quick oracle has 100): scoring is what is tested."""
    with rdBase.BlockLogs():
        nci = [
            s
            for s in corpus.read_smiles_file(corpus.rdkit_data_path(*corpus.NCI_FIRST_5K))[:200]
            if Chem.MolFromSmiles(s) is not None
        ]
    egfr, cdk2 = surrogate.kinase_ligand_smiles()
    return surrogate.fit_kinase_surrogate(egfr, cdk2, nci, n_estimators=10, seed=0, folds=3), nci


def test_the_kinase_oracle_scores_a_molecule_alike_in_any_batch_so_a_score_cache_changes_nothing(small_kinase):
    oracle, nci = small_kinase
    smiles = [Chem.MolToSmiles(Chem.MolFromSmiles(s)) for s in nci[:30]]
    batch = oracle([Chem.MolFromSmiles(s) for s in smiles])
    alone = np.concatenate([oracle([Chem.MolFromSmiles(s)]) for s in smiles])
    np.testing.assert_array_equal(batch, alone)  # bit-identical
    reversed_batch = oracle([Chem.MolFromSmiles(s) for s in smiles[::-1]])[::-1]
    np.testing.assert_array_equal(batch, reversed_batch)
    cached = objectives.Scorer(oracle, cache=True)
    repeated = smiles[:10] + smiles[5:20] + smiles[:3]
    np.testing.assert_array_equal(cached(repeated), objectives.Scorer(oracle)(repeated))
    np.testing.assert_array_equal(cached(smiles[:25]), batch[:25])
    assert cached.calls == 25  # each distinct molecule scored once


def test_seed_groups_give_one_rl_job_per_group_and_keep_the_policy_names():
    quick = CFG["quick"]
    # plain REINFORCE (none) runs one seed at quick, like grpo: C3's null is the global baseline (issue 41's review),
    # so no claim reads none over seeds
    assert experiment.rl_jobs(quick) == ["drgrpo_s0-1-2", "grpo_s0", "global_s0-1-2", "none_s0"]
    assert experiment.policy_names(quick) == [
        "drgrpo_s0",
        "drgrpo_s1",
        "drgrpo_s2",
        "grpo_s0",
        "global_s0",
        "global_s1",
        "global_s2",
        "none_s0",
    ]
    assert experiment.rl_job_of(quick, "global_s1") == "global_s0-1-2"
    assert experiment.group_seeds("0-1-2") == [0, 1, 2] and experiment.group_seeds("4") == [4]
    paper = CFG["paper"]  # one job (one GPU) per seed on the cluster: the single-run names
    assert experiment.rl_jobs(paper) == [f"{v}_s{s}" for v in ("drgrpo", "grpo", "global", "none") for s in (0, 1, 2)]
    assert experiment.rl_job_of(paper, "none_s2") == "none_s2"
    two = copy.deepcopy(quick)
    two["rl"].update(seeds_per_job=2)
    assert experiment.rl_jobs(two) == [
        "drgrpo_s0-1",
        "drgrpo_s2",
        "grpo_s0",
        "global_s0-1",
        "global_s2",
        "none_s0",
    ]
    with pytest.raises(ValueError, match="not among the configured RL runs"):
        experiment.rl_job_of(quick, "grpo_s1")
    with pytest.raises(ValueError, match="not a fine-tuned policy"):
        experiment.rl_job_of(quick, "pretrained")


def test_a_group_policy_file_gives_each_seed_its_policy(tmp_path):
    policies = [policy_from_state(pretrained()) for _ in range(2)]
    with torch.no_grad():
        policies[1].element_head.bias.add_(1.0)
    path = tmp_path / "drgrpo_s3-7.pt"
    torch.save(seed_policies_state(policies, [3, 7]), path)
    for seed, policy in zip((3, 7), policies):
        loaded = policy_from_state(load_seed_policy_state(path, seed))
        for name, tensor in policy.state_dict().items():
            assert torch.equal(loaded.state_dict()[name], tensor), name
    with pytest.raises(ValueError, match=r"seeds \[3, 7\], not seed 1"):
        load_seed_policy_state(path, 1)
