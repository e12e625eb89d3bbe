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

The structured family ``q(U) prod_n q(x_n | y_n, U)`` (:class:`StructuredGPLVM`, bound
:func:`.elbo.structured_elbo` with ``samples`` draws of U per step), in three members:

* ``InducingGPLVM`` (``ssvi_amort``, the paper's method as the reference ``maxtretiakov/gp_lvm_ssvi`` builds it):
  the encoder reads, for every point, each inducing point's sampled outputs and input ``[u_.m; z_m]`` beside
  ``[y_n * o_n, o_n]`` (the reference's ``AmortizedEncoder``, whose output is one latent distribution per inducing
  point, (B, M, Q)); the M per-inducing-point distributions are pooled per point by learned softmax weights into
  one Gaussian, so each point weighs the inducing points near it. The pooled (mu_n, log s_n) then take
  ``inner_steps`` Adam steps on the point's bound given that draw of U (the reference's inner loop,
  ``optimize_latents`` over ``local_step``): the local latents are conditioned on each sample of U;
* ``InducingGPLVM(depends_on_u=False)`` (``ssvi_indep``, the ablation without dependence on U): the same encoder
  reading zeros in place of U and the same inner steps on the point's bound with q(U) integrated, U sampled by the
  same estimator;
* ``SummaryGPLVM`` (``ssvi_summary``, the ablation of the first version): the encoder reads ``[y_n * o_n, o_n,
  s(U)]`` with ``s(U) = rho(mean_m psi([z_m; u_.m]))`` one DeepSets summary of the inducing set shared by every
  point, and no inner steps.

The inner steps are not differentiated through (the reference optimises its local latents, then updates the
global parameters with them held): the encoder's gradient is the bound's at the refined latents, and the path of U
through the refinement is left out of q(U)'s gradient (zero at a local optimum of the latents). The bound itself
is exact for the family the procedure defines.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import torch
from torch import nn

from neurips26.common import loop
from neurips26.common.optim import Adam

from .data import check_sizes
from .elbo import (
    draw_u,
    elbo_terms,
    inducing_covariance,
    inducing_inverse,
    local_bound_given_u,
    local_bound_integrated,
    structured_elbo,
)
from .psi import psi1, se_ard

__all__ = ["InducingGPLVM", "MeanFieldGPLVM", "StructuredGPLVM", "SummaryGPLVM", "fit", "predictive_samples"]


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
    """The structured family ``q(U) prod_n q(x_n | y_n, U)`` (module docstring), amortized; ``samples`` draws of U
    per evaluation of the bound. A member defines :meth:`latent_given_u`."""

    def __init__(self, y: torch.Tensor, mask: torch.Tensor, latent_dim: int, inducing: int, samples: int = 2,
                 hidden: tuple[int, ...] = (256, 128, 64), seed: int = 0):  # fmt: skip
        super().__init__(y, mask, latent_dim, inducing, amortized=True, hidden=hidden, seed=seed)
        self.samples = samples
        self.generator = torch.Generator().manual_seed(seed)

    def latent_given_u(self, y: torch.Tensor, mask: torch.Tensor, u: torch.Tensor):
        raise NotImplementedError

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


class SummaryGPLVM(StructuredGPLVM):
    """``ssvi_summary``: the encoder reads one DeepSets summary ``s(U)`` of the inducing set, shared by every
    point (module docstring)."""

    def __init__(self, y: torch.Tensor, mask: torch.Tensor, latent_dim: int, inducing: int, samples: int = 2,
                 hidden: tuple[int, ...] = (256, 128, 64), summary: int = 16, seed: int = 0):  # fmt: skip
        super().__init__(y, mask, latent_dim, inducing, samples=samples, hidden=hidden, seed=seed)
        dim = y.shape[1]
        with torch.random.fork_rng(devices=[]):
            torch.manual_seed(seed + 1)
            self.psi_net = mlp(latent_dim + dim, hidden[-1:], summary)
            self.rho_net = nn.Sequential(nn.Linear(summary, summary), nn.Tanh())
            self.encoder = mlp(2 * dim + summary, hidden, 2 * latent_dim)
        for net in (self.psi_net, self.rho_net, self.encoder):
            net.to(y.dtype)

    def latent_given_u(self, y: torch.Tensor, mask: torch.Tensor, u: torch.Tensor):
        summary = self.rho_net(self.psi_net(torch.cat([self.z, u.T], 1)).mean(0))  # (summary,)
        inputs = [torch.where(mask, y, torch.zeros_like(y)), mask.to(y.dtype), summary.expand(len(y), -1)]
        mu, log_s = self.encoder(torch.cat(inputs, 1)).chunk(2, dim=1)
        return mu, log_s.clamp(-10, 5).exp()


