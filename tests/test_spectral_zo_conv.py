"""Convolutional support (spectral_zo.networks): the conv net against torch's own layers, probes batched equal
to a loop, every shape estimator aligned with autograd on a small conv net (and unbiased within standard
errors), MeZO on conv equal to batched central differences with its directions; the activation-shaped estimators
on im2col patches (SZO: E = G C^kappa in the unfolded basis, AGZO: G U U^T, node perturbation: G, Monte Carlo within
standard errors, and aligned with autograd on a two-conv-layer net); a weight neither linear nor conv2d refused by
name."""

import pytest
import torch

from neurips26.spectral_zo.estimators import activation_subspace, spectral_expectation, squared_error
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
    patch_rows,
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


def test_layer_inputs_are_the_im2col_patches_of_each_layer():
    net = ConvNet(in_channels=2, side=5, channels=(3, 2), strides=(1, 2), classes=2, activation="tanh")
    params = net.init(torch.Generator().manual_seed(0), DT)
    x = torch.randn(4, 2, 5, 5, generator=torch.Generator().manual_seed(1), dtype=DT)
    patches = net.layer_inputs(params, x)
    assert [tuple(p.shape) for p in patches] == [(4, 18, 25), (4, 27, 9), (4, 18, 1)]
    h0 = torch.nn.functional.conv2d(x, params[0], padding=1)
    torch.testing.assert_close(params[0].reshape(3, -1) @ patches[0], h0.flatten(2))
    h1 = torch.nn.functional.conv2d(torch.tanh(h0), params[1], padding=1, stride=2)
    torch.testing.assert_close(params[1].reshape(2, -1) @ patches[1], h1.flatten(2))
    assert patch_rows(patches[0]).shape == (100, 18)
    torch.testing.assert_close((params[2] @ patches[2]).squeeze(-1), net.forward(params, x))


LINEAR_NET = ConvNet(in_channels=1, side=5, channels=(2,), strides=(2,), classes=2, activation="identity")


def _draws(name, net, n_draws=30, n_probes=200, seed=5, eps=1e-4, **options):
    g = torch.Generator().manual_seed(seed)
    params, batch = _problem()
    params = net.init(torch.Generator().manual_seed(0), DT) if net is not NET else params
    draws = [estimate(name, net, params, squared_error, batch, n_probes, eps, g, **options) for _ in range(n_draws)]
    stacks = [torch.stack([d[i] for d in draws]) for i in range(len(params))]
    return params, batch, [(t.mean(0), t.std(0) / n_draws**0.5) for t in stacks]


def _z(mean_se, expected):
    mean, se = mean_se
    return float(((mean - expected).abs() / (se + 1e-12)).max())


@pytest.mark.parametrize(("kappa", "normalise"), [(1.0, "mean"), (2.0, "top")])
def test_conv_szo_mean_is_g_times_the_im2col_moment_to_the_kappa(kappa, normalise):
    params, batch, stats = _draws("szo", LINEAR_NET, kappa=kappa, normalise=normalise)
    grads = backprop(LINEAR_NET, params, squared_error, batch)
    rows = [patch_rows(p) for p in LINEAR_NET.layer_inputs(params, batch[0])]
    expected = spectral_expectation(grads, rows, kappa=kappa, normalise=normalise)
    for mean_se, e, g in zip(stats, expected, grads):
        assert e.shape == g.shape
        assert _z(mean_se, e) < 4.5
        assert _z(mean_se, g * (e.norm() / g.norm())) > 8  # the stated bias is seen: not the gradient direction


def test_conv_szo_bias_correction_and_kappa_zero():
    params, batch, stats = _draws("szo", LINEAR_NET, kappa=1.0, bias_correction=True)
    grads = backprop(LINEAR_NET, params, squared_error, batch)
    rows = [patch_rows(p) for p in LINEAR_NET.layer_inputs(params, batch[0])]
    expected = spectral_expectation(grads, rows, kappa=1.0, bias_correction=True)
    for mean_se, e in zip(stats, expected):
        assert _z(mean_se, e) < 4.5
    # kappa = 0 is the Gaussian weight perturbation with the same draws, bitwise
    g0, g1 = torch.Generator().manual_seed(3), torch.Generator().manual_seed(3)
    szo0 = estimate("szo", LINEAR_NET, params, squared_error, batch, 4, 1e-3, g0, kappa=0.0)
    wp = estimate("wp_global", LINEAR_NET, params, squared_error, batch, 4, 1e-3, g1)
    assert all(torch.equal(a, b) for a, b in zip(szo0, wp))


