"""Paper 17's bound against GPyTorch's sparse variational GP bound (``VariationalELBO``): equal with the latents
known, and, with latent uncertainty, our closed-form psi-statistics equal GPyTorch's bound averaged over draws of
the latents (minus KL(q(X)))."""

from __future__ import annotations

import math

import pytest
import torch

from neurips26.gplvm_assvi.crosscheck import gpytorch_bound, our_bound_at_means
from neurips26.gplvm_assvi.elbo import elbo_terms

pytest.importorskip("gpytorch")
F64 = dict(dtype=torch.float64)


def _case(seed=0, n=30, d=4, q=2, m=6):
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(n, q, generator=g, **F64)
    y = torch.randn(n, d, generator=g, **F64)
    mask = torch.rand(n, d, generator=g) > 0.2
    z = torch.randn(m, q, generator=g, **F64)
    mean = torch.randn(d, m, generator=g, **F64)
    chol = torch.tril(0.3 * torch.randn(d, m, m, generator=g, **F64), -1) + torch.diag_embed(
        0.5 + torch.rand(d, m, generator=g, **F64)
    )
    params = torch.tensor(1.3, **F64), torch.tensor([0.7, 2.0], **F64), torch.tensor(20.0, **F64)
    return x, torch.where(mask, y, torch.nan), mask, z, mean, chol, params


@pytest.mark.parametrize("seed", [0, 1])
def test_with_known_latents_our_bound_equals_gpytorchs(seed):
    x, y, mask, z, m, chol, (var, alpha, beta) = _case(seed)
    ours = our_bound_at_means(x, y, mask, z, m, chol, var, alpha, beta)
    theirs = gpytorch_bound(x, y, mask, z, m, chol, var, alpha, beta)
    assert math.isclose(ours, theirs, rel_tol=1e-9), (ours, theirs)


def test_a_different_q_u_changes_gpytorchs_bound_so_the_comparison_can_fail():
    x, y, mask, z, m, chol, (var, alpha, beta) = _case(2)
    ours = our_bound_at_means(x, y, mask, z, m, chol, var, alpha, beta)
    theirs = gpytorch_bound(x, y, mask, z, m + 0.1, chol, var, alpha, beta)
    assert not math.isclose(ours, theirs, rel_tol=1e-4)


def test_with_latent_uncertainty_our_psi_bound_is_gpytorchs_averaged_over_latent_draws():
    x, y, mask, z, m, chol, (var, alpha, beta) = _case(3, n=12)
    s = 0.05 + 0.1 * torch.rand(x.shape, generator=torch.Generator().manual_seed(4), **F64)
    terms = elbo_terms(y, mask, x, s, z, m, chol, var, alpha, beta)
    g = torch.Generator().manual_seed(5)
    draws = [
        gpytorch_bound(x + s.sqrt() * torch.randn(x.shape, generator=g, **F64), y, mask, z, m, chol, var, alpha, beta)
        for _ in range(400)
    ]
    mc = torch.tensor(draws, **F64)
    stderr = float(mc.std() / math.sqrt(len(mc)))
    assert abs(float(mc.mean()) - float(terms["likelihood"] - terms["kl_u"])) < 4 * stderr, (mc.mean(), terms, stderr)


def test_the_pipelines_psi_check_agrees_with_gpytorch_over_latent_draws_and_sees_a_missing_variance():
    from neurips26.gplvm_assvi.crosscheck import _z, gpytorch_bounds, psi_bound_z

    x, y, mask, z, m, chol, (var, alpha, beta) = _case(6, n=12)
    s = 0.05 + 0.1 * torch.rand(x.shape, generator=torch.Generator().manual_seed(7), **F64)
    args = (y, mask, z, m, chol, var, alpha, beta)
    assert abs(psi_bound_z(x, s, *args, draws=200, generator=torch.Generator().manual_seed(8))) < 4
    # the same draws against psi-statistics of latents half a unit away: the check sees the difference
    g = torch.Generator().manual_seed(8)
    draws = gpytorch_bounds([x + s.sqrt() * torch.randn(x.shape, generator=g, **F64) for _ in range(200)], *args)
    wrong = elbo_terms(y, mask, x + 0.5, s, z, m, chol, var, alpha, beta)
    assert abs(_z(float(wrong["likelihood"] - wrong["kl_u"]), torch.tensor(draws, **F64))) > 4


def test_the_structured_bound_given_u_is_its_monte_carlo_and_the_check_fails_for_a_wrong_u():
    from neurips26.gplvm_assvi.crosscheck import structured_given_u_z

    x, y, mask, z, m, chol, (var, alpha, beta) = _case(9, n=20)
    s = 0.05 + 0.1 * torch.rand(x.shape, generator=torch.Generator().manual_seed(10), **F64)
    u = m + torch.einsum("dij,dj->di", chol, torch.randn(m.shape, generator=torch.Generator().manual_seed(11), **F64))
    z_ok = structured_given_u_z(x, s, u, y, mask, z, var, alpha, beta, 400, torch.Generator().manual_seed(12))
    assert abs(z_ok) < 4, z_ok
    from neurips26.gplvm_assvi.elbo import inducing_inverse, local_bound_given_u

    _, k_inv = inducing_inverse(z, var, alpha)
    closed_other_u = local_bound_given_u(y, mask, x, s, z, u + 0.3, k_inv, var, alpha, beta)
    closed_same_u = local_bound_given_u(y, mask, x, s, z, u, k_inv, var, alpha, beta)
    assert not torch.allclose(closed_other_u.sum(), closed_same_u.sum(), rtol=1e-3)
