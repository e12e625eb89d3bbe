"""neurips26.common.optim: torch.optim's Adam/AdamW arithmetic and ExponentialLR without importing torch._dynamo."""

import math
import subprocess
import sys

import pytest
import torch

from neurips26.common.optim import Adam, AdamW, ExponentialDecay


def small_model(seed: int) -> torch.nn.Module:
    torch.manual_seed(seed)
    return torch.nn.Sequential(torch.nn.Linear(5, 16), torch.nn.Tanh(), torch.nn.Linear(16, 3))


def run(model, optimiser, steps: int, seed: int, scheduler=None) -> None:
    generator = torch.Generator().manual_seed(seed)
    for _ in range(steps):
        x = torch.randn(32, 5, generator=generator)
        loss = (model(x) - x[:, :3]).square().mean()
        optimiser.zero_grad(set_to_none=True)
        loss.backward()
        optimiser.step()
        if scheduler is not None:
            scheduler.step()


def assert_same_parameters(ours, reference):
    for mine, theirs in zip(ours.parameters(), reference.parameters(), strict=True):
        torch.testing.assert_close(mine, theirs, rtol=0, atol=0)
    assert not torch.equal(ours[0].weight, small_model(0)[0].weight)  # it did train


def test_sqrt_of_bias_correction_agrees_with_torch_for_these_steps():
    """The one deliberate difference (math.sqrt for ``** 0.5``) does not occur in the steps compared below."""
    for beta2 in (0.999, 0.9, 0.95):
        assert all(math.sqrt(1 - beta2**t) == (1 - beta2**t) ** 0.5 for t in range(1, 51))


@pytest.mark.parametrize("foreach", [True, False])
@pytest.mark.parametrize("betas,eps", [((0.9, 0.999), 1e-8), ((0.5, 0.9), 1e-3)])
def test_adam_equals_torch_optim_adam(betas, eps, foreach):
    ours, reference = small_model(0), small_model(0)
    run(ours, Adam(ours.parameters(), lr=1e-2, betas=betas, eps=eps), 50, seed=1)
    run(reference, torch.optim.Adam(reference.parameters(), lr=1e-2, betas=betas, eps=eps, foreach=foreach), 50, seed=1)
    assert_same_parameters(ours, reference)


@pytest.mark.parametrize("weight_decay", [0.1, 0.0])
@pytest.mark.parametrize("betas", [(0.9, 0.95), (0.9, 0.999)])
def test_adamw_equals_torch_optim_adamw(betas, weight_decay):
    ours, reference = small_model(0), small_model(0)
    run(ours, AdamW(ours.parameters(), lr=1e-2, betas=betas, weight_decay=weight_decay), 50, seed=1)
    run(
        reference,
        torch.optim.AdamW(reference.parameters(), lr=1e-2, betas=betas, weight_decay=weight_decay, foreach=True),
        50,
        seed=1,
    )
    assert_same_parameters(ours, reference)


def test_adamw_decay_uses_the_learning_rate_of_its_step():
    ours, reference = small_model(0), small_model(0)
    mine = AdamW(ours.parameters(), lr=1e-2, weight_decay=0.1)
    theirs = torch.optim.AdamW(reference.parameters(), lr=1e-2, weight_decay=0.1, foreach=True)
    run(ours, mine, 5, seed=2)
    run(reference, theirs, 5, seed=2)
    mine.lr = 3e-3
    for group in theirs.param_groups:
        group["lr"] = 3e-3
    run(ours, mine, 5, seed=4)
    run(reference, theirs, 5, seed=4)
    assert_same_parameters(ours, reference)


def test_exponential_decay_equals_exponential_lr():
    ours, reference = small_model(0), small_model(0)
    mine = AdamW(ours.parameters(), lr=2e-2, weight_decay=0.05)
    theirs = torch.optim.AdamW(reference.parameters(), lr=2e-2, weight_decay=0.05, foreach=True)
    decay, scheduler = ExponentialDecay(mine, 0.93), torch.optim.lr_scheduler.ExponentialLR(theirs, 0.93)
    run(ours, mine, 30, seed=1, scheduler=decay)
    run(reference, theirs, 30, seed=1, scheduler=scheduler)
    assert mine.lr == scheduler.get_last_lr()[0] == theirs.param_groups[0]["lr"]
    assert decay.last_epoch == scheduler.last_epoch == 30
    assert_same_parameters(ours, reference)


