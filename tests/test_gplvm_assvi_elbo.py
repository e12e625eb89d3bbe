"""Paper 17's mean-field bound against a closed form: with inducing inputs at the (known) latent points, no latent
uncertainty and Titsias's optimal q(U), its data part is the exact GP log marginal likelihood."""

from __future__ import annotations

import pytest
import torch

from neurips26.gplvm_assvi.elbo import elbo_terms, optimal_q_u
from neurips26.gplvm_assvi.psi import se_ard

F64 = dict(dtype=torch.float64)


def _data(n=6, q=2, d=3, seed=0):
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(n, q, generator=g, **F64)
    y = torch.randn(n, d, generator=g, **F64)
    return x, y, torch.tensor(1.3, **F64), torch.tensor([0.7, 1.9], **F64), torch.tensor(4.0, **F64)


def test_with_z_at_the_latents_and_no_latent_uncertainty_the_bound_is_the_exact_marginal_likelihood():
    x, y, var, alpha, beta = _data()
    s = torch.zeros_like(x)
    m, chol = optimal_q_u(y, x, s, x, var, alpha, beta)
    terms = elbo_terms(y, torch.ones_like(y, dtype=torch.bool), x, s, x, m, chol, var, alpha, beta)
    cov = se_ard(x, x, var, alpha) + torch.eye(len(x), **F64) / beta
    exact = sum(
        torch.distributions.MultivariateNormal(torch.zeros(len(x), **F64), cov).log_prob(y[:, j]) for j in range(3)
    )
    torch.testing.assert_close(terms["likelihood"] - terms["kl_u"], exact, rtol=1e-5, atol=1e-5)


def test_a_suboptimal_q_u_gives_a_lower_bound():
    x, y, var, alpha, beta = _data(seed=1)
    s = 0.05 * torch.ones_like(x)
    z = x[:4]
    mask = torch.ones_like(y, dtype=torch.bool)
    m, chol = optimal_q_u(y, x, s, z, var, alpha, beta)
    best = elbo_terms(y, mask, x, s, z, m, chol, var, alpha, beta)["elbo"]
    worse = elbo_terms(y, mask, x, s, z, m + 0.3, chol, var, alpha, beta)["elbo"]
    assert worse < best


def test_missing_entries_drop_their_terms_and_nan_outside_the_mask_is_refused():
    x, y, var, alpha, beta = _data(seed=2)
    s = 0.1 * torch.ones_like(x)
    mask = torch.ones_like(y, dtype=torch.bool)
    mask[0, 1] = False
    m, chol = optimal_q_u(y, x, s, x[:3], var, alpha, beta)
    with_value = elbo_terms(y, mask, x, s, x[:3], m, chol, var, alpha, beta)["likelihood"]
    y_nan = y.clone()
    y_nan[0, 1] = float("nan")
    assert elbo_terms(y_nan, mask, x, s, x[:3], m, chol, var, alpha, beta)["likelihood"] == with_value
    with pytest.raises(ValueError, match="NaN outside the declared missing mask"):
        elbo_terms(y_nan, torch.ones_like(mask), x, s, x[:3], m, chol, var, alpha, beta)


def test_the_structured_bound_with_a_posterior_that_ignores_u_estimates_the_mean_field_bound():
    from neurips26.gplvm_assvi.elbo import structured_elbo

    x, y, var, alpha, beta = _data(seed=4)
    s = 0.2 * torch.ones_like(x)
    z = x[:4] + 0.1
    mask = torch.ones_like(y, dtype=torch.bool)
    mask[1, 2] = False
    m, chol = optimal_q_u(y, x, s, z, var, alpha, beta)
    m = m + 0.2  # a q(U) that is not the optimum
    mean_field = elbo_terms(y, mask, x, s, z, m, chol, var, alpha, beta)["elbo"]
    g = torch.Generator().manual_seed(0)
    estimate = structured_elbo(y, mask, lambda u: (x, s), z, m, chol, var, alpha, beta, samples=4000, generator=g)
    torch.testing.assert_close(estimate, mean_field, rtol=0, atol=0.15)  # 4 Monte Carlo standard errors (0.037)
    with pytest.raises(ValueError, match="at least one sample"):
        structured_elbo(y, mask, lambda u: (x, s), z, m, chol, var, alpha, beta, samples=0)


def test_the_structured_bound_is_the_average_over_its_u_draws_of_the_bound_given_u():
    """Given a draw U, q(U) is a point mass: the bound's data part is elbo_terms' likelihood minus KL(q(x | U)) with
    S = 0 and m = U; averaged over the same draws, minus KL(q(U)), it is the structured bound, for a posterior whose
    latents move with U."""
    from neurips26.gplvm_assvi.elbo import gaussian_kl, inducing_covariance, structured_elbo

    x, y, var, alpha, beta = _data(seed=6, n=8)
    z = x[:4] + 0.05
    mask = torch.ones_like(y, dtype=torch.bool)
    mask[2, 1] = False
    y = torch.where(mask, y, torch.nan)
    m, chol = optimal_q_u(torch.nan_to_num(y), x, 0.1 * torch.ones_like(x), z, var, alpha, beta)
    chol = chol + 0.05 * torch.eye(4, **F64)

    def posterior(u):
        return x + 0.3 * torch.tanh(u.sum(0)[:2]), 0.1 + 0.05 * torch.sigmoid(u[:, :2].sum(0)).expand_as(x)

    draws = 5
    bound = structured_elbo(y, mask, posterior, z, m, chol, var, alpha, beta, draws, torch.Generator().manual_seed(3))
    g, total = torch.Generator().manual_seed(3), 0.0
    for _ in range(draws):
        u = m + torch.einsum("dij,dj->di", chol, torch.randn(m.shape, generator=g, **F64))
        mu, s = posterior(u)
        terms = elbo_terms(y, mask, mu, s, z, u, torch.zeros_like(chol), var, alpha, beta)
        total = total + terms["likelihood"] - terms["kl_x"]
    expected = total / draws - gaussian_kl(m, chol, inducing_covariance(z, var, alpha))
    torch.testing.assert_close(bound, expected, rtol=1e-10, atol=1e-10)
