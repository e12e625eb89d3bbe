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
:func:`.elbo.structured_elbo` with ``samples`` draws of U per step), in three members. Conditioning the latents on
each draw of U is our construction of the paper's ``q(x_n | y_n, U)``: the reference ``maxtretiakov/gp_lvm_ssvi``
runs one persistent Adam on free latents shared by every draw (a new U per step), so its latents are not a function
of a draw, and its ``AmortizedEncoder`` is not used by its training code. Only the per-inducing-point encoder input
``[u_.m; z_m]`` follows the reference (its ``AmortizedEncoder``).

* ``InducingGPLVM`` (``ssvi_amort``, the method): the encoder reads, for every point, each inducing point's sampled
  outputs and input ``[u_.m; z_m]`` beside ``[y_n * o_n, o_n]`` (the reference's ``AmortizedEncoder`` input, whose
  output is one latent distribution per inducing point, (B, M, Q)); the M per-inducing-point distributions are
  pooled per point into one Gaussian by softmax weights that add a learned term to the kernel's locality around a
  location ``c_n`` the encoder predicts (our choice), so each point reads the draws of the inducing points near it.
  The pooled (mu_n, log s_n) then take ``inner_steps`` gradient-ascent steps on the point's bound given that draw
  of U (:func:`gradient_ascent`, step size ``inner_lr``);
* ``InducingGPLVM(depends_on_u=False)`` (``ssvi_indep``, the ablation without dependence on U): the same encoder
  reading zeros in place of U and the same inner steps on the point's bound with q(U) integrated (a different inner
  objective: it cannot see the draw), U sampled by the same estimator;
* ``SummaryGPLVM`` (``ssvi_summary``, the ablation of global conditioning): the encoder reads ``[y_n * o_n, o_n,
  s(U)]`` with ``s(U) = rho(mean_m psi([z_m; u_.m]))`` one DeepSets summary of the inducing set shared by every
  point, then the same inner steps given U as ``ssvi_amort``: it differs from it only in per-point against global
  conditioning of the encoder.

The inner steps are not differentiated through (the reference also holds its optimised latents fixed in the global
update): the encoder's gradient is the bound's at the refined latents (a straight-through shift), and q(U)'s
gradient leaves out U's path through the refinement, ``(d local_n / d latents) (d latents / d U)``. That term is
zero only where the inner steps reach a stationary point of each point's bound given U; a few steps do not, so
q(U)'s gradient is an approximation whose error shrinks as the steps converge (the steps shrink with the gradient).
The bound evaluated is exact for the family the procedure defines.
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

