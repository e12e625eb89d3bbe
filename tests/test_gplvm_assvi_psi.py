"""Paper 17's psi-statistics against Monte Carlo expectations and their deterministic limits."""

from __future__ import annotations

import pytest
import torch

from neurips26.gplvm_assvi.psi import psi0, psi1, psi2, se_ard


def _case(seed=0, n=3, m=4, q=2):
    g = torch.Generator().manual_seed(seed)
    mu = torch.randn(n, q, generator=g, dtype=torch.float64)
    s = 0.1 + torch.rand(n, q, generator=g, dtype=torch.float64)
    z = torch.randn(m, q, generator=g, dtype=torch.float64)
    return mu, s, z, torch.tensor(1.7, dtype=torch.float64), torch.tensor([0.8, 2.5], dtype=torch.float64)[:q]


def test_the_closed_forms_equal_monte_carlo_expectations():
    mu, s, z, var, alpha = _case()
    g = torch.Generator().manual_seed(1)
    x = mu[None] + s.sqrt()[None] * torch.randn(200_000, *mu.shape, generator=g, dtype=torch.float64)  # (S, N, Q)
    k = torch.stack([se_ard(x[:, n], z, var, alpha) for n in range(mu.shape[0])], 1)  # (S, N, M)
    torch.testing.assert_close(psi1(mu, s, z, var, alpha), k.mean(0), rtol=0, atol=6e-3)
    torch.testing.assert_close(
        psi2(mu, s, z, var, alpha), (k[..., :, None] * k[..., None, :]).mean(0), rtol=0, atol=1e-2
    )
    assert torch.equal(psi0(mu, var), torch.full((3,), 1.7, dtype=torch.float64))


def test_zero_latent_variance_gives_the_kernel_itself():
    mu, s, z, var, alpha = _case(seed=2)
    k = se_ard(mu, z, var, alpha)
    torch.testing.assert_close(psi1(mu, torch.zeros_like(s), z, var, alpha), k)
    torch.testing.assert_close(psi2(mu, torch.zeros_like(s), z, var, alpha), k[:, :, None] * k[:, None, :])


def test_psi2_is_symmetric_and_gradients_flow():
    mu, s, z, var, alpha = _case(seed=3)
    for t in (mu, s, z):
        t.requires_grad_(True)
    p2 = psi2(mu, s, z, var, alpha)
    torch.testing.assert_close(p2, p2.transpose(1, 2))
    p2.sum().backward()
    assert all(t.grad is not None and torch.isfinite(t.grad).all() for t in (mu, s, z))


def test_bad_kernel_parameters_and_negative_variances_are_refused():
    mu, s, z, var, alpha = _case()
    with pytest.raises(ValueError, match="alpha_q > 0"):
        psi1(mu, s, z, var, -alpha)
    with pytest.raises(ValueError, match="latent variances"):
        psi2(mu, -s, z, var, alpha)


@pytest.mark.parametrize("q", [2, 6])  # 6 latent dimensions take the batched-matmul branch
def test_psi2_equals_titsias_and_lawrences_per_dimension_formula(q):
    g = torch.Generator().manual_seed(q)
    mu, z = torch.randn(5, q, generator=g, dtype=torch.float64), torch.randn(7, q, generator=g, dtype=torch.float64)
    s = 0.05 + torch.rand(5, q, generator=g, dtype=torch.float64)
    var, alpha = torch.tensor(1.3, dtype=torch.float64), 0.3 + torch.rand(q, generator=g, dtype=torch.float64)
    denom = 1 + 2 * alpha * s  # the (N, M, M, Q) form of the module docstring, written out
    zbar = 0.5 * (z[:, None, :] + z[None, :, :])
    zd = (z[:, None, :] - z[None, :, :]) ** 2
    log = (-0.25 * alpha * zd)[None] - alpha * (mu[:, None, None, :] - zbar[None]) ** 2 / denom[:, None, None, :]
    expected = var**2 * torch.exp((log - 0.5 * torch.log(denom)[:, None, None, :]).sum(-1))
    torch.testing.assert_close(psi2(mu, s, z, var, alpha), expected, rtol=1e-12, atol=1e-14)
