"""Forward gradients (spectral_zo.forward_gradient): exact directional derivatives against autograd, unbiased
against autograd within standard errors on a linear layer and a two-layer tanh network, bad inputs rejected."""

import pytest
import torch

from neurips26.spectral_zo.estimators import cross_entropy, squared_error, true_gradient
from neurips26.spectral_zo.forward_gradient import forward_gradient, tangent_derivatives
from neurips26.spectral_zo.mezo import mlp

DT = torch.float64


def _network(widths, seed, batch_size=12, classes=False):
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(batch_size, widths[0], generator=g, dtype=DT)
    if classes:
        y = torch.randint(0, widths[-1], (batch_size,), generator=g)
    else:
        y = torch.randn(batch_size, widths[-1], generator=g, dtype=DT)
    params = [0.8 * torch.randn(o, i, generator=g, dtype=DT) for i, o in zip(widths[:-1], widths[1:])]
    return params, (x, y)


def test_directional_derivatives_are_exact_inner_products_with_the_gradient():
    params, batch = _network((4, 5, 3), seed=2, classes=True)
    grads = true_gradient(params, cross_entropy, batch, "tanh")
    g = torch.Generator().manual_seed(0)
    tangents = [torch.randn((6, *w.shape), generator=g, dtype=DT) for w in params]
    slopes = tangent_derivatives(params, cross_entropy, batch, tangents, mlp("tanh"))
    expected = sum(torch.einsum("koi,oi->k", v, gr) for v, gr in zip(tangents, grads))
    torch.testing.assert_close(slopes, expected, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("widths, activation", [((5, 3), "identity"), ((4, 6, 2), "tanh")])
def test_mean_is_the_autograd_gradient_within_standard_errors(widths, activation):
    params, batch = _network(widths, seed=1)
    grads = true_gradient(params, squared_error, batch, activation)
    g = torch.Generator().manual_seed(3)
    draws = [forward_gradient(params, squared_error, batch, 50, None, g, activation=activation) for _ in range(40)]
    for index, grad in enumerate(grads):
        layer = torch.stack([d[index] for d in draws])
        mean, se = layer.mean(0), layer.std(0) / 40**0.5
        assert ((mean - grad).abs() / se).max() < 4.5
        # a sign or scale bug is many standard errors off
        assert ((0.5 * mean - grad).abs() / se).max() > 5


def test_bad_inputs_rejected():
    params, batch = _network((5, 3), seed=0)
    with pytest.raises(ValueError, match="n_probes"):
        forward_gradient(params, squared_error, batch, 0)
    x, y = batch
    with pytest.raises(ValueError, match="non-finite"):
        forward_gradient(params, squared_error, (x, y * float("nan")), 2)
