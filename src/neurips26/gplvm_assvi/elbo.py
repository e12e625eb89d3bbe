r"""The mean-field Bayesian GPLVM's uncollapsed evidence lower bound (Titsias & Lawrence 2010; Hensman, Fusi &
Lawrence 2013 for the explicit q(U)), the baseline of paper 17.

Model: ``x_n ~ N(0, I_Q)``, ``f_d ~ GP(0, k)`` (SE-ARD, :mod:`.psi`), ``y_nd = f_d(x_n) + N(0, 1/beta)``, inducing
outputs ``u_d = f_d(Z) ~ N(0, K_MM)``. Variational family ``q(U) q(X) = prod_d N(u_d | m_d, S_d)
prod_n N(x_n | mu_n, diag(s_n))``, ``S_d = L_d L_d^T``. With ``A = K_MM^-1``:

    ELBO = sum_{n,d} [ -1/2 log(2 pi / beta)
                       - beta/2 (y_nd^2 - 2 y_nd psi1_n A m_d + tr(A psi2_n A (m_d m_d^T + S_d))) ]
           - beta/2 D sum_n (psi0_n - tr(A psi2_n))
           - sum_d KL(N(m_d, S_d) || N(0, K_MM)) - sum_n KL(N(mu_n, diag s_n) || N(0, I))

Observed entries only: a missing ``y_nd`` (``mask`` False) drops its likelihood term and its share of the trace
correction. :func:`optimal_q_u` is Titsias's optimal ``q(U)`` for given statistics; with it, ``Z = X`` and
``s = 0`` the data part of the bound is the exact log marginal likelihood ``log N(y_d | 0, K + I / beta)`` (the
test's closed form).
"""

from __future__ import annotations

import math

import torch

from .psi import psi0, psi1, psi2, se_ard

__all__ = [
    "ElboTerms", "draw_u", "elbo_terms", "gaussian_kl", "inducing_covariance", "inducing_inverse",
    "local_bound_given_u", "local_bound_integrated", "optimal_q_u", "structured_elbo",
]  # fmt: skip

JITTER = 1e-6


def inducing_covariance(z, variance, alpha):
    """K_MM of the inducing inputs with a relative jitter on the diagonal."""
    k = se_ard(z, z, variance, alpha)
    return k + JITTER * variance * torch.eye(len(z), dtype=z.dtype, device=z.device)


def _check_observed(y: torch.Tensor, mask: torch.Tensor) -> None:
    if mask.shape != y.shape:
        raise ValueError(f"mask {tuple(mask.shape)} does not match y {tuple(y.shape)}")
    if (torch.isnan(y) & mask).any():  # no boolean indexing: its shape depends on the values
        raise ValueError("y has NaN outside the declared missing mask")


def gaussian_kl(m: torch.Tensor, chol_s: torch.Tensor, k: torch.Tensor) -> torch.Tensor:
    """Sum over d of KL(N(m_d, L_d L_d^T) || N(0, K)); m (D, M), chol_s (D, M, M) lower triangular."""
    lk = torch.linalg.cholesky(k)
    m_dim = k.shape[0]
    a = torch.cholesky_solve(torch.eye(m_dim, dtype=k.dtype, device=k.device), lk)  # K^-1
    trace = torch.einsum("ij,dik,djk->d", a, chol_s, chol_s)  # tr(K^-1 L L^T)
    maha = torch.einsum("di,ij,dj->d", m, a, m)
    logdet_k = 2 * torch.log(torch.diagonal(lk)).sum()
    logdet_s = 2 * torch.log(torch.abs(torch.diagonal(chol_s, dim1=-2, dim2=-1))).sum(-1)
    return 0.5 * (trace + maha - m_dim + logdet_k - logdet_s).sum()


class ElboTerms(dict):
    """``likelihood`` (expected log-likelihood with the trace correction), ``kl_u``, ``kl_x`` and ``elbo``."""