@pytest.mark.parametrize("cls,kwargs", [(Adam, {}), (AdamW, {"weight_decay": 0.1})])
def test_state_round_trip_resumes_bit_identically(cls, kwargs):
    straight = small_model(0)
    optimiser = cls(straight.parameters(), lr=1e-2, **kwargs)
    decay = ExponentialDecay(optimiser, 0.9)
    run(straight, optimiser, 20, seed=3, scheduler=decay)
    first = small_model(0)
    optimiser = cls(first.parameters(), lr=1e-2, **kwargs)
    decay = ExponentialDecay(optimiser, 0.9)
    run(first, optimiser, 10, seed=3, scheduler=decay)
    resumed = small_model(1)
    resumed.load_state_dict(first.state_dict())
    again = cls(resumed.parameters(), lr=1e-2, **kwargs)
    again.load_state_dict(optimiser.state_dict())
    decay_again = ExponentialDecay(again, 0.5)
    decay_again.load_state_dict(decay.state_dict())
    assert (again.lr, decay_again.gamma, decay_again.last_epoch) == (optimiser.lr, 0.9, 10)
    generator_state_after_10 = torch.Generator().manual_seed(3)
    for _ in range(10):
        torch.randn(32, 5, generator=generator_state_after_10)
    for _ in range(10):
        x = torch.randn(32, 5, generator=generator_state_after_10)
        loss = (resumed(x) - x[:, :3]).square().mean()
        again.zero_grad()
        loss.backward()
        again.step()
        decay_again.step()
    for a, b in zip(straight.parameters(), resumed.parameters(), strict=True):
        assert torch.equal(a, b)


def test_refuses_state_of_another_model_and_bad_settings():
    optimiser = Adam(small_model(0).parameters(), lr=1e-2)
    other = Adam(torch.nn.Linear(2, 2).parameters(), lr=1e-2)
    with pytest.raises(ValueError, match="another model"):
        optimiser.load_state_dict(other.state_dict())
    with pytest.raises(ValueError, match="lr > 0"):
        Adam(small_model(0).parameters(), lr=0.0)
    with pytest.raises(ValueError, match="no parameters"):
        Adam([], lr=1e-3)
    with pytest.raises(ValueError, match="weight_decay >= 0"):
        AdamW(small_model(0).parameters(), lr=1e-3, weight_decay=-1.0)
    with pytest.raises(ValueError, match="gamma"):
        ExponentialDecay(optimiser, 0.0)


def test_does_not_import_torch_dynamo():
    code = (
        "import sys, torch\nfrom neurips26.common.optim import AdamW, ExponentialDecay\n"
        "m = torch.nn.Linear(3, 3)\nopt = AdamW(m.parameters(), lr=1e-3, weight_decay=0.1)\n"
        "decay = ExponentialDecay(opt, 0.9)\n"
        "m(torch.ones(2, 3)).sum().backward()\nopt.step()\ndecay.step()\n"
        "print('torch._dynamo' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_a_checkpoint_of_the_moments_lands_on_the_host_not_beside_them_on_the_device():
    """A GPU job's checkpoint must not double its optimizer state on the device (issue 38: paper 09's peak was set
    by these copies): the moments come back on the CPU, whatever device they live on."""
    from fake_gpu import fake_gpu

    with fake_gpu():  # the meta device, whose values are read back to the CPU as zeros
        weights = [torch.zeros(3, 4, device="meta", requires_grad=True)]
        state = AdamW(weights, lr=1e-3, weight_decay=0.1).state_dict()
    assert {t.device.type for t in state["exp_avg"] + state["exp_avg_sq"]} == {"cpu"}
