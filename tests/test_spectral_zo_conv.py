"""Convolutional support (spectral_zo.networks): the conv net against torch's own layers, probes batched equal
to a loop, every shape estimator aligned with autograd on a small conv net (and unbiased within standard
errors), MeZO on conv equal to batched central differences with its directions, and the activation-shaped
estimators refusing conv layers by name."""

import pytest
import torch

from neurips26.spectral_zo.estimators import squared_error
from neurips26.spectral_zo.mezo import directions, probe_seeds
from neurips26.spectral_zo.networks import (
    MLP,
    SHAPE_ESTIMATORS,
    ConvNet,
    backprop,
    central_gradient,
    check_supported,
    estimate,
    layer_kind,
    probe_losses,
)

DT = torch.float64
NET = ConvNet(in_channels=1, side=5, channels=(2,), strides=(2,), classes=2, activation="tanh")


def _problem(seed=0):
    g = torch.Generator().manual_seed(seed)
    params = NET.init(g, DT)
    x = torch.randn(6, 1, 5, 5, generator=g, dtype=DT)
    y = torch.randn(6, 2, generator=g, dtype=DT)
    return params, (x, y)


def test_conv_forward_matches_torch_modules():
    params, (x, _) = _problem()
    conv = torch.nn.Conv2d(1, 2, 3, stride=2, padding=1, bias=False).to(DT)
    head = torch.nn.Linear(18, 2, bias=False).to(DT)
    with torch.no_grad():
        conv.weight.copy_(params[0])
        head.weight.copy_(params[1])
    torch.testing.assert_close(NET.forward(params, x), head(torch.tanh(conv(x)).flatten(1)))
    assert [layer_kind(w) for w in params] == ["conv2d", "linear"] and NET.out_side() == 3


def test_batched_probe_losses_equal_a_loop():
    params, batch = _problem()
    g = torch.Generator().manual_seed(1)
    probes = [w + 0.1 * torch.randn((4, *w.shape), generator=g, dtype=DT) for w in params]
    looped = [squared_error(NET.forward([p[k] for p in probes], batch[0]), batch[1]).mean() for k in range(4)]
    torch.testing.assert_close(probe_losses(NET, probes, squared_error, batch), torch.stack(looped))


@pytest.mark.parametrize("name", sorted(SHAPE_ESTIMATORS))
def test_shape_estimators_align_with_autograd_per_layer_on_conv(name):
    params, batch = _problem()
    grads = backprop(NET, params, squared_error, batch)
    n_probes = 300 if name == "mezo" else 3000
    est = estimate(name, NET, params, squared_error, batch, n_probes, 1e-4, torch.Generator().manual_seed(2))
    for g, e in zip(grads, est):
        cos = float((g * e).sum() / (g.norm() * e.norm()))
        assert cos > (0.8 if name == "mezo" else 0.93)


@pytest.mark.parametrize("name", ["wp_global", "spsa", "forward_gradient"])
def test_conv_estimates_are_unbiased_within_standard_errors(name):
    params, batch = _problem()
    grads = backprop(NET, params, squared_error, batch)
    g = torch.Generator().manual_seed(5)
    draws = [estimate(name, NET, params, squared_error, batch, 100, 1e-4, g) for _ in range(30)]
    for index, grad in enumerate(grads):
        layer = torch.stack([d[index] for d in draws])
        mean, se = layer.mean(0), layer.std(0) / 30**0.5
        assert ((mean - grad).abs() / se).max() < 4.5
        assert ((2 * mean - grad).abs() / se).max() > 5  # a factor-2 bug is seen


def test_mezo_on_conv_equals_batched_central_differences_with_its_directions():
    from neurips26.spectral_zo.mezo import mezo_gradient

    params, batch = _problem()
    est = mezo_gradient(params, squared_error, batch, 3, 1e-3, seed=4, forward=NET.forward)
    ref = central_gradient(NET, params, squared_error, batch, directions(params, probe_seeds(4, 3)), 1e-3)
    for e, r in zip(est, ref):
        torch.testing.assert_close(e, r, rtol=1e-8, atol=1e-10)


@pytest.mark.parametrize("name", ["szo", "agzo", "node_perturbation"])
def test_activation_shaped_estimators_refuse_conv_layers_by_name(name):
    params, batch = _problem()
    with pytest.raises(ValueError, match=rf"{name}.*conv2d.*params\[0\]"):
        estimate(name, NET, params, squared_error, batch, 4, 1e-3, torch.Generator())


def test_mlp_estimates_dispatch_to_the_mlp_estimators_and_bad_inputs_fail():
    mlp = MLP((5, 4, 2), activation="tanh")
    params = mlp.init(torch.Generator().manual_seed(0), DT)
    batch = (torch.randn(8, 5, dtype=DT), torch.randn(8, 2, dtype=DT))
    a = estimate("szo", mlp, params, squared_error, batch, 3, 1e-3, torch.Generator().manual_seed(1), kappa=1.0)
    b = estimate("szo", mlp, params, squared_error, batch, 3, 1e-3, torch.Generator().manual_seed(1), kappa=0.0)
    assert not torch.allclose(a[0], b[0])  # the option reached SZO
    with pytest.raises(ValueError, match="kappa"):
        estimate("szo", mlp, params, squared_error, batch, 3, 1e-3, torch.Generator(), kappa=3.0)
    conv_params, conv_batch = _problem()
    with pytest.raises(ValueError, match="n_probes"):
        estimate("spsa", NET, conv_params, squared_error, conv_batch, 0, 1e-3, torch.Generator())
    with pytest.raises(ValueError, match="eps"):
        estimate("mezo", NET, conv_params, squared_error, conv_batch, 2, 0.0, torch.Generator())
    with pytest.raises(ValueError, match="estimator"):
        check_supported("backprop_typo", params)
