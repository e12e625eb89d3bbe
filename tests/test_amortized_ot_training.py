"""Paper 18's trainings in the shared loop (common.loop): Meta-OT (rule amortized_ot_fit_metaot) and the CFM flow
(rule amortized_ot_cfm_train). A run killed after a checkpoint and resumed equals an uninterrupted one; a
non-finite loss stops naming the step; both train on the job's device (the GPU the profile gives these rules),
which a fake device checks: a tensor left on the CPU fails there as it would on a GPU."""

from __future__ import annotations

import logging
import random
import re

import numpy as np
import pytest
import torch

from fake_gpu import fake_gpu
from neurips26.amortized_ot import baselines, cfm
from neurips26.amortized_ot.data import TOY_SAMPLERS
from neurips26.common import loop


class Killed(Exception):
    """Stands for the process dying in the middle of a step."""


def metaot_problem(pairs: int = 8, n: int = 6, shared: bool = True):
    """Weights on one fixed support (Meta-OT's setting) and the cost: (1, n, n) shared or (P, n, n) per pair."""
    rng = np.random.default_rng(0)
    x = rng.normal(size=(n, 2))
    a = rng.dirichlet(np.ones(n), size=pairs)
    b = rng.dirichlet(np.ones(n), size=pairs)
    cost = torch.as_tensor(((x[:, None] - x[None]) ** 2).sum(-1))[None]
    return a, b, cost if shared else cost.expand(pairs, n, n).clone()


METAOT = dict(eps=0.5, hidden=(8,), steps=12, batch_size=4, lr=1e-2, seed=0)


def train_metaot(a, b, cost, settings=None, **changes):
    kw = {**METAOT, **changes}
    return baselines.train_metaot(
        a, b, cost, kw["eps"], kw["hidden"], kw["steps"], kw["batch_size"], kw["lr"], kw["seed"], settings
    )


def other_global_states():
    """A new process starts from other global random states: a resume must not depend on them."""
    torch.manual_seed(12345), np.random.seed(7), random.seed(9)


def resumed_at(caplog) -> list[int]:
    """The steps the loop logged resuming at ("<name>: resuming from checkpoint <path> at step <k> of <n>")."""
    found = (
        re.search(r": resuming from checkpoint .* at step (\d+) of \d+$", r.getMessage())
        for r in caplog.records
        if r.name == "neurips26.loop"
    )
    return [int(m.group(1)) for m in found if m]


def test_metaot_killed_after_a_checkpoint_resumes_to_the_uninterrupted_result(tmp_path, monkeypatch, caplog):
    a, b, cost = metaot_problem()
    straight, losses = train_metaot(a, b, cost)
    settings = loop.LoopSettings(checkpoint=tmp_path / ".metaot.pt.ckpt", fingerprint="job", every_steps=3)
    semi_dual, calls = baselines.semi_dual, []

    def dies_in_step_8(*args):
        calls.append(1)
        if len(calls) == 8:
            raise Killed
        return semi_dual(*args)

    monkeypatch.setattr(baselines, "semi_dual", dies_in_step_8)
    with caplog.at_level(logging.INFO, logger="neurips26.loop"):
        with pytest.raises(Killed):
            train_metaot(a, b, cost, settings)
        monkeypatch.setattr(baselines, "semi_dual", semi_dual)
        assert loop.load_checkpoint(settings.checkpoint)["step"] == 6
        assert resumed_at(caplog) == []  # the first run started afresh
        other_global_states()
        resumed, resumed_losses = train_metaot(a, b, cost, settings)
    assert resumed_at(caplog) == [6]  # the rerun resumed from the checkpoint of step 6, not from step 0
    assert resumed_losses == losses
    assert all(torch.equal(p, q) for p, q in zip(straight.parameters(), resumed.parameters()))


