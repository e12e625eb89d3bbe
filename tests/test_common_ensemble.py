"""The batched ensemble: each member trains as it would alone."""

from __future__ import annotations

import pytest
import torch
from torch import nn

from neurips26.common.ensemble import Ensemble, build, clip_grad_norm_per_member, seed_generators

SEEDS = [0, 1, 2]


def mlp() -> nn.Module:
    return nn.Sequential(nn.Linear(4, 16), nn.Tanh(), nn.Linear(16, 1))


def batch(generator: torch.Generator) -> tuple[torch.Tensor, torch.Tensor]:
    x = torch.randn(8, 4, generator=generator)
    return x, x.sum(dim=1, keepdim=True).sin()


def train_alone(seed: int, steps: int, clip: float | None = None) -> dict[str, torch.Tensor]:
    torch.manual_seed(seed)
    model = mlp()
    generator = torch.Generator().manual_seed(seed)
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
    for _ in range(steps):
        x, y = batch(generator)
        loss = ((model(x) - y) ** 2).mean()
        optimizer.zero_grad()
        loss.backward()
        if clip is not None:
            torch.nn.utils.clip_grad_norm_(model.parameters(), clip)
        optimizer.step()
    return model.state_dict()


def train_batched(seeds, steps: int, clip: float | None = None, data_seeds=None) -> Ensemble:
    ens = Ensemble(build(mlp, seeds))
    generators = seed_generators(data_seeds or seeds)
    optimizer = torch.optim.Adam(ens.parameters(), lr=1e-2)
    for _ in range(steps):
        xs, ys = zip(*(batch(g) for g in generators))
        losses = ((ens(torch.stack(xs)) - torch.stack(ys)) ** 2).mean(dim=(1, 2))
        optimizer.zero_grad()
        losses.sum().backward()
        if clip is not None:
            clip_grad_norm_per_member(ens.parameters(), clip)
        optimizer.step()
    return ens


def test_members_are_built_as_a_single_seed_run_builds_them_and_the_global_state_is_kept():
    before = torch.random.get_rng_state()
    models = build(mlp, SEEDS)
    assert torch.equal(torch.random.get_rng_state(), before)
    for seed, model in zip(SEEDS, models):
        torch.manual_seed(seed)
        alone = mlp()
        for a, b in zip(model.parameters(), alone.parameters()):
            assert torch.equal(a, b)
    assert not torch.equal(models[0][0].weight, models[1][0].weight)


def test_bad_seed_lists_are_refused():
    with pytest.raises(ValueError, match="at least one seed"):
        build(mlp, [])
    with pytest.raises(ValueError, match="repeat"):
        build(mlp, [1, 1])
    with pytest.raises(ValueError, match="one architecture"):
        Ensemble([nn.Linear(2, 2), mlp()])


def test_the_forward_of_each_member_is_its_models_forward():
    models = build(mlp, SEEDS)
    ens = Ensemble(models)
    x = torch.randn(3, 5, 4)
    out = ens(x)
    for i, model in enumerate(models):
        torch.testing.assert_close(out[i], model(x[i]))
    shared = ens(x[0], in_dims=None)  # one input for every member
    torch.testing.assert_close(shared[2], models[2](x[0]))


@pytest.mark.parametrize("clip", [None, 0.05])
def test_each_seed_trained_in_the_ensemble_equals_its_run_alone(clip):
    ens = train_batched(SEEDS, steps=20, clip=clip)
    for i, seed in enumerate(SEEDS):
        alone = train_alone(seed, steps=20, clip=clip)
        for name, value in alone.items():
            torch.testing.assert_close(ens.state_dict(i)[name], value, rtol=1e-5, atol=1e-6)


def test_a_members_training_does_not_depend_on_the_other_members_data():
    reference = train_batched(SEEDS, steps=10, clip=0.05)
    other = train_batched(SEEDS, steps=10, clip=0.05, data_seeds=[0, 1, 99])
    for name, value in reference.state_dict(0).items():
        torch.testing.assert_close(other.state_dict(0)[name], value, rtol=1e-6, atol=1e-7)
    assert not torch.allclose(other.state_dict(2)["0.weight"], reference.state_dict(2)["0.weight"])


def test_a_member_comes_back_as_an_ordinary_model():
    ens = train_batched(SEEDS, steps=3)
    model = ens.module(1)
    x = torch.randn(7, 4)
    torch.testing.assert_close(model(x), ens(x, in_dims=None)[1])
    assert set(model.state_dict()) == set(mlp().state_dict())
    with pytest.raises(IndexError):
        ens.state_dict(3)


def test_clipping_per_member_equals_clipping_each_model():
    grads = [torch.randn(3, 4, 5), torch.randn(3, 5)]
    tensors = [torch.zeros_like(g, requires_grad=True) for g in grads]
    for t, g in zip(tensors, grads):
        t.grad = g.clone()
    norms = clip_grad_norm_per_member(tensors, 1.0)
    for i in range(3):
        alone = [torch.zeros_like(g[i], requires_grad=True) for g in grads]
        for t, g in zip(alone, grads):
            t.grad = g[i].clone()
        norm = torch.nn.utils.clip_grad_norm_(alone, 1.0)
        torch.testing.assert_close(norms[i], norm)
        for t, a in zip(tensors, alone):
            torch.testing.assert_close(t.grad[i], a.grad)


class WithPosition(nn.Module):
    """A model with a non-persistent buffer, as the DiT's positional table is."""

    def __init__(self):
        super().__init__()
        self.linear = nn.Linear(4, 4)
        self.register_buffer("pos", torch.randn(4), persistent=False)
        self.register_buffer("count", torch.zeros(()))

    def forward(self, x):
        return self.linear(x) + self.pos


def test_a_members_state_dict_has_the_single_models_keys_and_loads_strictly():
    ensemble = Ensemble(build(WithPosition, SEEDS))
    state = ensemble.state_dict(1)
    assert set(state) == set(WithPosition().state_dict()) == {"linear.weight", "linear.bias", "count"}
    torch.manual_seed(1)
    alone = WithPosition()
    fresh = WithPosition()
    fresh.load_state_dict(state, strict=True)
    assert torch.equal(fresh.linear.weight, alone.linear.weight)
    member = ensemble.module(1)  # the non-persistent buffer comes back with the member's own values
    assert torch.equal(member.pos, alone.pos) and torch.equal(member.linear.bias, alone.linear.bias)