def elbo_terms(y, mask, mu, s, z, m, chol_s, variance, alpha, beta) -> ElboTerms:
    """The terms of the module docstring's bound; y (N, D) with NaN allowed where ``mask`` (N, D) is False."""
    _check_observed(y, mask)
    obs = mask.to(y.dtype)
    y0 = torch.where(mask, y, torch.zeros_like(y))
    k = inducing_covariance(z, variance, alpha)
    lk = torch.linalg.cholesky(k)
    a = torch.cholesky_solve(torch.eye(len(z), dtype=y.dtype, device=y.device), lk)
    p0, p1, p2 = psi0(mu, variance), psi1(mu, s, z, variance, alpha), psi2(mu, s, z, variance, alpha)
    mean = p1 @ a @ m.T  # (N, D): E[a_n^T u_d]
    second = m[:, :, None] * m[:, None, :] + chol_s @ chol_s.transpose(-1, -2)  # (D, M, M)
    p2_obs = torch.einsum("nd,nij->dij", obs, p2)  # sum of psi2_n over the points observing output d
    quad = torch.einsum("dij,dji->", p2_obs, a @ second @ a)  # sum_{n,d observed} tr(A psi2_n A (m m^T + S))
    trace_gap = (p0[:, None] * obs).sum() - torch.einsum("ij,dji->", a, p2_obs)  # sum of psi0_n - tr(A psi2_n)
    per_entry = -0.5 * math.log(2 * math.pi) + 0.5 * torch.log(beta) - 0.5 * beta * (y0**2 - 2 * y0 * mean)
    likelihood = (per_entry * obs).sum() - 0.5 * beta * (quad + trace_gap)
    kl_u = gaussian_kl(m, chol_s, k)
    kl_x = 0.5 * (s + mu**2 - 1 - torch.log(s)).sum() if torch.all(s > 0) else torch.tensor(float("nan"))
    return ElboTerms(likelihood=likelihood, kl_u=kl_u, kl_x=kl_x, elbo=likelihood - kl_u - kl_x)


def optimal_q_u(y, mu, s, z, variance, alpha, beta) -> tuple[torch.Tensor, torch.Tensor]:
    """Titsias's optimal q(u_d) for fully observed y: ``S = K (K + beta Psi2)^-1 K`` and
    ``m_d = beta K (K + beta Psi2)^-1 Psi1^T y_d``; returns (m (D, M), chol S (D, M, M))."""
    k = inducing_covariance(z, variance, alpha)
    p1, p2 = psi1(mu, s, z, variance, alpha), psi2(mu, s, z, variance, alpha).sum(0)
    sigma = k + beta * p2
    s_opt = k @ torch.linalg.solve(sigma, k)
    m = beta * (k @ torch.linalg.solve(sigma, p1.T @ y)).T
    chol = torch.linalg.cholesky(0.5 * (s_opt + s_opt.T))
    return m, chol.expand(y.shape[1], *chol.shape).clone()


def local_bound_given_u(y, mask, mu, s, z, u, k_inv, variance, alpha, beta) -> torch.Tensor:
    r"""(N,) each point's term of the structured bound given a draw U (D, M) of the inducing outputs:

        E_q(x_n)[ sum_d log N(y_nd | a_n^T u_d, 1/beta) ] - beta/2 sum_d (psi0_n - tr(A psi2_n)) - KL(q(x_n) || N(0, I))

    over the observed entries (``mask``), with ``A = k_inv = K_MM^-1``, ``E[a_n] = A psi1_n`` and ``E[a_n a_n^T] =
    A psi2_n A`` (closed form in x_n). Given U the bound separates over the points: this is what the inner updates of
    the local latents maximise (the reference's ``local_step``)."""
    obs = mask.to(y.dtype)
    y0 = torch.where(mask, y, torch.zeros_like(y))
    p0, p1, p2 = psi0(mu, variance), psi1(mu, s, z, variance, alpha), psi2(mu, s, z, variance, alpha)
    au = u @ k_inv  # (D, M): A u_d (A symmetric)
    mean = p1 @ au.T  # (N, D)
    quad = ((p2 @ au.T) * au.T).sum(1)  # (N, D): u_d^T A psi2_n A u_d
    trace_gap = p0 - (p2 * k_inv).sum((1, 2))  # psi0_n - tr(A psi2_n)
    per_entry = -0.5 * math.log(2 * math.pi) + 0.5 * torch.log(beta) - 0.5 * beta * (y0**2 - 2 * y0 * mean + quad)
    likelihood = (per_entry * obs).sum(1) - 0.5 * beta * trace_gap * obs.sum(1)
    return likelihood - 0.5 * (s + mu**2 - 1 - torch.log(s)).sum(1)


