"""Paper 19 (AMORTIX) on the common training loop: the GPU rules (pretrain, rl, sample, per_instance, pmo) keep the
policy and every tensor on the job's device (a fake GPU: the meta device, where a tensor left on the CPU fails),
and each training function killed after a checkpoint and resumed equals an uninterrupted run."""

from __future__ import annotations

import logging
import re

import numpy as np
import pandas as pd
import pytest
import torch

from fake_gpu import fake_gpu
from neurips26.amortix import environment as env
from neurips26.amortix import objectives
from neurips26.amortix.instances import PMO_METHODS, per_instance_rl, pmo_lite
from neurips26.amortix.policy import GraphTransformerPolicy, PolicyConfig, policy_from_state, policy_state
from neurips26.amortix.rollout import demonstration_records
from neurips26.amortix.sampling import sample_policy
from neurips26.amortix.training import RLSettings, behaviour_cloning, reinforce
from neurips26.common import faults, loop

CONFIG = env.EnvConfig(max_new_atoms=4, max_actions=6)
ELEMENTS = {e: k for k, e in enumerate(CONFIG.scaffold_vocab)}
N_VOCAB = len(CONFIG.decoration_vocab)
SCAFFOLDS = ("c1ccccc1", "C1CCNCC1", "c1ccncc1")
TIMING = {"seconds", "calls_per_second", "molecules_per_second"}


def tiny_policy(seed: int = 0) -> GraphTransformerPolicy:
    torch.manual_seed(seed)
    return GraphTransformerPolicy(PolicyConfig(len(CONFIG.scaffold_vocab), N_VOCAB, d_model=16, n_layers=1, n_heads=2))


def demonstrations():
    config = env.EnvConfig()
    records = []
    for smiles, scaffold in (("CC(=O)Nc1ccc(O)cc1", "c1ccccc1"), ("Cn1ccc2ccccc21", "c1ccc2[nH]ccc2c1")):
        s = env.make_scaffold(scaffold, config)
        records += demonstration_records(s, env.demonstration(smiles, s, config), config, ELEMENTS)
    return records


def oxygen_reward(smiles: list[str]) -> np.ndarray:
    return np.array([float("O" in s or "o" in s) for s in smiles])


def pretrain(policy, loop_settings=None, steps=6):
    records = demonstrations()
    return behaviour_cloning(
        policy,
        records,
        records,
        steps=steps,
        batch_size=4,
        lr=3e-3,
        n_vocab=N_VOCAB,
        seed=0,
        eval_every=2,
        loop_settings=loop_settings,
    )


def finetune(policy, loop_settings=None, steps=6, config=CONFIG):
    scaffolds = [env.make_scaffold(s, config) for s in SCAFFOLDS]
    return reinforce(
        policy,
        scaffolds,
        scaffolds[:2],
        oxygen_reward,
        "drgrpo",
        RLSettings(steps=steps, batch_scaffolds=2, group_size=3, lr=3e-3, val_every=2),
        config,
        ELEMENTS,
        seed=0,
        loop_settings=loop_settings,
    )


PER_INSTANCE = {"budget": 6, "group_size": 3, "lr": 1e-3}
PMO = {"start": "c1ccccc1", "budget": 6, "group_size": 3, "lr": 1e-3}


def per_instance(loop_settings=None, scaffolds=SCAFFOLDS, config=CONFIG):
    return per_instance_rl(
        policy_state(tiny_policy(2)),
        list(scaffolds),
        objectives.make_oracle("qed"),
        PER_INSTANCE,
        config,
        seed=0,
        loop_settings=loop_settings,
    )


def pmo(loop_settings=None, config=CONFIG, seeds=(0,)):
    return pmo_lite(policy_state(tiny_policy(3)), "qed", PMO, config, seeds=list(seeds), loop_settings=loop_settings)


# On the fake GPU every operation goes through meta kernels written in Python (milliseconds each): short runs and
# two-action episodes keep these tests to seconds; placement does not depend on the length of a run.
SHORT = env.EnvConfig(max_new_atoms=2, max_actions=2)


