r"""The mean-field Bayesian GPLVM of paper 17's baseline, with free or amortized q(X), fitted by the common loop.

* ``MeanFieldGPLVM(n, dim, latent_dim, inducing)``: ``q(x_n) = N(mu_n, diag(s_n))`` free per point (Titsias &
  Lawrence 2010), or, with ``amortized=True``, ``(mu_n, log s_n) = encoder([y_n * o_n, o_n])`` for the observed
  entries ``o_n`` (the reference's ``AmortizedEncoder`` without its inducing-point input: the mean-field amortized
  baseline);
* ``q(U)``: ``N(m_d, L_d L_d^T)`` per output, ``L_d`` lower triangular with an exponentiated diagonal;
* hyperparameters: the SE-ARD variance and precisions, the noise precision beta, the inducing inputs Z, all
  optimised in log space (Z free).

:func:`fit` maximises the bound of :mod:`.elbo` with Adam (:class:`neurips26.common.optim.Adam`) in
:func:`neurips26.common.loop.run_loop`. :meth:`MeanFieldGPLVM.predict_mean` is the predictive mean
``psi1_n K^-1 m_d`` of every entry, the imputation of the missing ones.

* ``StructuredGPLVM(..., depends_on_u=False)``: the ablation that feeds the encoder zeros in place of ``s(U)``: the
  amortized mean-field family fitted with the structured estimator (U sampled), which separates the cost of sampling
  U from the gain of depending on it;
* ``StructuredGPLVM``: the paper's family ``q(U) prod_n q(x_n | y_n, U)``: the encoder reads ``[y_n * o_n, o_n,
  s(U)]`` with ``s(U) = rho(mean_m psi([z_m; u_.m]))`` a permutation-invariant summary of the inducing set (DeepSets;
  the reference's ``AmortizedEncoder`` takes the inducing samples, Z and y); its bound is
  :func:`.elbo.structured_elbo` with ``samples`` draws of U per step.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import torch
from torch import nn

from neurips26.common import loop
from neurips26.common.optim import Adam

from .data import check_sizes
from .elbo import elbo_terms, inducing_covariance, structured_elbo
from .psi import psi1, se_ard

__all__ = ["MeanFieldGPLVM", "StructuredGPLVM", "fit", "predictive_samples"]


def mlp(inputs: int, hidden: tuple[int, ...], outputs: int) -> nn.Sequential:
    """The reference's ``AmortizedEncoder`` body: linear layers of widths ``hidden`` with ReLU (its dropout 0.1 is
    left out, so that a seed gives one encoder)."""
    layers, width = [], inputs
    for h in hidden:
        layers += [nn.Linear(width, h), nn.ReLU()]
        width = h
    return nn.Sequential(*layers, nn.Linear(width, outputs))


class MeanFieldGPLVM(nn.Module):
    def __init__(self, y: torch.Tensor, mask: torch.Tensor, latent_dim: int, inducing: int, amortized: bool = False,
                 hidden: tuple[int, ...] = (256, 128, 64), seed: int = 0):  # fmt: skip
        super().__init__()
        n, dim = y.shape
        check_sizes(latent_dim, inducing, n)
        g = torch.Generator().manual_seed(seed)
        dtype = y.dtype
        # PCA of the mean-filled data initialises the latents, as GPy and the reference do
        filled = torch.where(mask, y, torch.nanmean(torch.where(mask, y, torch.nan), 0))
        centred = filled - filled.mean(0)
        init = torch.linalg.svd(centred, full_matrices=False).U[:, :latent_dim] * n**0.5
        self.amortized = amortized
        if amortized:
            with torch.random.fork_rng(devices=[]):
                torch.manual_seed(seed)
                self.encoder = mlp(2 * dim, hidden, 2 * latent_dim)
            self.encoder.to(dtype)
        else:
            self.mu = nn.Parameter(init.clone())
            self.log_s = nn.Parameter(torch.full((n, latent_dim), -2.0, dtype=dtype))
        self.z = nn.Parameter(init[torch.randperm(n, generator=g)[:inducing]].clone())
        self.log_variance = nn.Parameter(torch.zeros((), dtype=dtype))
        self.log_alpha = nn.Parameter(torch.zeros(latent_dim, dtype=dtype))
        self.log_beta = nn.Parameter(torch.tensor(3.0, dtype=dtype))
        self.m = nn.Parameter(torch.zeros(dim, inducing, dtype=dtype))
        # q(U) starts tight (S = 0.01 I), as SVGP implementations initialise it: draws of U start near its mean
        self.l_raw = nn.Parameter(torch.diag_embed(torch.full((dim, inducing), math.log(0.1), dtype=dtype)))

    def latent(self, y: torch.Tensor, mask: torch.Tensor, rows: torch.Tensor | None = None):
        """(mu, s) of ``q(x_n)`` for the points ``y`` (the rows ``rows`` of the training set, where given)."""
        if not self.amortized:
            if rows is None:
                return self.mu, self.log_s.exp()
            return self.mu[rows], self.log_s[rows].exp()
        out = self.encoder(torch.cat([torch.where(mask, y, torch.zeros_like(y)), mask.to(y.dtype)], 1))
        mu, log_s = out.chunk(2, dim=1)
        return mu, log_s.clamp(-10, 5).exp()

    def chol_s(self) -> torch.Tensor:
        lower = torch.tril(self.l_raw, -1)
        return lower + torch.diag_embed(torch.diagonal(self.l_raw, dim1=-2, dim2=-1).exp())

    def objective(self, y: torch.Tensor, mask: torch.Tensor, rows: torch.Tensor | None = None,
                  scale: float = 1.0) -> torch.Tensor:  # fmt: skip
        """The bound for the training points ``y`` (or the minibatch ``rows`` of them, its per-point terms scaled
        by ``scale`` = N / B, an unbiased estimate)."""
        if rows is not None:
            y, mask = y[rows], mask[rows]
        terms = self.elbo(y, mask, rows)
        return scale * (terms["likelihood"] - terms["kl_x"]) - terms["kl_u"]

    def elbo(self, y: torch.Tensor, mask: torch.Tensor, rows: torch.Tensor | None = None) -> dict:
        mu, s = self.latent(y, mask, rows)
        return elbo_terms(y, mask, mu, s, self.z, self.m, self.chol_s(), self.log_variance.exp(),
                          self.log_alpha.exp(), self.log_beta.exp())  # fmt: skip

    @torch.no_grad()
    def predict_mean(self, y: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        mu, s = self.latent(y, mask)
        var, alpha = self.log_variance.exp(), self.log_alpha.exp()
        k = inducing_covariance(self.z, var, alpha)
        return psi1(mu, s, self.z, var, alpha) @ torch.linalg.solve(k, self.m.T)


def fit(
    model: MeanFieldGPLVM,
    y: torch.Tensor,
    mask: torch.Tensor,
    steps: int,
    lr: float,
    loop_settings: loop.LoopSettings | None = None,
    log: Callable[[str], None] | None = None,
    batch: int | None = None,
    seed: int = 0,
) -> list[float]:
    """Maximise the bound for ``steps`` Adam steps, on the whole training set or on minibatches of ``batch``
    points (drawn without replacement by a seeded generator); returns the bound (or its minibatch estimate) at
    every step (its negative is the loss)."""
    n = len(y)
    if batch is not None and not 1 <= batch <= n:
        raise ValueError(f"batch must be in [1, {n}] (the number of training points), got {batch}")
    optimiser = Adam(model.parameters(), lr)
    trace: list[float] = []
    rows_gen = torch.Generator().manual_seed(seed)

    def step_fn(step: int) -> torch.Tensor:
        if batch is None or batch == n:
            loss = -model.objective(y, mask)
        else:
            rows = torch.randperm(n, generator=rows_gen)[:batch].to(y.device)
            loss = -model.objective(y, mask, rows, n / batch)
        for p in model.parameters():
            p.grad = None
        loss.backward()
        optimiser.step()
        trace.append(-float(loss.detach()))
        if log and (step + 1) % max(1, steps // 5) == 0:
            log(f"step {step + 1}: ELBO {trace[-1]:.2f}")
        return loss

    state = {"model": model, "optimiser": optimiser, "trace": trace, "rows": rows_gen}
    if getattr(model, "generator", None) is not None:
        state["generator"] = model.generator  # the draws of U, so that a resumed run draws the same ones
    loop.run_loop(step_fn, steps, state, loop_settings)
    return trace


class StructuredGPLVM(MeanFieldGPLVM):
    """The amortized structured family (module docstring); ``samples`` draws of U per evaluation of the bound."""

    def __init__(self, y: torch.Tensor, mask: torch.Tensor, latent_dim: int, inducing: int, samples: int = 2,
                 hidden: tuple[int, ...] = (256, 128, 64), summary: int = 16, seed: int = 0,
                 depends_on_u: bool = True):  # fmt: skip
        super().__init__(y, mask, latent_dim, inducing, amortized=True, hidden=hidden, seed=seed)
        dim = y.shape[1]
        with torch.random.fork_rng(devices=[]):
            torch.manual_seed(seed + 1)
            self.psi_net = mlp(latent_dim + dim, hidden[-1:], summary)
            self.rho_net = nn.Sequential(nn.Linear(summary, summary), nn.Tanh())
            self.encoder = mlp(2 * dim + summary, hidden, 2 * latent_dim)
        for net in (self.psi_net, self.rho_net, self.encoder):
            net.to(y.dtype)
        self.samples = samples
        self.depends_on_u = depends_on_u
        self.generator = torch.Generator().manual_seed(seed)

    def latent_given_u(self, y: torch.Tensor, mask: torch.Tensor, u: torch.Tensor):
        summary = self.rho_net(self.psi_net(torch.cat([self.z, u.T], 1)).mean(0))  # (summary,)
        if not self.depends_on_u:  # the ablation: the same networks and sampled U, the encoder reading no summary
            summary = torch.zeros_like(summary)
        inputs = [torch.where(mask, y, torch.zeros_like(y)), mask.to(y.dtype), summary.expand(len(y), -1)]
        mu, log_s = self.encoder(torch.cat(inputs, 1)).chunk(2, dim=1)
        return mu, log_s.clamp(-10, 5).exp()

    def latent(self, y: torch.Tensor, mask: torch.Tensor, rows: torch.Tensor | None = None):
        """The latents at U = the mean of q(U) (for the latent plots)."""
        return self.latent_given_u(y, mask, self.m)

    def objective(self, y: torch.Tensor, mask: torch.Tensor, rows: torch.Tensor | None = None,
                  scale: float = 1.0, samples: int | None = None) -> torch.Tensor:  # fmt: skip
        if rows is not None:
            y, mask = y[rows], mask[rows]
        return structured_elbo(y, mask, lambda u: self.latent_given_u(y, mask, u), self.z, self.m, self.chol_s(),
                               self.log_variance.exp(), self.log_alpha.exp(), self.log_beta.exp(),
                               samples or self.samples, self.generator, scale)  # fmt: skip


@torch.no_grad()
def predictive_samples(model: MeanFieldGPLVM, y: torch.Tensor, mask: torch.Tensor, samples: int,
                       generator: torch.Generator, latents: tuple[torch.Tensor, torch.Tensor] | None = None
                       ) -> tuple[torch.Tensor, torch.Tensor]:  # fmt: skip
    """Means and variances (samples, N, D) of the Gaussians whose equal-weight mixture is the predictive of every
    entry: per draw ``x_n ~ q(x_n)`` (structured: ``U ~ q(U)``, then ``x_n ~ q(x_n | y_n, U)``), the GP given x_n:
    mean ``a_n^T u_d`` and variance ``k_nn - a_n^T k_n + 1/beta`` (with ``u_d`` drawn), or, mean-field, mean
    ``a_n^T m_d`` and variance ``a_n^T S_d a_n + k_nn - a_n^T k_n + 1/beta`` (q(U) integrated). ``latents``
    (mu, s) replace a free mean-field model's own (those inferred for held-out points)."""
    var, alpha, beta = model.log_variance.exp(), model.log_alpha.exp(), model.log_beta.exp()
    k = inducing_covariance(model.z, var, alpha)
    chol = model.chol_s()
    means, variances = [], []
    for _ in range(samples):
        if isinstance(model, StructuredGPLVM):
            eps = torch.randn(model.m.shape, dtype=y.dtype, generator=generator).to(y.device)
            u = model.m + torch.einsum("dij,dj->di", chol, eps)
            mu, s = model.latent_given_u(y, mask, u)
        else:
            u = None
            mu, s = latents if latents is not None else model.latent(y, mask)
        x = mu + s.sqrt() * torch.randn(mu.shape, dtype=y.dtype, generator=generator).to(y.device)
        kxz = se_ard(x, model.z, var, alpha)  # (N, M)
        a = torch.linalg.solve(k, kxz.T).T  # (N, M)
        base = var - (a * kxz).sum(1, keepdim=True) + 1 / beta  # (N, 1)
        if u is not None:
            means.append(a @ u.T)
            variances.append(base.expand(-1, y.shape[1]))
        else:
            la = torch.einsum("nm,dmk->ndk", a, chol)  # a^T L_d
            means.append(a @ model.m.T)
            variances.append(base + (la**2).sum(-1))
    return torch.stack(means), torch.stack(variances)
