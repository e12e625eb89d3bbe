"""neurips26.common.adam: torch.optim.Adam's arithmetic without importing torch._dynamo."""

import subprocess
import sys

import pytest
import torch

from neurips26.common.adam import Adam


def small_model(seed: int) -> torch.nn.Module:
    torch.manual_seed(seed)
    return torch.nn.Sequential(torch.nn.Linear(5, 16), torch.nn.Tanh(), torch.nn.Linear(16, 3))


def run(model, optimiser, steps: int, seed: int) -> None:
    generator = torch.Generator().manual_seed(seed)
    for _ in range(steps):
        x = torch.randn(32, 5, generator=generator)
        loss = (model(x) - x[:, :3]).square().mean()
        optimiser.zero_grad(set_to_none=True)
        loss.backward()
        optimiser.step()


@pytest.mark.parametrize("betas,eps", [((0.9, 0.999), 1e-8), ((0.5, 0.9), 1e-3)])
def test_adam_follows_torch_optim_adam(betas, eps):
    ours, reference = small_model(0), small_model(0)
    run(ours, Adam(ours.parameters(), lr=1e-2, betas=betas, eps=eps), 50, seed=1)
    run(reference, torch.optim.Adam(reference.parameters(), lr=1e-2, betas=betas, eps=eps, foreach=False), 50, seed=1)
    for mine, theirs in zip(ours.parameters(), reference.parameters()):
        torch.testing.assert_close(mine, theirs, rtol=1e-5, atol=1e-6)
    assert not torch.equal(ours[0].weight, small_model(0)[0].weight)  # it did train


def test_adam_state_round_trip_resumes_bit_identically():
    straight = small_model(0)
    run(straight, Adam(straight.parameters(), lr=1e-2), 20, seed=3)
    first = small_model(0)
    optimiser = Adam(first.parameters(), lr=1e-2)
    run(first, optimiser, 10, seed=3)
    resumed = small_model(1)
    resumed.load_state_dict(first.state_dict())
    again = Adam(resumed.parameters(), lr=1e-2)
    again.load_state_dict(optimiser.state_dict())
    generator_state_after_10 = torch.Generator().manual_seed(3)
    for _ in range(10):
        torch.randn(32, 5, generator=generator_state_after_10)
    for _ in range(10):
        x = torch.randn(32, 5, generator=generator_state_after_10)
        loss = (resumed(x) - x[:, :3]).square().mean()
        again.zero_grad()
        loss.backward()
        again.step()
    for a, b in zip(straight.parameters(), resumed.parameters()):
        assert torch.equal(a, b)


def test_adam_refuses_state_of_another_model_and_bad_settings():
    optimiser = Adam(small_model(0).parameters(), lr=1e-2)
    other = Adam(torch.nn.Linear(2, 2).parameters(), lr=1e-2)
    with pytest.raises(ValueError, match="another model"):
        optimiser.load_state_dict(other.state_dict())
    with pytest.raises(ValueError, match="lr > 0"):
        Adam(small_model(0).parameters(), lr=0.0)
    with pytest.raises(ValueError, match="no parameters"):
        Adam([], lr=1e-3)


def test_adam_does_not_import_torch_dynamo():
    code = (
        "import sys, torch\nfrom neurips26.common.adam import Adam\n"
        "m = torch.nn.Linear(3, 3)\nopt = Adam(m.parameters(), lr=1e-3)\n"
        "m(torch.ones(2, 3)).sum().backward()\nopt.step()\n"
        "print('torch._dynamo' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
