r"""The SE-ARD kernel and its psi-statistics under a Gaussian latent posterior, the closed forms behind the Bayesian
GPLVM's bound (Titsias & Lawrence 2010, "Bayesian Gaussian Process Latent Variable Model", AISTATS, eqs. 15-16;
the same statistics as GPy's ``psi_comp/rbf_psi_comp`` and the reference ``maxtretiakov/gp_lvm_ssvi``'s
``gp_lvm_ssvi_core.py``).

Kernel: ``k(x, x') = variance * exp(-1/2 sum_q alpha_q (x_q - x'_q)^2)`` with ARD precisions ``alpha`` (the
inverse squared lengthscales). For ``q(x_n) = N(mu_n, diag(s_n))`` and inducing inputs ``Z`` (M, Q):

* ``psi0_n = E[k(x_n, x_n)] = variance``;
* ``psi1_nm = E[k(x_n, z_m)] = variance prod_q (1 + alpha_q s_nq)^(-1/2)
  exp(-1/2 alpha_q (mu_nq - z_mq)^2 / (1 + alpha_q s_nq))``;
* ``psi2_nmm' = E[k(x_n, z_m) k(x_n, z_m')] = variance^2 prod_q (1 + 2 alpha_q s_nq)^(-1/2)
  exp(-alpha_q (z_mq - z_m'q)^2 / 4 - alpha_q (mu_nq - zbar_q)^2 / (1 + 2 alpha_q s_nq))``,
  ``zbar = (z_m + z_m') / 2``; returned per point (N, M, M), summed over points by the bound.

Everything is torch, differentiable in every argument, in the dtype of ``mu``.
"""

from __future__ import annotations

import torch

__all__ = ["psi0", "psi1", "psi2", "se_ard"]


def _check(variance: torch.Tensor, alpha: torch.Tensor, s: torch.Tensor | None = None) -> None:
    if torch.any(variance <= 0) or torch.any(alpha <= 0):
        raise ValueError("the SE-ARD kernel needs variance > 0 and every ARD precision alpha_q > 0")
    if s is not None and torch.any(s < 0):
        raise ValueError("latent variances must be >= 0")


def se_ard(a: torch.Tensor, b: torch.Tensor, variance: torch.Tensor, alpha: torch.Tensor) -> torch.Tensor:
    """K (len(a), len(b)) of the SE-ARD kernel."""
    _check(variance, alpha)
    d = (a[:, None, :] - b[None, :, :]) ** 2
    return variance * torch.exp(-0.5 * (d * alpha).sum(-1))


def psi0(mu: torch.Tensor, variance: torch.Tensor) -> torch.Tensor:
    """(N,) ``E[k(x_n, x_n)]``: the kernel's variance for every point."""
    return variance * torch.ones(mu.shape[0], dtype=mu.dtype, device=mu.device)


def psi1(
    mu: torch.Tensor, s: torch.Tensor, z: torch.Tensor, variance: torch.Tensor, alpha: torch.Tensor
) -> torch.Tensor:
    """(N, M) ``E[k(x_n, z_m)]`` for ``x_n ~ N(mu_n, diag(s_n))``."""
    _check(variance, alpha, s)
    denom = 1 + alpha * s  # (N, Q)
    d = (mu[:, None, :] - z[None, :, :]) ** 2  # (N, M, Q)
    log = -0.5 * (alpha * d / denom[:, None, :]).sum(-1) - 0.5 * torch.log(denom).sum(-1, keepdim=True)
    return variance * torch.exp(log)


def psi2(
    mu: torch.Tensor, s: torch.Tensor, z: torch.Tensor, variance: torch.Tensor, alpha: torch.Tensor
) -> torch.Tensor:
    """(N, M, M) ``E[k(x_n, z_m) k(x_n, z_m')]`` for ``x_n ~ N(mu_n, diag(s_n))``.

    With ``d_nmq = mu_nq - z_mq`` and ``c_nq = alpha_q / (1 + 2 alpha_q s_nq)``, the exponent's
    ``alpha_q (mu_nq - zbar_q)^2 / (1 + 2 alpha_q s_nq)`` is ``c_nq (d_nmq + d_nm'q)^2 / 4``: its sum over q splits
    into per-(n, m) terms and one batched product ``(d c) d^T``, so no (N, M, M, Q) tensor is built."""
    _check(variance, alpha, s)
    c = alpha / (1 + 2 * alpha * s)  # (N, Q)
    d = mu[:, None, :] - z[None, :, :]  # (N, M, Q)
    e = (d**2 * c[:, None, :]).sum(-1)  # (N, M)
    dc = d * c[:, None, :]
    if mu.shape[1] <= 4:  # a few latent dimensions: (N, M, M) products beat a batched matmul of inner size Q
        cross = sum(dc[:, :, q, None] * d[:, None, :, q] for q in range(mu.shape[1]))
    else:
        cross = torch.bmm(dc, d.transpose(1, 2))  # (N, M, M)
    zd = (((z[:, None, :] - z[None, :, :]) ** 2) * alpha).sum(-1)  # (M, M)
    log = (
        -0.25 * zd[None]
        - 0.25 * (e[:, :, None] + e[:, None, :] + 2 * cross)
        - 0.5 * torch.log(1 + 2 * alpha * s).sum(-1)[:, None, None]
    )
    return variance**2 * torch.exp(log)
