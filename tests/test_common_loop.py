"""The shared training loop (neurips26.common.loop): resume, divergence, SIGTERM, stale checkpoints, progress."""

from __future__ import annotations

import logging
import os
import random
import signal

import numpy as np
import pytest
import torch

from fake_gpu import fake_gpu
from neurips26.common import loop


class Toy:
    """A small regression trained with AdamW and a scheduler, drawing from every kind of random state."""

    def __init__(self, seed: int = 0, lr: float = 1e-2):
        torch.manual_seed(seed)
        self.model = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.Tanh(), torch.nn.Linear(8, 1))
        self.model.to(loop.job_device())
        self.opt = torch.optim.AdamW(self.model.parameters(), lr=lr)
        self.sched = torch.optim.lr_scheduler.StepLR(self.opt, step_size=7, gamma=0.5)
        self.gen = torch.Generator().manual_seed(1)
        self.rng = np.random.default_rng(2)
        self.py = random.Random(3)
        self.rows: list[float] = []
        self.ema = {k: v.detach().clone() for k, v in self.model.state_dict().items()}

    @property
    def state(self):
        return {
            "model": self.model,
            "opt": self.opt,
            "sched": self.sched,
            "gen": self.gen,
            "rng": self.rng,
            "py": self.py,
            "rows": self.rows,
            "ema": self.ema,
        }

    def step(self, i: int):
        device = loop.job_device()
        x = (torch.randn(16, 4, generator=self.gen) + self.rng.normal() + self.py.random()).to(device)
        noise = torch.rand(()) * 1e-3  # the global torch generator too
        loss = ((self.model(x) - x.sum(1, keepdim=True)) ** 2).mean() + noise.to(device)
        self.opt.zero_grad()
        loss.backward()
        self.opt.step()
        self.sched.step()
        with torch.no_grad():
            for k, v in self.model.state_dict().items():
                self.ema[k].mul_(0.9).add_(v, alpha=0.1)
        self.rows.append(float(loss.detach()))
        return loss


def weights(toy: Toy) -> list[torch.Tensor]:
    return [p.detach().clone() for p in toy.model.parameters()]


def test_a_run_interrupted_after_a_checkpoint_resumes_bit_identically(tmp_path):
    reference = Toy()
    loop.run_loop(reference.step, 40, reference.state)
    settings = loop.LoopSettings(checkpoint=tmp_path / "ck.pt", fingerprint="job", every_steps=10)
    first = Toy()

    def dies_at_25(i):
        if i == 25:
            raise KeyboardInterrupt  # the process dies mid-run, after the checkpoint of step 20
        return first.step(i)

    with pytest.raises(KeyboardInterrupt):
        loop.run_loop(dies_at_25, 40, first.state, settings)
    torch.manual_seed(123), np.random.seed(5), random.seed(7)  # a new process starts from other global states
    resumed = Toy(seed=99)  # and from other initial weights: all of it comes from the checkpoint
    result = loop.run_loop(resumed.step, 40, resumed.state, settings)
    assert result.resumed_from == 20 and result.steps == 40
    assert all(torch.equal(a, b) for a, b in zip(weights(reference), weights(resumed)))
    assert resumed.rows == reference.rows
    assert all(torch.equal(reference.ema[k], resumed.ema[k]) for k in reference.ema)
    loop.finish(settings)
    assert not (tmp_path / "ck.pt").exists()


def test_a_checkpoint_of_other_params_is_ignored(tmp_path, caplog):
    settings = loop.LoopSettings(checkpoint=tmp_path / "ck.pt", fingerprint="old", every_steps=5)
    toy = Toy()
    loop.run_loop(toy.step, 12, toy.state, settings)  # leaves the checkpoint of step 10
    fresh = Toy()
    with caplog.at_level(logging.WARNING, logger="neurips26.loop"):
        result = loop.run_loop(
            fresh.step,
            12,
            fresh.state,
            loop.LoopSettings(checkpoint=tmp_path / "ck.pt", fingerprint="new", every_steps=5),
        )
    assert result.resumed_from == 0 and len(fresh.rows) == 12
    assert "other parameters or inputs" in caplog.text


def test_a_non_finite_loss_stops_naming_the_step_and_the_group():
    toy = Toy(lr=1e-2)

    def step(i):
        if i == 3:
            with torch.no_grad():
                toy.model[2].weight[0, 0] = float("nan")
        x = torch.randn(16, 4, generator=toy.gen)
        loss = ((toy.model(x) - x.sum(1, keepdim=True)) ** 2).mean()
        toy.opt.zero_grad()
        loss.backward()
        loop.check_finite(loss, i, loop.parameter_groups(toy.state))  # before the update spoils every group
        toy.opt.step()
        return loss

    with pytest.raises(loop.Diverged) as caught:
        loop.run_loop(step, 10, toy.state)
    assert caught.value.step == 3 and caught.value.group == "weight of model.2"
    assert "step 3" in str(caught.value)


