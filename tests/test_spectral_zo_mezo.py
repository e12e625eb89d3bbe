"""MeZO in place (spectral_zo.mezo): the seed trick reproduces the batched central-difference estimate with the
same directions, the weights come back after every probe, the SGD step equals the materialised estimate, its
mean is the gradient on a linear layer, it holds less memory than batched SPSA, and bad inputs are rejected."""

import pytest
import torch

from neurips26.spectral_zo.estimators import perturbation_gradient, squared_error, true_gradient
from neurips26.spectral_zo.mezo import (
    directions,
    measure_cost,
    mezo_gradient,
    mezo_probes,
    mezo_step,
    mlp,
    perturb_,
    probe_seeds,
)

DT = torch.float64


def _linear_problem(seed=0):
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(16, 5, generator=g, dtype=DT) * torch.tensor([3.0, 1.5, 1.0, 0.5, 0.2], dtype=DT)
    y = torch.randn(16, 3, generator=g, dtype=DT)
    return [torch.randn(3, 5, generator=g, dtype=DT)], (x, y)


def _two_layer_problem(seed=1, widths=(4, 6, 2), batch_size=12):
    """A random tanh network 4-6-2 with scale-0.7 weights and Gaussian inputs and targets."""
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(batch_size, widths[0], generator=g, dtype=DT)
    y = torch.randn(batch_size, widths[-1], generator=g, dtype=DT)
    params = [0.7 * torch.randn(o, i, generator=g, dtype=DT) for i, o in zip(widths[:-1], widths[1:])]
    return params, (x, y)


@pytest.mark.parametrize("distribution", ["gaussian", "rademacher"])
def test_seed_trick_equals_batched_central_differences_with_the_same_directions(distribution):
    params, batch = _two_layer_problem()
    est = mezo_gradient(params, squared_error, batch, 5, 1e-3, seed=7, forward=mlp("tanh"), distribution=distribution)
    dirs = directions(params, probe_seeds(7, 5), distribution)
    ref = perturbation_gradient(params, squared_error, batch, dirs, 1e-3, activation="tanh")
    for e, r in zip(est, ref):
        torch.testing.assert_close(e, r, rtol=1e-9, atol=1e-9)


def test_regenerated_noise_is_identical_and_seeds_differ():
    params, _ = _two_layer_problem()
    a = directions(params, [3, 4])
    b = directions(params, [3, 4])
    assert all(torch.equal(x, y) for x, y in zip(a, b))
    assert not torch.equal(a[0][0], a[0][1])
    assert len(set(probe_seeds(0, 50))) == 50


def test_weights_restored_after_probes_up_to_rounding_and_same_objects():
    params, batch = _two_layer_problem()
    before = [w.clone() for w in params]
    ids = [id(w) for w in params]
    mezo_probes(params, squared_error, batch, 20, 0.1, seed=3, forward=mlp("tanh"))
    assert [id(w) for w in params] == ids  # in place: no new tensors
    for w, b in zip(params, before):
        assert (w - b).abs().max() <= 8 * torch.finfo(DT).eps * (b.abs().max() + 1)
    # a perturbation that is not undone is visible: the check above can fail
    perturb_(params, 3, 1e-3)
    assert (params[0] - before[0]).abs().max() > 1e-5


def test_sgd_step_equals_minus_lr_times_materialised_estimate():
    params, batch = _two_layer_problem()
    est = mezo_gradient(params, squared_error, batch, 4, 1e-3, seed=5, forward=mlp("tanh"))
    stepped = [w.clone() for w in params]
    probes = mezo_step(stepped, squared_error, batch, 4, 1e-3, seed=5, lr=0.1, forward=mlp("tanh"))
    for s, w, g in zip(stepped, params, est):
        torch.testing.assert_close(s, w - 0.1 * g, rtol=1e-10, atol=1e-12)
    assert len(probes.projected) == 4 and probes.loss_plus[0] != probes.loss_minus[0]


def test_mean_is_the_gradient_on_linear_layer_with_squared_loss():
    params, batch = _linear_problem()
    grad = true_gradient(params, squared_error, batch, "identity")[0]
    forward = mlp("identity")
    draws = torch.stack(
        [mezo_gradient(params, squared_error, batch, 100, 1e-2, seed=s, forward=forward)[0] for s in range(40)]
    )
    mean, se = draws.mean(0), draws.std(0) / 40**0.5
    assert ((mean - grad).abs() / se).max() < 4.5
    # a plausible bug (a factor 2 in the central difference) is many standard errors off
    assert ((mean / 2 - grad).abs() / se).max() > 6


def test_mezo_holds_less_extra_memory_than_batched_spsa():
    g = torch.Generator().manual_seed(0)
    params = [torch.randn(64, 32, generator=g), torch.randn(10, 64, generator=g)]
    batch = (torch.randn(32, 32, generator=g), torch.randn(32, 10, generator=g))
    before = [w.clone() for w in params]
    cost = measure_cost(params, squared_error, batch, n_probes=16, repeats=1)
    assert all(torch.equal(w, b) for w, b in zip(params, before))
    mezo, spsa = cost["mezo_step"].extra_bytes, cost["spsa_batched"].extra_bytes
    # batched SPSA holds 16 directions and 32 probe weight copies: at least 48 x the 2688 weights in float32
    assert spsa >= 48 * (64 * 32 + 10 * 64) * 4
    # MeZO holds one layer's z and one pass's activations
    assert 0 < mezo < spsa / 10


@pytest.mark.parametrize(
    "kwargs, word",
    [({"n_probes": 0}, "n_probes"), ({"eps": 0.0}, "eps"), ({"eps": -1e-3}, "eps"), ({"distribution": "x"}, "dist")],
)
def test_bad_inputs_rejected(kwargs, word):
    params, batch = _linear_problem()
    args = {"n_probes": 2, "eps": 1e-3, "seed": 0, **kwargs}
    with pytest.raises(ValueError, match=word):
        mezo_probes(params, squared_error, batch, **args)


def test_non_finite_loss_raises_after_restoring_the_weights():
    params, (x, y) = _linear_problem()
    before = params[0].clone()
    with pytest.raises(ValueError, match="non-finite"):
        mezo_probes(params, squared_error, (x, y * float("nan")), 2, 1e-3, seed=0, forward=mlp("identity"))
    assert (params[0] - before).abs().max() < 1e-12
    with pytest.raises(ValueError, match="lr"):
        mezo_step(params, squared_error, (x, y), 2, 1e-3, 0, lr=0.0)