__all__ = [
    "InducingGPLVM", "MeanFieldGPLVM", "StructuredGPLVM", "SummaryGPLVM", "fit", "gradient_ascent", "precondition",
    "predictive_samples",
]  # fmt: skip


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
                 hidden: tuple[int, ...] = (256, 128, 64), inner_steps: int = 0, inner_lr: float = 0.5,
                 seed: int = 0):  # fmt: skip
        super().__init__(y, mask, latent_dim, inducing, amortized=True, hidden=hidden, seed=seed)
        if inner_steps < 0 or inner_lr <= 0:
            raise ValueError(f"need inner_steps >= 0 and inner_lr > 0, got {inner_steps}, {inner_lr}")
        self.samples = samples
        self.inner_steps, self.inner_lr = inner_steps, inner_lr
        self.generator = torch.Generator().manual_seed(seed)

    def encode(self, y: torch.Tensor, mask: torch.Tensor, u: torch.Tensor):
        """(mu, log s) of the encoder for the draw ``u``, before the inner steps."""
        raise NotImplementedError

    def inner_bound(self, y: torch.Tensor, mask: torch.Tensor, u: torch.Tensor) -> Callable:
        """The per-point objective of the inner steps: each point's bound given the draw ``u`` (hyperparameters
        and q(U) held)."""
        fixed = self._held()
        _, k_inv = inducing_inverse(fixed["z"], fixed["variance"], fixed["alpha"])
        return lambda m_, s_: local_bound_given_u(y, mask, m_, s_, u=u.detach(), k_inv=k_inv, **fixed)

    def _held(self) -> dict:
        return dict(z=self.z.detach(), variance=self.log_variance.exp().detach(),
                    alpha=self.log_alpha.exp().detach(), beta=self.log_beta.exp().detach())  # fmt: skip

    def latent_given_u(self, y: torch.Tensor, mask: torch.Tensor, u: torch.Tensor, inner_steps: int | None = None):
        """(mu, s) of ``q(x_n | y_n, U)`` for the draw ``u``: the encoder's output refined by ``inner_steps``
        (default the model's) gradient-ascent steps on :meth:`inner_bound`."""
        mu, log_s = self.encode(y, mask, u)
        log_s = log_s.clamp(-10, 5)
        steps = self.inner_steps if inner_steps is None else inner_steps
        if steps:
            held = self._held()
            scale = precondition(mask, held["variance"], held["alpha"], held["beta"])
            new_mu, new_log_s = gradient_ascent(self.inner_bound(y, mask, u), mu, log_s, steps, self.inner_lr, scale)
            # the refinement enters as a constant shift: the encoder's gradient is the bound's at the refined point
            mu, log_s = mu + (new_mu - mu).detach(), log_s + (new_log_s - log_s).detach()
        return mu, log_s.exp()

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
                 hidden: tuple[int, ...] = (256, 128, 64), summary: int = 16, inner_steps: int = 0,
                 inner_lr: float = 0.5, seed: int = 0):  # fmt: skip
        super().__init__(y, mask, latent_dim, inducing, samples=samples, hidden=hidden, inner_steps=inner_steps,
                         inner_lr=inner_lr, seed=seed)  # fmt: skip
        dim = y.shape[1]
        with torch.random.fork_rng(devices=[]):
            torch.manual_seed(seed + 1)
            self.psi_net = mlp(latent_dim + dim, hidden[-1:], summary)
            self.rho_net = nn.Sequential(nn.Linear(summary, summary), nn.Tanh())
            self.encoder = mlp(2 * dim + summary, hidden, 2 * latent_dim)
        for net in (self.psi_net, self.rho_net, self.encoder):
            net.to(y.dtype)

    def encode(self, y: torch.Tensor, mask: torch.Tensor, u: torch.Tensor):
        summary = self.rho_net(self.psi_net(torch.cat([self.z, u.T], 1)).mean(0))  # (summary,)
        inputs = [torch.where(mask, y, torch.zeros_like(y)), mask.to(y.dtype), summary.expand(len(y), -1)]
        mu, log_s = self.encoder(torch.cat(inputs, 1)).chunk(2, dim=1)
        return mu, log_s


class InducingEncoder(nn.Module):
    """The reference's ``AmortizedEncoder`` input: an observation branch on ``[y_n * o_n, o_n]`` and an
    inducing-point branch on ``[u_.m; z_m]``, combined per (point, inducing point) (a sum of the branches' linear
    outputs is a linear layer of their concatenation) into one latent offset and log variance per inducing point.
    Our pooling: a location head places each point at ``c_n`` (a linear map of the input, initialised to the PCA
    projection that initialises the free latents); the per-inducing-point outputs are pooled by softmax weights whose
    logits are a learned term minus ``1/2 sum_q alpha_q (c_nq - z_mq)^2`` (the kernel's own locality), so each point
    reads the draws of the inducing points near it; ``mu_n = c_n +`` the pooled offset."""

    def __init__(self, dim: int, latent_dim: int, hidden: tuple[int, ...], location: tuple | None = None):
        super().__init__()
        width = hidden[-1]
        self.latent_dim = latent_dim
        self.observation = mlp(2 * dim, hidden[:-1], width)
        self.locate = nn.Linear(2 * dim, latent_dim)
        if location is not None:  # (weight (Q, 2D), bias (Q,)): the PCA projection of the data
            with torch.no_grad():
                self.locate.weight.copy_(location[0])
                self.locate.bias.copy_(location[1])
        self.inducing = nn.Linear(dim + latent_dim, width)
        self.head = nn.Sequential(nn.ReLU(), nn.Linear(width, 2 * latent_dim + 1))

    def forward(self, y, mask, z, u, alpha):
        inputs = torch.cat([torch.where(mask, y, torch.zeros_like(y)), mask.to(y.dtype)], 1)
        centre = self.locate(inputs)  # (N, Q)
        out = self.head(self.observation(inputs)[:, None, :] + self.inducing(torch.cat([u.T, z], 1))[None])
        q = self.latent_dim
        near = -0.5 * (((centre[:, None, :] - z[None]) ** 2) * alpha).sum(-1)  # (N, M)
        weight = torch.softmax(out[..., -1] + near, dim=1)[..., None]  # (N, M, 1)
        return centre + (weight * out[..., :q]).sum(1), (weight * out[..., q : 2 * q]).sum(1)