def test_conv_agzo_mean_is_gradient_projected_on_the_patch_subspace():
    params, batch, stats = _draws("agzo", LINEAR_NET, rank=3)
    grads = backprop(LINEAR_NET, params, squared_error, batch)
    rows = [patch_rows(p) for p in LINEAR_NET.layer_inputs(params, batch[0])]
    for (mean, se), g, r in zip(stats, grads, rows):
        basis = activation_subspace(r, 3)
        flat = g.reshape(g.shape[0], -1)
        assert _z((mean, se), (flat @ basis @ basis.T).reshape(g.shape)) < 4.5
        outside = mean.reshape(g.shape[0], -1) @ (torch.eye(basis.shape[0], dtype=DT) - basis @ basis.T)
        assert outside.norm() < 1e-8 * mean.norm()  # every draw lies in the subspace
        assert _z((mean, se), g) > 8  # rank 3 < n_in: the projection's bias is seen


def test_conv_node_perturbation_is_unbiased():
    params, batch, stats = _draws("node_perturbation", LINEAR_NET)
    for (mean, se), g in zip(stats, backprop(LINEAR_NET, params, squared_error, batch)):
        assert _z((mean, se), g) < 4.5
        assert _z((mean, se), 1.5 * g) > 5  # a scale bug is seen


TWO_CONV = ConvNet(in_channels=1, side=5, channels=(2, 3), strides=(1, 2), classes=2, activation="tanh")


@pytest.mark.parametrize(
    ("name", "options"),
    [("node_perturbation", {}), ("szo", {"kappa": 1.0, "normalise": "top"}), ("agzo", {"rank": 9})],
)
def test_patch_estimators_align_with_autograd_on_two_conv_layers(name, options):
    params = TWO_CONV.init(torch.Generator().manual_seed(0), DT)
    g = torch.Generator().manual_seed(1)
    batch = (torch.randn(6, 1, 5, 5, generator=g, dtype=DT), torch.randn(6, 2, generator=g, dtype=DT))
    grads = backprop(TWO_CONV, params, squared_error, batch)
    est = estimate(name, TWO_CONV, params, squared_error, batch, 3000, 1e-4, torch.Generator().manual_seed(2),
                   **options)  # fmt: skip
    rows = [patch_rows(p) for p in TWO_CONV.layer_inputs(params, batch[0])]
    if name == "szo":  # E = G (C/s)^kappa from autograd's G and the patches' moments
        grads = spectral_expectation(grads, rows, **options)
    for index, (gr, e, r) in enumerate(zip(grads, est, rows)):
        if name == "agzo":  # E = G U U^T: aligned with the projected gradient (full rank at the first layer)
            basis = activation_subspace(r, 9)
            gr = (gr.reshape(gr.shape[0], -1) @ basis @ basis.T).reshape(gr.shape)
        assert float((gr * e).sum() / (gr.norm() * e.norm())) > 0.9, index


def test_only_weights_neither_linear_nor_conv2d_are_refused_by_name():
    params, batch = _problem()
    for name in ("szo", "agzo", "node_perturbation", "wp_global"):
        check_supported(name, params)  # conv2d and linear: supported by every estimator
    conv1d = [torch.zeros(2, 1, 3, dtype=DT)]
    with pytest.raises(ValueError, match=r"shape \(2, 1, 3\) is neither a linear nor a conv2d layer"):
        check_supported("szo", conv1d)
    with pytest.raises(ValueError, match="rank must be <= 9"):
        estimate("agzo", NET, params, squared_error, batch, 2, 1e-3, torch.Generator(), rank=10)
    with pytest.raises(ValueError, match="kappa"):
        estimate("szo", NET, params, squared_error, batch, 2, 1e-3, torch.Generator(), kappa=2.5)


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