class InducingEncoder(nn.Module):
    """The reference's ``AmortizedEncoder`` input: an observation branch on ``[y_n * o_n, o_n]`` and an
    inducing-point branch on ``[u_.m; z_m]``, combined per (point, inducing point) (a sum of the branches' linear
    outputs is a linear layer of their concatenation) into one latent Gaussian per inducing point, pooled per point
    by softmax weights over the inducing points into (mu_n, log s_n)."""

    def __init__(self, dim: int, latent_dim: int, hidden: tuple[int, ...]):
        super().__init__()
        width = hidden[-1]
        self.latent_dim = latent_dim
        self.observation = mlp(2 * dim, hidden[:-1], width)
        self.inducing = nn.Linear(dim + latent_dim, width)
        self.head = nn.Sequential(nn.ReLU(), nn.Linear(width, 2 * latent_dim + 1))

    def forward(self, y, mask, z, u):
        obs = self.observation(torch.cat([torch.where(mask, y, torch.zeros_like(y)), mask.to(y.dtype)], 1))
        out = self.head(obs[:, None, :] + self.inducing(torch.cat([u.T, z], 1))[None])  # (N, M, 2Q + 1)
        q = self.latent_dim
        weight = torch.softmax(out[..., -1], dim=1)[..., None]  # (N, M, 1)
        return (weight * out[..., :q]).sum(1), (weight * out[..., q : 2 * q]).sum(1)


def adam_ascent(bound: Callable, mu: torch.Tensor, log_s: torch.Tensor, steps: int, lr: float,
                betas: tuple[float, float] = (0.9, 0.999), eps: float = 1e-8):  # fmt: skip
    """``steps`` Adam steps from a fresh state that raise ``bound(mu, s).sum()`` (a sum of per-point terms, so each
    point moves on its own term), on detached copies; returns the refined (mu, log s), log s kept in [-10, 5]."""
    params = [mu.detach().clone().requires_grad_(), log_s.detach().clone().requires_grad_()]
    first = [torch.zeros_like(p) for p in params]
    second = [torch.zeros_like(p) for p in params]
    with torch.enable_grad():
        for t in range(1, steps + 1):
            grads = torch.autograd.grad(bound(params[0], params[1].exp()).sum(), params)
            with torch.no_grad():
                for p, g, m1, m2 in zip(params, grads, first, second):
                    m1.mul_(betas[0]).add_((1 - betas[0]) * g)
                    m2.mul_(betas[1]).add_((1 - betas[1]) * g**2)
                    p.add_(lr * (m1 / (1 - betas[0] ** t)) / ((m2 / (1 - betas[1] ** t)).sqrt() + eps))
                params[1].clamp_(-10, 5)
    return params[0].detach(), params[1].detach()


class InducingGPLVM(StructuredGPLVM):
    """``ssvi_amort`` (``depends_on_u``) and ``ssvi_indep`` (not): module docstring."""

    def __init__(self, y: torch.Tensor, mask: torch.Tensor, latent_dim: int, inducing: int, samples: int = 2,
                 hidden: tuple[int, ...] = (256, 128, 64), inner_steps: int = 30, inner_lr: float = 1e-3,
                 seed: int = 0, depends_on_u: bool = True):  # fmt: skip
        super().__init__(y, mask, latent_dim, inducing, samples=samples, hidden=hidden, seed=seed)
        if inner_steps < 0 or inner_lr <= 0:
            raise ValueError(f"need inner_steps >= 0 and inner_lr > 0, got {inner_steps}, {inner_lr}")
        with torch.random.fork_rng(devices=[]):
            torch.manual_seed(seed + 1)
            self.encoder = InducingEncoder(y.shape[1], latent_dim, hidden).to(y.dtype)
        self.inner_steps, self.inner_lr, self.depends_on_u = inner_steps, inner_lr, depends_on_u

    def latent_given_u(self, y: torch.Tensor, mask: torch.Tensor, u: torch.Tensor):
        seen = u if self.depends_on_u else torch.zeros_like(u)
        mu, log_s = self.encoder(y, mask, self.z, seen)
        log_s = log_s.clamp(-10, 5)
        if self.inner_steps:
            fixed = dict(z=self.z.detach(), variance=self.log_variance.exp().detach(),
                         alpha=self.log_alpha.exp().detach(), beta=self.log_beta.exp().detach())  # fmt: skip
            _, k_inv = inducing_inverse(fixed["z"], fixed["variance"], fixed["alpha"])
            if self.depends_on_u:

                def bound(m_, s_):
                    return local_bound_given_u(y, mask, m_, s_, u=u.detach(), k_inv=k_inv, **fixed)
            else:
                m, chol = self.m.detach(), self.chol_s().detach()

                def bound(m_, s_):
                    return local_bound_integrated(y, mask, m_, s_, m=m, chol_s=chol, k_inv=k_inv, **fixed)

            new_mu, new_log_s = adam_ascent(bound, mu, log_s, self.inner_steps, self.inner_lr)
            # the refinement enters as a constant shift: the encoder's gradient is the bound's at the refined point
            mu, log_s = mu + (new_mu - mu).detach(), log_s + (new_log_s - log_s).detach()
        return mu, log_s.exp()


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
            u = draw_u(model.m, chol, generator)
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