def pca_location(y: torch.Tensor, mask: torch.Tensor, latent_dim: int) -> tuple[torch.Tensor, torch.Tensor]:
    """(weight (Q, 2D), bias (Q,)) of the linear map of ``[y_n * o_n, o_n]`` that gives the PCA latents of the
    mean-filled data (as :class:`MeanFieldGPLVM` initialises its free latents) for fully observed rows."""
    n, dim = y.shape
    means = torch.nanmean(torch.where(mask, y, torch.nan), 0)
    filled = torch.where(mask, y, means)
    centre = filled.mean(0)
    _, sing, vh = torch.linalg.svd(filled - centre, full_matrices=False)
    proj = vh[:latent_dim].T * (n**0.5 / sing[:latent_dim])  # (D, Q): x = (y - centre) proj
    weight = torch.cat([proj.T, torch.zeros(latent_dim, dim, dtype=y.dtype)], 1)
    return weight, -(centre @ proj)


def precondition(mask: torch.Tensor, variance: torch.Tensor, alpha: torch.Tensor, beta: torch.Tensor) -> torch.Tensor:
    """(N, Q) fixed step scale of the inner steps: ``1 / (1 + beta o_n variance alpha_q)``, ``o_n`` the point's
    observed entries: the inverse of a bound on the curvature of its likelihood term in ``x_nq`` (beta o_n times the
    SE kernel's squared slope scale variance alpha_q), so that one step size serves every noise level and point."""
    observed = mask.to(alpha.dtype).sum(1, keepdim=True)
    return 1 / (1 + beta * observed * variance * alpha)


def gradient_ascent(bound: Callable, mu: torch.Tensor, log_s: torch.Tensor, steps: int, lr: float,
                    scale: torch.Tensor | float = 1.0):  # fmt: skip
    """``steps`` plain gradient-ascent steps ``p += lr * scale * grad`` on ``bound(mu, s).sum()`` (a sum of
    per-point terms, so each point moves on its own term), on detached copies, with a fixed per-coordinate step
    scale (:func:`precondition`): each step is proportional to the gradient, so it shrinks near the optimum (unlike
    a fresh Adam, whose first step moves every coordinate by about ``lr`` whatever the gradient). Returns the refined
    (mu, log s), log s kept in [-10, 5]."""
    params = [mu.detach().clone().requires_grad_(), log_s.detach().clone().requires_grad_()]
    with torch.enable_grad():
        for _ in range(steps):
            grads = torch.autograd.grad(bound(params[0], params[1].exp()).sum(), params)
            with torch.no_grad():
                for p, g in zip(params, grads):
                    p.add_(lr * scale * g)
                params[1].clamp_(-10, 5)
    return params[0].detach(), params[1].detach()


class InducingGPLVM(StructuredGPLVM):
    """``ssvi_amort`` (``depends_on_u``) and ``ssvi_indep`` (not): module docstring."""

    def __init__(self, y: torch.Tensor, mask: torch.Tensor, latent_dim: int, inducing: int, samples: int = 2,
                 hidden: tuple[int, ...] = (256, 128, 64), inner_steps: int = 30, inner_lr: float = 0.5,
                 seed: int = 0, depends_on_u: bool = True):  # fmt: skip
        super().__init__(y, mask, latent_dim, inducing, samples=samples, hidden=hidden, inner_steps=inner_steps,
                         inner_lr=inner_lr, seed=seed)  # fmt: skip
        with torch.random.fork_rng(devices=[]):
            torch.manual_seed(seed + 1)
            location = pca_location(y, mask, latent_dim)
            self.encoder = InducingEncoder(y.shape[1], latent_dim, hidden, location).to(y.dtype)
        self.depends_on_u = depends_on_u

    def encode(self, y: torch.Tensor, mask: torch.Tensor, u: torch.Tensor):
        seen = u if self.depends_on_u else torch.zeros_like(u)
        return self.encoder(y, mask, self.z, seen, self.log_alpha.exp().detach())

    def inner_bound(self, y: torch.Tensor, mask: torch.Tensor, u: torch.Tensor) -> Callable:
        if self.depends_on_u:
            return super().inner_bound(y, mask, u)
        fixed = self._held()
        _, k_inv = inducing_inverse(fixed["z"], fixed["variance"], fixed["alpha"])
        m, chol = self.m.detach(), self.chol_s().detach()
        return lambda m_, s_: local_bound_integrated(y, mask, m_, s_, m=m, chol_s=chol, k_inv=k_inv, **fixed)


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