def local_bound_integrated(y, mask, mu, s, z, m, chol_s, k_inv, variance, alpha, beta) -> torch.Tensor:
    """(N,) each point's term of the mean-field bound of :func:`elbo_terms` (q(U) integrated in closed form):
    :func:`local_bound_given_u` with ``u_d u_d^T`` replaced by its expectation ``m_d m_d^T + S_d``; what the
    inner updates of the ablation whose posterior cannot depend on U maximise."""
    obs = mask.to(y.dtype)
    y0 = torch.where(mask, y, torch.zeros_like(y))
    p0, p1, p2 = psi0(mu, variance), psi1(mu, s, z, variance, alpha), psi2(mu, s, z, variance, alpha)
    mean = p1 @ k_inv @ m.T
    second = m[:, :, None] * m[:, None, :] + chol_s @ chol_s.transpose(-1, -2)
    quad = p2.flatten(1) @ (k_inv @ second @ k_inv).flatten(1).T  # (N, D): tr(A psi2_n A E[u_d u_d^T])
    trace_gap = p0 - (p2 * k_inv).sum((1, 2))
    per_entry = -0.5 * math.log(2 * math.pi) + 0.5 * torch.log(beta) - 0.5 * beta * (y0**2 - 2 * y0 * mean + quad)
    likelihood = (per_entry * obs).sum(1) - 0.5 * beta * trace_gap * obs.sum(1)
    return likelihood - 0.5 * (s + mu**2 - 1 - torch.log(s)).sum(1)


def inducing_inverse(z, variance, alpha) -> tuple[torch.Tensor, torch.Tensor]:
    """(K_MM, K_MM^-1) by Cholesky."""
    k = inducing_covariance(z, variance, alpha)
    lk = torch.linalg.cholesky(k)
    return k, torch.cholesky_solve(torch.eye(len(z), dtype=z.dtype, device=z.device), lk)


def draw_u(m, chol_s, generator=None) -> torch.Tensor:
    """One reparameterised draw U (D, M) of q(U), its noise drawn on the host by ``generator`` (a CPU generator)
    and then moved: the same draws on any device."""
    eps = torch.randn(m.shape, dtype=m.dtype, generator=generator).to(m.device)
    return m + torch.einsum("dij,dj->di", chol_s, eps)


def structured_elbo(y, mask, latent_given_u, z, m, chol_s, variance, alpha, beta, samples: int, generator=None,
                    scale: float = 1.0):  # fmt: skip
    r"""The structured bound of paper 17, ``q(U, X) = q(U) prod_n q(x_n | y_n, U)``, estimated with ``samples``
    reparameterised draws ``U ~ q(U)`` (Hoffman & Blei 2015's "global sample, then local conditional"):

        E_q(U)[ sum_n local_n(U) ] - KL(q(U) || p(U)),   local_n(U) of :func:`local_bound_given_u`

    ``latent_given_u(U)`` returns (mu (N, Q), s (N, Q)) of ``q(x_n | y_n, U)`` for a draw U (D, M). Missing entries
    drop their terms as in :func:`elbo_terms`. With a ``latent_given_u`` that ignores U this is an unbiased estimate
    of the mean-field bound. ``scale`` multiplies the per-point terms (N / B for a minibatch of B of N points)."""
    _check_observed(y, mask)
    if samples < 1:
        raise ValueError(f"need at least one sample of U, got {samples}")
    k, k_inv = inducing_inverse(z, variance, alpha)
    total = 0.0
    for _ in range(samples):
        u = draw_u(m, chol_s, generator)
        mu, s = latent_given_u(u)
        total = total + local_bound_given_u(y, mask, mu, s, z, u, k_inv, variance, alpha, beta).sum()
    return scale * total / samples - gaussian_kl(m, chol_s, k)