def test_metaot_ignores_a_checkpoint_of_another_job(tmp_path):
    a, b, cost = metaot_problem()
    straight, losses = train_metaot(a, b, cost)
    path = tmp_path / ".metaot.pt.ckpt"
    train_metaot(a, b, cost, loop.LoopSettings(checkpoint=path, fingerprint="lr 0.1", every_steps=5), lr=0.1)
    assert path.exists()  # left at step 10 by a run with another learning rate
    fresh, fresh_losses = train_metaot(
        a, b, cost, loop.LoopSettings(checkpoint=path, fingerprint="lr 0.01", every_steps=5)
    )
    assert fresh_losses == losses


def test_metaot_on_a_shared_support_equals_the_per_pair_costs():
    """The script passes the one cost matrix all pairs share: the same numbers as one matrix per pair."""
    a, b, shared = metaot_problem(shared=True)
    _, _, per_pair = metaot_problem(shared=False)
    one, losses_one = train_metaot(a, b, shared)
    many, losses_many = train_metaot(a, b, per_pair)
    assert losses_one == losses_many
    assert all(torch.equal(p, q) for p, q in zip(one.parameters(), many.parameters()))


def test_metaot_divergence_stops_naming_the_step_and_the_group():
    a, b, cost = metaot_problem()
    cost = cost.clone()
    cost[0, 2, 3] = float("nan")  # the semi-dual is NaN from the first step; the weights are still finite
    with pytest.raises(loop.Diverged, match="diverged at step 0") as caught:
        train_metaot(a, b, cost)
    assert caught.value.group.startswith("gradient of model")  # checked before the update spoils the weights


@pytest.mark.gpu_rule("amortized_ot_fit_metaot")
@pytest.mark.gpu_rule("amortized_ot_fit_metaot_seeded")
def test_rule_amortized_ot_fit_metaot_trains_on_the_job_device():
    a, b, cost = metaot_problem()
    with fake_gpu():
        model, losses = train_metaot(a, b, cost, steps=3)
    assert len(losses) == 3
    assert all(p.device.type == "cpu" for p in model.parameters())  # returned for saving, loadable on a CPU


FLOW = (TOY_SAMPLERS["8gaussians"], TOY_SAMPLERS["moons"])


def train_flow(plan_fn=cfm.exact_plan, steps=10, settings=None, lr=1e-2):
    return cfm.train_flow(*FLOW, plan_fn, steps, 16, lr, 8, 0, settings)


def test_flow_killed_after_a_checkpoint_resumes_to_the_uninterrupted_result(tmp_path, caplog):
    straight, losses = train_flow()
    settings = loop.LoopSettings(checkpoint=tmp_path / ".flow.pt.ckpt", fingerprint="job", every_steps=3)
    calls = []

    def plan_dies_in_step_8(x0, x1):
        calls.append(1)
        if len(calls) == 8:
            raise Killed
        return cfm.exact_plan(x0, x1)

    with caplog.at_level(logging.INFO, logger="neurips26.loop"):
        with pytest.raises(Killed):
            train_flow(plan_dies_in_step_8, settings=settings)
        assert loop.load_checkpoint(settings.checkpoint)["step"] == 6
        assert resumed_at(caplog) == []  # the first run started afresh
        other_global_states()  # the times t come from the global torch generator: restored from the checkpoint
        resumed, resumed_losses = train_flow(settings=settings)
    assert resumed_at(caplog) == [6]  # the rerun resumed from the checkpoint of step 6, not from step 0
    assert resumed_losses == losses
    assert all(torch.equal(p, q) for p, q in zip(straight.parameters(), resumed.parameters()))


def test_flow_divergence_stops_naming_the_step():
    with pytest.raises(loop.Diverged, match="diverged at step"):
        train_flow(steps=50, lr=1e12)


@pytest.mark.gpu_rule("amortized_ot_cfm_train")
@pytest.mark.gpu_rule("amortized_ot_cfm_train_seeded")
@pytest.mark.parametrize("plan", ["exact_plan", "independent_plan"])
def test_rule_amortized_ot_cfm_train_trains_on_the_job_device(plan):
    with fake_gpu():
        flow, losses = train_flow(getattr(cfm, plan), steps=3)
    assert len(losses) == 3
    assert all(p.device.type == "cpu" for p in flow.parameters())