def test_the_loops_own_check_stops_a_step_function_that_does_not_check():
    toy = Toy()

    def step(i):
        loss = toy.step(i)
        return loss * float("inf") if i == 2 else loss

    with pytest.raises(loop.Diverged, match="step 2.*after the update"):
        loop.run_loop(step, 10, toy.state)


def test_with_record_divergence_a_non_finite_loss_ends_the_run_as_its_recorded_outcome(tmp_path):
    def run(toy, settings):
        def step(i):
            loss = toy.step(i)
            return loss * float("inf") if i == 5 else loss

        return loop.run_loop(step, 10, toy.state, settings)

    toy = Toy()
    result = run(toy, loop.LoopSettings(record_divergence=True))
    assert result.stopped_early and result.steps == 5 and len(toy.rows) == 6  # step 5 ran, then the run ended
    assert isinstance(result.diverged, loop.Diverged) and result.diverged.step == 5
    assert result.diverged.loss == float("inf")
    # the default still raises; a finite run records nothing
    with pytest.raises(loop.Diverged, match="step 5"):
        run(Toy(), loop.LoopSettings())
    clean = loop.run_loop(Toy().step, 10, Toy().state, loop.LoopSettings(record_divergence=True))
    assert clean.diverged is None and not clean.stopped_early and clean.steps == 10
    # a run resumed from a checkpoint taken before the divergence records the same step
    settings = loop.LoopSettings(record_divergence=True, checkpoint=tmp_path / "ck.pt", fingerprint="j", every_steps=2)
    first = Toy()
    with pytest.raises(RuntimeError):
        loop.run_loop(
            lambda i: (_ for _ in ()).throw(RuntimeError("killed")) if i == 3 else first.step(i),
            10,
            first.state,
            settings,
        )
    resumed = run(Toy(seed=7), settings)
    assert resumed.resumed_from == 2 and resumed.diverged.step == 5 and resumed.steps == 5


def test_divergence_as_an_outcome_ends_the_run_early_without_error():
    toy = Toy()

    def step(i):
        if i == 4:
            raise loop.StopTraining
        return toy.step(i)

    result = loop.run_loop(step, 10, toy.state, loop.LoopSettings(check_finite=False))
    assert result.stopped_early and result.steps == 4 and len(toy.rows) == 4


def test_sigterm_is_answered_by_a_checkpoint_and_a_non_zero_exit_and_the_retry_resumes(tmp_path):
    reference = Toy()
    loop.run_loop(reference.step, 30, reference.state)
    settings = loop.LoopSettings(checkpoint=tmp_path / "ck.pt", fingerprint="job", every_steps=1000)
    first = Toy()

    def step(i):
        if i == 12:
            os.kill(os.getpid(), signal.SIGTERM)  # Slurm's warning before the time limit
        return first.step(i)

    before = signal.getsignal(signal.SIGTERM)
    with pytest.raises(loop.Preempted) as caught:
        loop.run_loop(step, 30, first.state, settings)
    assert caught.value.code != 0 and caught.value.step == 13
    assert signal.getsignal(signal.SIGTERM) == before  # the previous handler is back
    retry = Toy(seed=5)
    assert loop.run_loop(retry.step, 30, retry.state, settings).resumed_from == 13
    assert all(torch.equal(a, b) for a, b in zip(weights(reference), weights(retry)))


def test_progress_is_logged_with_rate_and_eta_at_a_bounded_rate(caplog):
    toy = Toy()
    with caplog.at_level(logging.INFO, logger="neurips26.loop"):
        loop.run_loop(toy.step, 50, toy.state, loop.LoopSettings(progress_seconds=3600, name="toy"))
    lines = [r.message for r in caplog.records if "steps/s" in r.message]
    assert len(lines) == 2  # the first and the last step only, at this rate
    assert lines[-1].startswith("toy: step 50/50") and "ETA 0:00:00" in lines[-1]


def test_the_loop_runs_on_the_job_device_and_a_cpu_tensor_in_a_step_fails():
    with fake_gpu():
        toy = Toy()
        assert next(toy.model.parameters()).device.type == "meta"
        loop.run_loop(toy.step, 3, toy.state)

        def leaks_cpu(i):
            return toy.model(torch.randn(2, 4)).sum()  # a batch left on the CPU

        with pytest.raises(RuntimeError, match="device"):
            loop.run_loop(leaks_cpu, 3, toy.state)


def test_bad_settings_are_refused():
    with pytest.raises(ValueError, match="steps"):
        loop.run_loop(lambda i: 0.0, -1, {})
    with pytest.raises(ValueError, match="every_steps"):
        loop.run_loop(lambda i: 0.0, 3, {}, loop.LoopSettings(every_steps=0))


def test_the_checkpoint_sits_beside_the_output_hidden_and_undeclared(tmp_path):
    assert loop.checkpoint_path(tmp_path / "models" / "net.pt") == tmp_path / "models" / ".net.pt.ckpt"