@pytest.fixture(autouse=True)
def one_thread():
    """One torch thread, as the smoke jobs use (rules/common.smk: torch_threads): on shared cores the default
    thread pool makes these tiny steps ten times slower."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


def on_device(policy: torch.nn.Module, device: torch.device) -> bool:
    return all(t.device == device for t in [*policy.parameters(), *policy.buffers()])


# ---- GPU placement (profiles/slurm gives these rules a GPU) -------------------------------------------------


@pytest.mark.gpu_rule("amortix_pretrain")
def test_pretraining_keeps_the_policy_and_batches_on_the_jobs_device():
    with fake_gpu() as device:
        policy = tiny_policy().to(loop.job_device())
        rows = pretrain(policy, steps=2)
        assert on_device(policy, device) and [r["step"] for r in rows] == [2]


@pytest.mark.gpu_rule("amortix_rl")
def test_rl_keeps_the_policy_rollouts_and_updates_on_the_jobs_device():
    with fake_gpu() as device:
        policy = policy_from_state(policy_state(tiny_policy(1)), loop.job_device())
        rows = finetune(policy, steps=2, config=SHORT)
        assert on_device(policy, device) and len(rows) == 2


@pytest.mark.gpu_rule("amortix_sample")
def test_sampling_runs_the_policy_on_the_jobs_device():
    with fake_gpu() as device:
        policy = policy_from_state(policy_state(tiny_policy(1)), loop.job_device())
        table = sample_policy(
            "pretrained", policy, list(SCAFFOLDS), SHORT, objectives.make_oracle("qed"), k=3, temperature=1.0, seed=0
        )
        assert on_device(policy, device)
        assert table.groupby("mode").size().to_dict() == {"greedy": len(SCAFFOLDS), "sample": 3 * len(SCAFFOLDS)}


@pytest.mark.gpu_rule("amortix_per_instance")
def test_per_instance_rl_runs_the_policy_on_the_jobs_device():
    with fake_gpu():
        table = per_instance(scaffolds=SCAFFOLDS[:1], config=SHORT)
        assert set(table["scaffold"]) == {SCAFFOLDS[0]} and (table["call"] <= PER_INSTANCE["budget"]).all()


@pytest.mark.gpu_rule("amortix_pmo")
def test_pmo_lite_runs_the_policy_on_the_jobs_device():
    with fake_gpu():
        calls = pmo(config=SHORT)
        assert set(calls["method"]) == set(PMO_METHODS) and (calls["call"] <= PMO["budget"]).all()


# ---- resume: a run killed after a checkpoint ends as an uninterrupted one -----------------------------------


class Killed(RuntimeError):
    pass


def kill_at(monkeypatch, step: int) -> None:
    """Make the loop's per-step hook raise at the `step`-th finished step (after the checkpoint before it)."""
    done = []

    def hook():
        done.append(1)
        if len(done) == step:
            raise Killed

    monkeypatch.setattr(faults, "step_done", hook)


def without_timing(rows) -> pd.DataFrame:
    table = pd.DataFrame(rows)
    return table.drop(columns=[c for c in table.columns if c in TIMING])


def resumed_at(caplog) -> list[int]:
    """The steps the loop logged resuming at ("<name>: resuming from checkpoint <path> at step <k> of <n>")."""
    found = (
        re.search(r": resuming from checkpoint .* at step (\d+) of \d+$", r.getMessage())
        for r in caplog.records
        if r.name == "neurips26.loop"
    )
    return [int(m.group(1)) for m in found if m]


def killed_and_resumed(run, monkeypatch, caplog, tmp_path, kill_step: int, every_steps: int, resumes_at: int):
    """Kill `run` at the `kill_step`-th finished step and run it again; the rerun must resume from the checkpoint
    at step `resumes_at` (a rerun from step 0 would give the same result)."""
    settings = loop.LoopSettings(checkpoint=tmp_path / ".out.ckpt", fingerprint="job", every_steps=every_steps)
    kill_at(monkeypatch, kill_step)
    with caplog.at_level(logging.INFO, logger="neurips26.loop"):
        with pytest.raises(Killed):
            run(settings)
        assert settings.checkpoint.exists()
        assert resumed_at(caplog) == []  # the first run started afresh
        monkeypatch.setattr(faults, "step_done", lambda: None)
        result = run(settings)
    assert resumed_at(caplog) == [resumes_at]  # the rerun resumed from the checkpoint, not from step 0
    return result


def short_finetune(policy, loop_settings=None):
    return finetune(policy, loop_settings, config=SHORT)


@pytest.mark.parametrize("train, seed", [(pretrain, 0), (short_finetune, 1)], ids=["pretrain", "rl"])
def test_a_training_run_killed_after_a_checkpoint_resumes_to_the_uninterrupted_result(
    train, seed, monkeypatch, caplog, tmp_path
):
    whole = tiny_policy(seed)
    whole_rows = train(whole)
    resumed = tiny_policy(seed)
    resumed_rows = killed_and_resumed(
        lambda s: train(resumed, s), monkeypatch, caplog, tmp_path, kill_step=5, every_steps=2, resumes_at=4
    )
    for name, tensor in whole.state_dict().items():
        assert torch.equal(tensor, resumed.state_dict()[name]), name
    pd.testing.assert_frame_equal(without_timing(resumed_rows), without_timing(whole_rows))  # NaN equals NaN


def short_per_instance(loop_settings=None):
    return per_instance(loop_settings, scaffolds=SCAFFOLDS[:2], config=SHORT)


def short_pmo(loop_settings=None):
    return pmo(loop_settings, config=SHORT)


def two_seed_pmo(loop_settings=None):
    return pmo(loop_settings, config=SHORT, seeds=(0, 1))


@pytest.mark.parametrize(
    "run, kill_step", [(short_per_instance, 2), (short_pmo, 2), (two_seed_pmo, 6)], ids=["per_instance", "pmo", "pmo2"]
)
def test_an_instance_optimisation_job_killed_after_a_run_resumes_to_the_uninterrupted_result(
    run, kill_step, monkeypatch, caplog, tmp_path
):
    # two PMO seeds killed in seed 1's graph GA: its start population (seed 1's first samples) comes from the checkpoint
    whole = run()
    resumed = killed_and_resumed(
        run, monkeypatch, caplog, tmp_path, kill_step=kill_step, every_steps=1, resumes_at=kill_step - 1
    )
    pd.testing.assert_frame_equal(without_timing(resumed), without_timing(whole))


def test_each_pmo_seed_runs_as_a_job_with_that_seed_alone():
    both = without_timing(pmo(config=SHORT, seeds=(0, 1)))
    assert both.groupby("seed")["method"].unique().map(sorted).tolist() == [sorted(PMO_METHODS)] * 2
    alone = without_timing(pmo(config=SHORT, seeds=(1,)))
    pd.testing.assert_frame_equal(both[both["seed"] == 1].reset_index(drop=True), alone)
